// Decoding of .npy bytes with every header field checked before use: see npy.h.
#include <algorithm>
#include <cstring>
#include <string_view>

#include "base/error.h"
#include "data/npy.h"

namespace pg::data {

namespace {

[[noreturn]] void bad(const std::string& what, const std::string& why) {
    throw Error(ErrorKind::kInvalidInput, "'" + what + "' is not a valid .npy array: " + why);
}

// The fields of a .npy header dict.
struct NpyHeader {
    std::string descr;
    bool fortran_order = false;
    std::vector<int64_t> shape;
    int found = 0;  // bit mask of the keys seen
};

// A tiny parser for the Python dict literal of a .npy header.
class HeaderParser {
  public:
    HeaderParser(std::string_view text, const std::string& what) : s_(text), what_(what) {}
    NpyHeader parse();

  private:
    void ws() {
        while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t')) ++i_;
    }
    bool eat(char c) {
        ws();
        if (i_ < s_.size() && s_[i_] == c) return ++i_, true;
        return false;
    }
    void expect(char c) {
        if (!eat(c)) bad(what_, std::string("header: expected '") + c + "'");
    }
    std::string str();
    bool boolean();
    std::vector<int64_t> tuple();
    int64_t integer();
    std::string_view s_;
    size_t i_ = 0;
    const std::string& what_;
};

std::string HeaderParser::str() {
    ws();
    if (i_ >= s_.size() || (s_[i_] != '\'' && s_[i_] != '"'))
        bad(what_, "header: expected a string");
    const char q = s_[i_++];
    const size_t end = s_.find(q, i_);
    if (end == std::string_view::npos) bad(what_, "header: unterminated string");
    std::string out(s_.substr(i_, end - i_));
    i_ = end + 1;
    return out;
}

bool HeaderParser::boolean() {
    ws();
    if (s_.substr(i_, 4) == "True") return i_ += 4, true;
    if (s_.substr(i_, 5) == "False") return i_ += 5, false;
    bad(what_, "header: fortran_order is not True or False");
}

int64_t HeaderParser::integer() {
    ws();
    size_t start = i_;
    while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
    if (i_ == start) bad(what_, "header: shape holds a non-integer or negative dim");
    if (i_ - start > 18) bad(what_, "header: absurd dim in shape");
    const int64_t v = std::stoll(std::string(s_.substr(start, i_ - start)));
    if (i_ < s_.size() && s_[i_] == 'L') ++i_;  // Python 2 long
    return v;
}

std::vector<int64_t> HeaderParser::tuple() {
    expect('(');
    std::vector<int64_t> dims;
    while (!eat(')')) {
        if (dims.size() >= 64) bad(what_, "header: shape has too many dims");
        dims.push_back(integer());
        if (!eat(',')) {
            expect(')');
            break;
        }
    }
    return dims;
}

NpyHeader HeaderParser::parse() {
    NpyHeader h;
    expect('{');
    while (!eat('}')) {
        const std::string key = str();
        expect(':');
        if (key == "descr") {
            ws();
            if (i_ < s_.size() && s_[i_] == '[') {
                throw Error(ErrorKind::kUnsupported,
                            "'" + what_ + "': structured dtypes are not supported");
            }
            h.descr = str(), h.found |= 1;
        } else if (key == "fortran_order") {
            h.fortran_order = boolean(), h.found |= 2;
        } else if (key == "shape") {
            h.shape = tuple(), h.found |= 4;
        } else {
            bad(what_, "header: unexpected key '" + key + "'");
        }
        if (!eat(',')) {
            expect('}');
            break;
        }
    }
    if (h.found != 7) bad(what_, "header lacks descr, fortran_order or shape");
    return h;
}

// Maps a descr ("<f4", ">i8", "|b1", "?") to a dtype; the bool says big-endian.
std::pair<DataType, bool> parse_descr(const std::string& d, const std::string& what) {
    if (d.size() >= 2 && (d[0] == '<' || d[0] == '>' || d[0] == '|' || d[0] == '=')) {
        const std::string code = "<" + d.substr(1);
        const std::string one = "|" + d.substr(1);
        for (DataType t :
             {DataType::kFloat64, DataType::kFloat32, DataType::kFloat16, DataType::kInt8,
              DataType::kInt16, DataType::kInt32, DataType::kInt64, DataType::kUInt8,
              DataType::kUInt16, DataType::kUInt32, DataType::kUInt64, DataType::kBool,
              DataType::kComplex64, DataType::kComplex128}) {
            const std::string want = *npy_descr(t);
            if (want == code || want == one) return {t, d[0] == '>' && dtype_bits(t) > 8};
        }
    }
    throw Error(ErrorKind::kUnsupported,
                "'" + what + "': numpy dtype '" + d + "' is not supported");
}

void byte_swap(std::string& bytes, size_t width) {
    for (size_t i = 0; i + width <= bytes.size(); i += width) {
        std::reverse(bytes.begin() + i, bytes.begin() + i + width);
    }
}

// Header length and text start, checked against the buffer size.
std::pair<uint64_t, uint64_t> header_span(const uint8_t* data, uint64_t size,
                                          const std::string& what) {
    if (!is_npy(data, size) || size < 10) bad(what, "missing \\x93NUMPY magic");
    const uint8_t major = data[6];
    if (major < 1 || major > 3) bad(what, "unknown format version " + std::to_string(major));
    const uint64_t prefix = major == 1 ? 10 : 12;
    if (size < prefix) bad(what, "file ends inside the header");
    uint64_t hlen = data[8] | (uint64_t{data[9]} << 8);
    if (major > 1) hlen |= (uint64_t{data[10]} << 16) | (uint64_t{data[11]} << 24);
    if (hlen > size - prefix) {
        bad(what, "header length " + std::to_string(hlen) + " exceeds the file size " +
                      std::to_string(size));
    }
    if (hlen > (1u << 24)) bad(what, "header length " + std::to_string(hlen) + " is absurd");
    return {prefix, hlen};
}

}  // namespace

Tensor npy_decode(const uint8_t* data, uint64_t size, const std::string& what,
                  std::shared_ptr<const void> owner) {
    const auto [prefix, hlen] = header_span(data, size, what);
    std::string_view text(reinterpret_cast<const char*>(data + prefix), hlen);
    text = text.substr(0, text.find('\n'));
    const NpyHeader h = HeaderParser(text, what).parse();
    if (h.fortran_order && h.shape.size() > 1) {
        throw Error(ErrorKind::kUnsupported,
                    "'" + what +
                        "': Fortran-ordered arrays are not supported; save the array "
                        "with numpy.ascontiguousarray() first");
    }
    const auto [dtype, big_endian] = parse_descr(h.descr, what);
    const auto numel = checked_numel(h.shape);
    const auto need = numel ? dtype_storage_bytes(dtype, *numel) : std::nullopt;
    const uint64_t have = size - prefix - hlen;
    if (!need) bad(what, "shape " + std::to_string(h.shape.size()) + "-D is absurd (overflows)");
    if (*need > have) {
        bad(what, "the shape needs " + std::to_string(*need) +
                      " bytes of data but the file holds " + std::to_string(have));
    }
    const uint8_t* body = data + prefix + hlen;
    if (owner && !big_endian)
        return Tensor::from_view(dtype, h.shape, body, *need, std::move(owner));
    std::string bytes(reinterpret_cast<const char*>(body), *need);
    if (big_endian)
        byte_swap(bytes, dtype == DataType::kComplex64 || dtype == DataType::kComplex128
                             ? dtype_bits(dtype) / 16
                             : dtype_bits(dtype) / 8);
    return Tensor::from_bytes(dtype, h.shape, std::move(bytes));
}

}  // namespace pg::data
