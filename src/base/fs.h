// File-system helpers with hostile input in mind: read-only mappings of whole files, writes that
// land atomically (temporary name, then rename), and resolution of relative paths that must stay
// inside a base folder (external data). Every failure is a pg::Error naming the path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace pg {

// A read-only view of a whole file: mmap'ed when possible, read into memory otherwise.
class MappedFile {
public:
    // Opens and maps `path`. Throws kIo for missing / unreadable files and directories.
    static std::shared_ptr<MappedFile> open(const std::string& path);
    ~MappedFile();
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    const uint8_t* data() const { return data_; }
    uint64_t size() const { return size_; }
    const std::string& path() const { return path_; }

private:
    MappedFile() = default;
    std::string path_;
    const uint8_t* data_ = nullptr;
    uint64_t size_ = 0;
    bool mapped_ = false;
    std::unique_ptr<uint8_t[]> owned_;
};

// Writes a file under a temporary name in the same folder; commit() renames it into place.
// Destroying an uncommitted AtomicFile removes the temporary, so no half-written file remains.
class AtomicFile {
public:
    // Creates the temporary file (and the parent folders). Throws kIo.
    explicit AtomicFile(std::string path);
    ~AtomicFile();
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;

    void write(const void* data, size_t size);
    void write(const std::string& s) { write(s.data(), s.size()); }
    // Bytes written so far.
    uint64_t size() const { return written_; }
    // Flushes, closes and renames over the final path. Throws kIo.
    void commit();
    const std::string& path() const { return path_; }

private:
    std::string path_;
    std::string tmp_path_;
    int fd_ = -1;
    uint64_t written_ = 0;
    bool committed_ = false;
};

// Writes `contents` to `path` atomically.
void write_file_atomic(const std::string& path, const std::string& contents);

// Reads a whole file (regular files only; kIo otherwise).
std::string read_file(const std::string& path);

// Resolves `relative` against `base_dir` and returns the path, refusing anything that escapes
// base_dir: absolute paths, ".." components that climb out, and symlinks whose target lies
// outside. `what` names the referrer in messages. Throws kInvalidInput.
std::string resolve_inside(const std::string& base_dir, const std::string& relative,
                           const std::string& what);

// The folder part of a path ("." when there is none).
std::string parent_dir(const std::string& path);
// True if `path` exists and is a directory.
bool is_directory(const std::string& path);
// File name without folders.
std::string base_name(const std::string& path);

}  // namespace pg
