// Reading .npz archives with every directory field checked: see npz.h.
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "base/error.h"
#include "base/fs.h"
#include "data/npy.h"
#include "data/npz.h"

namespace pg::data {

namespace {

[[noreturn]] void bad(const std::string& what, const std::string& why) {
    throw Error(ErrorKind::kInvalidInput, "'" + what + "' is not a valid .npz archive: " + why);
}

uint64_t le(const uint8_t* p, int n) {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
    return v;
}

// A bounds-checked view of the archive bytes.
struct Archive {
    const uint8_t* data;
    uint64_t size;
    const std::string& what;
    const uint8_t* at(uint64_t off, uint64_t len) const {
        if (off > size || len > size - off) bad(what, "a record points past the end of the file");
        return data + off;
    }
};

struct Entry {
    std::string name;
    uint16_t method = 0, flags = 0;
    uint32_t crc = 0;
    uint64_t csize = 0, usize = 0, offset = 0;
};

struct Directory {
    uint64_t entries = 0, size = 0, offset = 0;
};

Directory find_directory(const Archive& a) {
    if (a.size < 22) bad(a.what, "too short");
    const uint64_t lowest = a.size > 22 + 65535 ? a.size - 22 - 65535 : 0;
    for (uint64_t off = a.size - 22 + 1; off-- > lowest;) {
        const uint8_t* p = a.data + off;
        if (le(p, 4) != 0x06054b50) continue;
        Directory d{le(p + 10, 2), le(p + 12, 4), le(p + 16, 4)};
        if (off >= 20 && le(a.data + off - 20, 4) == 0x07064b50) {  // ZIP64 locator
            const uint8_t* z = a.at(le(a.data + off - 20 + 8, 8), 56);
            if (le(z, 4) != 0x06064b50) bad(a.what, "broken ZIP64 end record");
            d = Directory{le(z + 32, 8), le(z + 40, 8), le(z + 48, 8)};
        }
        a.at(d.offset, d.size);
        return d;
    }
    bad(a.what, "no end-of-central-directory record");
}

// ZIP64 extra field (id 1): 64-bit values for the fields stored as 0xFFFFFFFF, in order.
void apply_zip64_extra(Entry& e, const uint8_t* p, uint64_t n, const std::string& what) {
    for (uint64_t i = 0; i + 4 <= n;) {
        const uint64_t id = le(p + i, 2), len = le(p + i + 2, 2);
        if (i + 4 + len > n) bad(what, "broken extra field");
        const uint8_t* q = p + i + 4;
        uint64_t used = 0;
        for (uint64_t* f : {&e.usize, &e.csize, &e.offset}) {
            if (id != 1 || *f != 0xFFFFFFFFu) continue;
            if (used + 8 > len) bad(what, "broken ZIP64 extra field");
            *f = le(q + used, 8), used += 8;
        }
        i += 4 + len;
    }
}

std::vector<Entry> read_entries(const Archive& a, const Directory& d) {
    std::vector<Entry> out;
    uint64_t off = d.offset;
    const uint64_t end = d.offset + d.size;
    for (uint64_t k = 0; k < d.entries; ++k) {
        if (off + 46 > end) bad(a.what, "central directory is shorter than its entry count");
        const uint8_t* p = a.at(off, 46);
        if (le(p, 4) != 0x02014b50) bad(a.what, "bad central directory entry");
        Entry e;
        e.flags = le(p + 8, 2), e.method = le(p + 10, 2), e.crc = le(p + 16, 4);
        e.csize = le(p + 20, 4), e.usize = le(p + 24, 4), e.offset = le(p + 42, 4);
        const uint64_t n = le(p + 28, 2), x = le(p + 30, 2), c = le(p + 32, 2);
        e.name.assign(reinterpret_cast<const char*>(a.at(off + 46, n)), n);
        apply_zip64_extra(e, a.at(off + 46 + n, x), x, a.what);
        out.push_back(std::move(e));
        off += 46 + n + x + c;
    }
    return out;
}

std::shared_ptr<std::string> inflate_member(const Archive& a, const Entry& e, const uint8_t* src) {
    if (e.usize > e.csize * 1032 + 1024)
        bad(a.what, "member '" + e.name + "' claims an absurd size");
    auto out = std::make_shared<std::string>(e.usize, '\0');
    z_stream zs{};
    if (inflateInit2(&zs, -MAX_WBITS) != Z_OK)
        throw Error(ErrorKind::kInternal, "zlib init failed");
    zs.next_in = const_cast<Bytef*>(src);
    zs.avail_in = static_cast<uInt>(e.csize);
    zs.next_out = reinterpret_cast<Bytef*>(out->data());
    zs.avail_out = static_cast<uInt>(e.usize);
    const int rc = inflate(&zs, Z_FINISH);
    const uint64_t produced = zs.total_out;
    inflateEnd(&zs);
    if (rc != Z_STREAM_END || produced != e.usize)
        bad(a.what, "member '" + e.name + "' does not inflate");
    return out;
}

// The member's bytes: a view of the archive when stored, an inflated copy otherwise.
std::pair<const uint8_t*, std::shared_ptr<const void>> member_bytes(
    const Archive& a, const Entry& e, std::shared_ptr<const void> owner) {
    if (e.flags & 1) throw Error(ErrorKind::kUnsupported, "'" + a.what + "': encrypted member");
    const uint8_t* lh = a.at(e.offset, 30);
    if (le(lh, 4) != 0x04034b50) bad(a.what, "bad local header for '" + e.name + "'");
    const uint64_t start = e.offset + 30 + le(lh + 26, 2) + le(lh + 28, 2);
    const uint8_t* src = a.at(start, e.csize);
    if (e.csize > 0xFFFFFFFFull || e.usize > 0xFFFFFFFFull) {
        if (e.method != 0)
            throw Error(ErrorKind::kUnsupported, "'" + a.what + "': deflated member over 4 GiB");
    }
    if (e.method == 0) {
        if (e.usize != e.csize) bad(a.what, "stored member '" + e.name + "' has two sizes");
        return {src, std::move(owner)};
    }
    if (e.method != 8) {
        throw Error(ErrorKind::kUnsupported, "'" + a.what + "': member '" + e.name +
                                                 "' uses compression method " +
                                                 std::to_string(e.method));
    }
    auto buf = inflate_member(a, e, src);
    return {reinterpret_cast<const uint8_t*>(buf->data()), buf};
}

uint32_t crc_of(const uint8_t* p, uint64_t n) {
    uLong crc = crc32(0L, Z_NULL, 0);
    for (uint64_t done = 0; done < n;) {
        const uInt chunk = static_cast<uInt>(std::min<uint64_t>(n - done, 1u << 30));
        crc = crc32(crc, p + done, chunk);
        done += chunk;
    }
    return static_cast<uint32_t>(crc);
}

runners::NamedTensors decode_archive(const Archive& a, std::shared_ptr<const void> owner) {
    runners::NamedTensors out;
    for (const Entry& e : read_entries(a, find_directory(a))) {
        auto [p, keep] = member_bytes(a, e, owner);
        if (crc_of(p, e.usize) != e.crc) bad(a.what, "CRC mismatch in member '" + e.name + "'");
        std::string key = e.name;
        if (key.size() > 4 && key.compare(key.size() - 4, 4, ".npy") == 0)
            key.resize(key.size() - 4);
        out.emplace_back(key, npy_decode(p, e.usize, a.what + "' member '" + e.name, keep));
    }
    return out;
}

}  // namespace

bool is_npz(const uint8_t* data, uint64_t size) {
    return size >= 4 &&
           (std::memcmp(data, "PK\x03\x04", 4) == 0 || std::memcmp(data, "PK\x05\x06", 4) == 0);
}

runners::NamedTensors npz_decode(std::string_view bytes, const std::string& what) {
    auto copy = std::make_shared<std::string>(bytes);
    Archive a{reinterpret_cast<const uint8_t*>(copy->data()), copy->size(), what};
    return decode_archive(a, copy);
}

Tensor first_npz_array(std::string_view bytes, const std::string& what) {
    auto all = npz_decode(bytes, what);
    if (all.empty()) bad(what, "the archive holds no arrays");
    return all.front().second;
}

runners::NamedTensors load_npz(const std::string& path) {
    auto file = MappedFile::open(path);
    Archive a{file->data(), file->size(), path};
    return with_context("while reading '" + path + "'", [&] { return decode_archive(a, file); });
}

}  // namespace pg::data
