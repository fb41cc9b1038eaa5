#include "onnx/model_split.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "base/aligned.h"
#include "base/mapped_buffer.h"

namespace pg::onnx {

namespace {

constexpr uint32_t kModelGraph = 7;        // ModelProto.graph
constexpr uint32_t kGraphInitializer = 5;  // GraphProto.initializer
constexpr uint32_t kTensorRawData = 9;     // TensorProto.raw_data
constexpr uint32_t kLengthDelimited = 2;
// 16 KiB, a quarter of the smallest payload split out: a payload never passes through the window
// whole, so the load peak is the payloads plus at most one window (a 1 MiB window held all of a
// smaller file while its payloads were copied out: twice the weights of the zoo LSTM; a 64 KiB
// one still set the zoo LSTM's peak, its 422 KiB of weights and live values then 1.14 of it).
constexpr size_t kWindow = size_t{16} << 10;

// Sequential reader over a file descriptor with a kWindow window; bytes read can be appended to
// an output string. Every read is checked against the end of the file.
class Cursor {
  public:
    Cursor(int fd, uint64_t size) : fd_(fd), size_(size) {}
    uint64_t pos() const { return pos_; }

    // Reads n bytes; appends them to `out` unless it is null.
    bool bytes(uint64_t n, std::string* out) {
        if (n > size_ - pos_) return false;
        if (out) {
            const size_t at = out->size();
            out->resize(at + n);
            return read_into(out->data() + at, n);
        }
        return skip(n);
    }

    // Reads n bytes into dst (n must not exceed what is left; checked).
    bool read_into(char* dst, uint64_t n) {
        if (n > size_ - pos_) return false;
        while (n > 0) {
            if (in_window()) {
                const uint64_t take = std::min<uint64_t>(n, win_start_ + win_size_ - pos_);
                std::memcpy(dst, win_.get() + (pos_ - win_start_), take);
                dst += take, pos_ += take, n -= take;
            } else if (n >= kWindow) {  // large reads go straight to their destination
                const ssize_t got = ::pread(fd_, dst, n, static_cast<off_t>(pos_));
                if (got <= 0) return false;
                dst += got, pos_ += static_cast<uint64_t>(got), n -= static_cast<uint64_t>(got);
            } else if (!fill()) {
                return false;
            }
        }
        return true;
    }

    // Reads a varint (at most 10 bytes), appending its bytes to `out` unless it is null.
    bool varint(uint64_t* v, std::string* out) {
        *v = 0;
        for (int shift = 0; shift < 70; shift += 7) {
            char c;
            if (!read_into(&c, 1)) return false;
            if (out) out->push_back(c);
            *v |= static_cast<uint64_t>(static_cast<uint8_t>(c) & 0x7f) << shift;
            if (!(static_cast<uint8_t>(c) & 0x80)) return true;
        }
        return false;
    }

  private:
    bool in_window() const { return pos_ >= win_start_ && pos_ < win_start_ + win_size_; }
    bool skip(uint64_t n) {
        pos_ += n;
        return true;
    }
    bool fill() {
        if (!win_) win_ = mapped_array<char>(kWindow);  // pages of its own, gone with the cursor
        win_size_ = static_cast<size_t>(std::min<uint64_t>(kWindow, size_ - pos_));
        win_start_ = pos_;
        size_t have = 0;
        while (have < win_size_) {
            const ssize_t got =
                ::pread(fd_, win_.get() + have, win_size_ - have, static_cast<off_t>(pos_ + have));
            if (got <= 0) return false;
            have += static_cast<size_t>(got);
        }
        return win_size_ > 0;
    }

    int fd_;
    uint64_t size_;
    uint64_t pos_ = 0;
    uint64_t win_start_ = 0;
    size_t win_size_ = 0;
    MappedArray<char> win_;
};

void put_varint(uint64_t v, std::string& out) {
    while (v >= 0x80) {
        out.push_back(static_cast<char>((v & 0x7f) | 0x80));
        v >>= 7;
    }
    out.push_back(static_cast<char>(v));
}

struct Splitter {
    Cursor cur;
    uint64_t min_payload;
    SplitModel result;
    int next_initializer = 0;

    // Copies the rest of a field whose tag has been read (and appended to out) verbatim.
    bool copy_value(uint32_t wire_type, std::string& out) {
        uint64_t v = 0;
        switch (wire_type) {
            case 0:
                return cur.varint(&v, &out);
            case 1:
                return cur.bytes(8, &out);
            case 5:
                return cur.bytes(4, &out);
            case kLengthDelimited:
                return cur.varint(&v, &out) && cur.bytes(v, &out);
            default:
                return false;  // groups (deprecated) and invalid wire types: no split
        }
    }

    // Reads a tag and, for length-delimited fields, the length (checked against `end`).
    bool tag(uint64_t end, uint32_t* field, uint32_t* wire_type, std::string* raw_tag) {
        uint64_t t = 0;
        if (!cur.varint(&t, raw_tag) || (t >> 3) == 0 || (t >> 3) > 0x1fffffff) return false;
        *field = static_cast<uint32_t>(t >> 3);
        *wire_type = static_cast<uint32_t>(t & 7);
        return cur.pos() <= end;
    }

    // Rewrites the message running to `end`: `child` handles (field, length-delimited) pairs it
    // claims (returning false on bad data), everything else is copied.
    template <typename Child>
    bool message(uint64_t end, std::string& out, uint32_t child_field, Child&& child) {
        while (cur.pos() < end) {
            uint32_t field = 0, wt = 0;
            std::string raw_tag;
            if (!tag(end, &field, &wt, &raw_tag)) return false;
            out += raw_tag;
            if (field == child_field && wt == kLengthDelimited) {
                uint64_t len = 0;
                if (!cur.varint(&len, nullptr) || len > end - cur.pos()) return false;
                if (!child(cur.pos() + len, len, out)) return false;
            } else if (!copy_value(wt, out)) {
                return false;
            }
            if (cur.pos() > end) return false;
        }
        return cur.pos() == end;
    }

    bool tensor(uint64_t end, int index, std::string& out) {
        return message(end, out, kTensorRawData, [&](uint64_t, uint64_t len, std::string& o) {
            if (len < min_payload) {  // stays inline; a later small raw_data wins over a split one
                result.payloads.erase(index);
                put_varint(len, o);
                return cur.bytes(len, &o);
            }
            SplitPayload payload{std::shared_ptr<uint8_t[]>(
                                     static_cast<uint8_t*>(aligned_bytes(len)), AlignedFree{}),
                                 len};
            if (!cur.read_into(reinterpret_cast<char*>(payload.bytes.get()), len)) return false;
            result.payloads[index] = std::move(payload);
            put_varint(0, o);
            return true;
        });
    }

    // A nested message: rewritten into its own buffer, then written with its new length.
    template <typename Body>
    static bool nested(std::string& out, Body&& body) {
        std::string sub;
        if (!body(sub)) return false;
        put_varint(sub.size(), out);
        out += sub;
        return true;
    }

    bool graph(uint64_t end, std::string& out) {
        return message(
            end, out, kGraphInitializer, [&](uint64_t sub_end, uint64_t, std::string& o) {
                const int index = next_initializer++;
                return nested(o, [&](std::string& sub) { return tensor(sub_end, index, sub); });
            });
    }

    bool model(uint64_t end) {
        return message(end, result.skeleton, kModelGraph,
                       [&](uint64_t sub_end, uint64_t, std::string& o) {
                           return nested(o, [&](std::string& sub) { return graph(sub_end, sub); });
                       });
    }
};

}  // namespace

std::optional<SplitModel> split_model_file(int fd, uint64_t size, uint64_t min_payload) {
    Splitter s{Cursor(fd, size), std::max<uint64_t>(min_payload, 1), {}};
    if (!s.model(size)) return std::nullopt;
    return std::move(s.result);
}

}  // namespace pg::onnx
