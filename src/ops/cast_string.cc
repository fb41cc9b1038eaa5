// Cast between strings and numbers as ONNX's reference (numpy) does. Numbers are formatted like
// numpy's str(): the shortest digits that read back as the same value of the source type,
// positional for 1e-4 <= |x| < 1e16 ("0.5", "100.0"), scientific otherwise ("1e-05"), and
// "nan" / "inf" / "-inf"; bools as "True" / "False". Parsing accepts decimal and scientific
// notation and INF, +INF, -INF, NaN in any case.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <type_traits>

#include "base/float8.h"
#include "ops/dispatch.h"
#include "ops/kernel.h"

namespace pg::ops {

namespace {

// True when `parsed` reads back as the same value as `v` in the source type.
bool round_trips(double parsed, double v, DataType original) {
    switch (original) {
        case DataType::kFloat64:
            return parsed == v;
        case DataType::kFloat16:
            return double_to_minifloat(parsed, kHalfFormat, false) ==
                   double_to_minifloat(v, kHalfFormat, false);
        case DataType::kBFloat16:
            return double_to_minifloat(parsed, kBFloat16Format, false) ==
                   double_to_minifloat(v, kBFloat16Format, false);
        default:
            return static_cast<float>(parsed) == static_cast<float>(v);
    }
}

// The shortest significant digits of v (no dot, no trailing zeros) and its decimal exponent.
void shortest_digits(double v, DataType original, std::string& digits, int& exp10) {
    char buf[64];
    for (int p = 1; p <= 17; ++p) {
        std::snprintf(buf, sizeof buf, "%.*e", p - 1, v);
        if (round_trips(std::strtod(buf, nullptr), v, original)) break;
    }
    const std::string s(buf);
    const size_t e = s.find('e');
    exp10 = std::atoi(s.c_str() + e + 1);
    digits.clear();
    for (size_t i = 0; i < e; ++i)
        if (std::isdigit(static_cast<unsigned char>(s[i]))) digits += s[i];
    while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
}

std::string format_float(double v, DataType original) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
    std::string digits;
    int e = 0;
    shortest_digits(std::fabs(v), original, digits, e);
    std::string out = std::signbit(v) ? "-" : "";
    const double a = std::fabs(v);
    if (a == 0 || (a >= 1e-4 && a < 1e16)) {
        if (e >= 0) {
            if (digits.size() <= static_cast<size_t>(e)) digits.append(e + 1 - digits.size(), '0');
            const std::string frac = digits.substr(e + 1);
            return out + digits.substr(0, e + 1) + "." + (frac.empty() ? "0" : frac);
        }
        return out + "0." + std::string(-e - 1, '0') + digits;
    }
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    const std::string ex = std::to_string(std::abs(e));
    return out + "e" + (e < 0 ? "-" : "+") + (ex.size() < 2 ? "0" : "") + ex;
}

std::string lower_trimmed(const std::string& s) {
    size_t b = 0, e = s.size();
    while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
    while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
    std::string out = s.substr(b, e - b);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

double parse_double(const std::string& s) {
    const std::string t = lower_trimmed(s);
    if (t == "inf" || t == "+inf") return std::numeric_limits<double>::infinity();
    if (t == "-inf") return -std::numeric_limits<double>::infinity();
    if (t == "nan" || t == "+nan" || t == "-nan") return std::numeric_limits<double>::quiet_NaN();
    char* end = nullptr;
    const double v = std::strtod(t.c_str(), &end);
    if (t.empty() || end != t.c_str() + t.size())
        fail("Cast: cannot parse '" + s + "' as a number");
    return v;
}

// Integers parse exactly when written as integers ("100"); other numbers are truncated ("100.5").
template <typename I>
I parse_integer(const std::string& s) {
    const std::string t = lower_trimmed(s);
    char* end = nullptr;
    errno = 0;
    if constexpr (std::is_same_v<I, uint64_t>) {
        const unsigned long long v = std::strtoull(t.c_str(), &end, 10);
        if (!t.empty() && t[0] != '-' && end == t.c_str() + t.size() && errno == 0) return v;
    } else {
        const long long v = std::strtoll(t.c_str(), &end, 10);
        if (!t.empty() && end == t.c_str() + t.size() && errno == 0) return v;
    }
    return static_cast<I>(std::trunc(parse_double(s)));
}

}  // namespace

// STRING -> int64 / uint64 / double (the caller converts on to the target).
Tensor cast_strings_to_native(const Tensor& t, DataType target) {
    const auto& strs = t.strings();
    const bool is_int = dtype_is_integer(target) || target == DataType::kBool;
    const DataType mid = !is_int                       ? DataType::kFloat64
                         : target == DataType::kUInt64 ? DataType::kUInt64
                                                       : DataType::kInt64;
    Tensor out = Tensor::zeros(mid, t.dims());
    uint8_t* bytes = out.mutable_bytes();
    for (size_t i = 0; i < strs.size(); ++i) {
        if (mid == DataType::kFloat64)
            reinterpret_cast<double*>(bytes)[i] = parse_double(strs[i]);
        else if (mid == DataType::kUInt64)
            reinterpret_cast<uint64_t*>(bytes)[i] = parse_integer<uint64_t>(strs[i]);
        else
            reinterpret_cast<int64_t*>(bytes)[i] = parse_integer<int64_t>(strs[i]);
    }
    return out;
}

// Native numeric/bool -> STRING; `original` is the type before decoding (float16 -> float32).
Tensor cast_native_to_strings(const Tensor& native, DataType original) {
    std::vector<std::string> out(native.numel());
    dispatch_numeric_bool(native.dtype(), "Cast", [&]<typename S>() {
        const S* in = native.data<S>();
        for (size_t i = 0; i < out.size(); ++i) {
            if constexpr (std::is_same_v<S, bool>)
                out[i] = in[i] ? "True" : "False";
            else if constexpr (std::is_floating_point_v<S>)
                out[i] = format_float(in[i], original);
            else
                out[i] = std::to_string(in[i]);
        }
    });
    return Tensor::from_strings(native.dims(), std::move(out));
}

}  // namespace pg::ops
