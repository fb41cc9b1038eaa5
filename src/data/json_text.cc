// Python-compatible JSON text: see json_text.h.
#include "data/json_text.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "base/error.h"

namespace pg::data {

std::string py_json_float(double v) {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
    std::string sci(buf, r.ptr);  // "-1.2345e-05", shortest round-trip digits
    const size_t e = sci.find('e');
    const bool neg = sci[0] == '-';
    std::string digits;
    for (size_t i = neg ? 1 : 0; i < e; ++i) {
        if (sci[i] != '.') digits += sci[i];
    }
    const int exp = std::stoi(sci.substr(e + 1));
    std::string out = neg ? "-" : "";
    if (exp < -4 || exp >= 16) {
        out += digits.substr(0, 1);
        if (digits.size() > 1) out += "." + digits.substr(1);
        std::snprintf(buf, sizeof buf, "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
        return out + buf;
    }
    if (exp < 0) return out + "0." + std::string(-exp - 1, '0') + digits;
    if (digits.size() <= static_cast<size_t>(exp) + 1) {
        return out + digits + std::string(exp + 1 - digits.size(), '0') + ".0";
    }
    return out + digits.substr(0, exp + 1) + "." + digits.substr(exp + 1);
}

namespace {

// Decodes one UTF-8 code point at s[i] (advancing i); invalid bytes decode as themselves.
uint32_t next_code_point(std::string_view s, size_t& i) {
    const uint8_t c = static_cast<uint8_t>(s[i++]);
    const int extra = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : 0;
    if (extra == 0 || i + extra > s.size()) return c;
    uint32_t cp = c & (0x3F >> extra);
    for (int k = 0; k < extra; ++k) cp = (cp << 6) | (static_cast<uint8_t>(s[i++]) & 0x3F);
    return cp;
}

void append_u(std::string& out, uint32_t unit) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "\\u%04x", unit & 0xFFFFu);
    out += buf;
}

}  // namespace

std::string py_json_string(std::string_view s) {
    std::string out = "\"";
    for (size_t i = 0; i < s.size();) {
        const uint32_t cp = next_code_point(s, i);
        switch (cp) {
            case '"':
                out += "\\\"";
                continue;
            case '\\':
                out += "\\\\";
                continue;
            case '\n':
                out += "\\n";
                continue;
            case '\r':
                out += "\\r";
                continue;
            case '\t':
                out += "\\t";
                continue;
            case '\b':
                out += "\\b";
                continue;
            case '\f':
                out += "\\f";
                continue;
            default:
                break;
        }
        if (cp >= 0x20 && cp < 0x7F) {
            out += static_cast<char>(cp);
        } else if (cp < 0x10000) {
            append_u(out, cp);
        } else {
            append_u(out, 0xD800 + ((cp - 0x10000) >> 10));
            append_u(out, 0xDC00 + ((cp - 0x10000) & 0x3FF));
        }
    }
    return out + "\"";
}

void JsonStream::element_prefix() {
    if (after_key_) {
        after_key_ = false;
        return;
    }
    if (stack_.empty()) return;
    Level& top = stack_.back();
    std::string s = top.count == 0 ? std::string(1, top.opener) : std::string(",");
    s += "\n" + std::string(4 * stack_.size(), ' ');
    ++top.count;
    sink_(s);
}

void JsonStream::open(char opener, char closer) {
    element_prefix();
    stack_.push_back(Level{opener, closer});
}

void JsonStream::key(std::string_view k) {
    if (stack_.empty() || stack_.back().opener != '{') {
        throw Error(ErrorKind::kInternal, "JsonStream: key outside an object");
    }
    element_prefix();
    sink_(py_json_string(k) + ": ");
    after_key_ = true;
}

void JsonStream::raw(std::string_view text) {
    element_prefix();
    sink_(text);
}

void JsonStream::end() {
    if (stack_.empty()) throw Error(ErrorKind::kInternal, "JsonStream: end() without begin");
    const Level top = stack_.back();
    stack_.pop_back();
    if (top.count == 0) {
        sink_(std::string{top.opener, top.closer});
    } else {
        sink_("\n" + std::string(4 * stack_.size(), ' ') + std::string(1, top.closer));
    }
}

}  // namespace pg::data
