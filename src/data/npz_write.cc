// Writing .npz archives with stored members, as numpy.savez does: see npz.h.
#include <zlib.h>

#include "base/error.h"
#include "base/fs.h"
#include "data/npy.h"
#include "data/npz.h"

namespace pg::data {

namespace {

void put(std::string& out, uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

// Fields shared by the local header and the central directory entry (from "version needed").
std::string common_fields(uint32_t crc, uint64_t size, const std::string& name) {
    std::string s;
    put(s, 20, 2);    // version needed
    put(s, 0, 2);     // flags
    put(s, 0, 2);     // method: stored
    put(s, 0, 2);     // time 00:00:00
    put(s, 0x21, 2);  // date 1980-01-01
    put(s, crc, 4);
    put(s, size, 4);  // compressed
    put(s, size, 4);  // uncompressed
    put(s, name.size(), 2);
    put(s, 0, 2);  // extra length
    return s;
}

std::string central_entry(uint32_t crc, uint64_t size, const std::string& name, uint64_t offset) {
    std::string s;
    put(s, 0x02014b50, 4);
    put(s, 20, 2);  // version made by
    s += common_fields(crc, size, name);
    put(s, 0, 2);            // comment length
    put(s, 0, 2);            // disk
    put(s, 0, 2);            // internal attributes
    put(s, 0x81800000u, 4);  // external attributes: a regular file, rw-------
    put(s, offset, 4);
    return s + name;
}

std::string end_record(uint64_t count, uint64_t dir_size, uint64_t dir_offset) {
    std::string s;
    put(s, 0x06054b50, 4);
    put(s, 0, 4);  // disk numbers
    put(s, count, 2);
    put(s, count, 2);
    put(s, dir_size, 4);
    put(s, dir_offset, 4);
    put(s, 0, 2);  // comment length
    return s;
}

}  // namespace

void save_npz(const std::string& path, const runners::NamedTensors& arrays) {
    if (arrays.size() > 0xFFFF) throw Error(ErrorKind::kUnsupported, "too many arrays for .npz");
    AtomicFile f(path);
    std::string directory;
    for (const auto& [key, t] : arrays) {
        const std::string npy = npy_encode(numpy_compatible(t, key));
        const std::string name = key + ".npy";
        if (npy.size() > 0xFFFFFFFEull || f.size() > 0xFFFFFFFEull - npy.size()) {
            throw Error(ErrorKind::kUnsupported,
                        "'" + path +
                            "': .npz files over 4 GiB (ZIP64) "
                            "are not written yet; use .json or split the data");
        }
        const uint32_t crc = static_cast<uint32_t>(crc32(crc32(0L, Z_NULL, 0),
                                                         reinterpret_cast<const Bytef*>(npy.data()),
                                                         static_cast<uInt>(npy.size())));
        directory += central_entry(crc, npy.size(), name, f.size());
        std::string local;
        put(local, 0x04034b50, 4);
        f.write(local + common_fields(crc, npy.size(), name) + name);
        f.write(npy);
    }
    const uint64_t dir_offset = f.size();
    f.write(directory);
    f.write(end_record(arrays.size(), directory.size(), dir_offset));
    f.commit();
}

}  // namespace pg::data
