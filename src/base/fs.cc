#include "base/fs.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>

#include "base/error.h"

namespace pg {

namespace fsys = std::filesystem;

namespace {

std::string errno_text() { return std::strerror(errno); }

}  // namespace

std::shared_ptr<MappedFile> MappedFile::open(const std::string& path) {
    // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below anyway.
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) throw Error(ErrorKind::kIo, "cannot open '" + path + "': " + errno_text());
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        ::close(fd);
        throw Error(ErrorKind::kIo, "cannot stat '" + path + "': " + errno_text());
    }
    if (!S_ISREG(st.st_mode)) {
        ::close(fd);
        const char* what = S_ISDIR(st.st_mode) ? "a directory" : "not a regular file";
        throw Error(ErrorKind::kIo, "'" + path + "' is " + what + ", expected a file");
    }
    std::shared_ptr<MappedFile> f(new MappedFile());
    f->path_ = path;
    f->size_ = static_cast<uint64_t>(st.st_size);
    if (f->size_ > 0) {
        void* p = ::mmap(nullptr, f->size_, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p != MAP_FAILED) {
            f->data_ = static_cast<const uint8_t*>(p);
            f->mapped_ = true;
        } else {  // e.g. a pipe-like file system: read it instead
            f->owned_.reset(new uint8_t[f->size_]);
            uint64_t done = 0;
            while (done < f->size_) {
                ssize_t n = ::read(fd, f->owned_.get() + done, f->size_ - done);
                if (n <= 0) {
                    ::close(fd);
                    throw Error(ErrorKind::kIo, "cannot read '" + path + "': " + errno_text());
                }
                done += static_cast<uint64_t>(n);
            }
            f->data_ = f->owned_.get();
        }
    }
    ::close(fd);
    return f;
}

MappedFile::~MappedFile() {
    if (mapped_ && data_) ::munmap(const_cast<uint8_t*>(data_), size_);
}

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
    const fsys::path p(path_);
    if (p.has_parent_path()) {
        std::error_code ec;
        fsys::create_directories(p.parent_path(), ec);
        if (ec) throw Error(ErrorKind::kIo, "cannot create folder '" + p.parent_path().string() + "': " + ec.message());
    }
    if (is_directory(path_)) throw Error(ErrorKind::kIo, "cannot write '" + path_ + "': it is a directory");
    std::random_device rd;
    tmp_path_ = path_ + ".tmp" + std::to_string(::getpid()) + "_" + std::to_string(rd() % 1000000);
    fd_ = ::open(tmp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd_ < 0) throw Error(ErrorKind::kIo, "cannot create '" + tmp_path_ + "': " + errno_text());
}

AtomicFile::~AtomicFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(tmp_path_.c_str());
}

void AtomicFile::write(const void* data, size_t size) {
    const auto* p = static_cast<const uint8_t*>(data);
    while (size > 0) {
        ssize_t n = ::write(fd_, p, size);
        if (n < 0) {
            if (errno == EINTR) continue;
            throw Error(ErrorKind::kIo, "cannot write '" + path_ + "': " + errno_text());
        }
        p += n;
        size -= static_cast<size_t>(n);
        written_ += static_cast<uint64_t>(n);
    }
}

void AtomicFile::commit() {
    if (::close(fd_) != 0) {
        fd_ = -1;
        throw Error(ErrorKind::kIo, "cannot write '" + path_ + "': " + errno_text());
    }
    fd_ = -1;
    if (::rename(tmp_path_.c_str(), path_.c_str()) != 0)
        throw Error(ErrorKind::kIo, "cannot rename '" + tmp_path_ + "' to '" + path_ + "': " + errno_text());
    committed_ = true;
}

void write_file_atomic(const std::string& path, const std::string& contents) {
    AtomicFile f(path);
    f.write(contents);
    f.commit();
}

std::string read_file(const std::string& path) {
    auto m = MappedFile::open(path);
    return std::string(reinterpret_cast<const char*>(m->data()), m->size());
}

std::string resolve_inside(const std::string& base_dir, const std::string& relative,
                           const std::string& what) {
    const fsys::path rel(relative);
    if (relative.empty()) throw Error(ErrorKind::kInvalidInput, what + ": empty location");
    if (relative.find('\0') != std::string::npos)
        throw Error(ErrorKind::kInvalidInput, what + ": location contains a NUL byte");
    if (rel.is_absolute())
        throw Error(ErrorKind::kInvalidInput,
                    what + ": location '" + relative + "' is an absolute path; external data must be "
                    "given relative to the model's folder");
    int depth = 0;
    for (const auto& part : rel) {
        if (part == "..") --depth;
        else if (part != "." && !part.empty()) ++depth;
        if (depth < 0)
            throw Error(ErrorKind::kInvalidInput,
                        what + ": location '" + relative + "' leaves the model's folder");
    }
    const fsys::path joined = fsys::path(base_dir) / rel;
    std::error_code ec;
    const fsys::path base_real = fsys::weakly_canonical(fsys::path(base_dir), ec);
    if (ec) throw Error(ErrorKind::kIo, what + ": cannot resolve folder '" + base_dir + "': " + ec.message());
    const fsys::path real = fsys::weakly_canonical(joined, ec);
    if (ec) throw Error(ErrorKind::kIo, what + ": cannot resolve '" + joined.string() + "': " + ec.message());
    auto b = base_real.begin();
    auto r = real.begin();
    for (; b != base_real.end(); ++b, ++r) {
        if (r == real.end() || *b != *r)
            throw Error(ErrorKind::kInvalidInput,
                        what + ": location '" + relative + "' resolves to '" + real.string() +
                            "', outside the model's folder (a symlink?)");
    }
    return joined.string();
}

std::string parent_dir(const std::string& path) {
    fsys::path p(path);
    return p.has_parent_path() ? p.parent_path().string() : std::string(".");
}

bool is_directory(const std::string& path) {
    std::error_code ec;
    return fsys::is_directory(path, ec);
}

std::string base_name(const std::string& path) { return fsys::path(path).filename().string(); }

}  // namespace pg
