#include "emu/precision.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "base/error.h"

namespace pg::emu {

namespace {

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

const std::vector<std::pair<const char*, Precision>>& name_table() {
    static const std::vector<std::pair<const char*, Precision>> t = {
        {"float32", Precision::kFP32},       {"fp32", Precision::kFP32},
        {"tf32", Precision::kTF32},          {"float16", Precision::kFP16},
        {"fp16", Precision::kFP16},          {"half", Precision::kFP16},
        {"bfloat16", Precision::kBF16},      {"bf16", Precision::kBF16},
        {"fp8", Precision::kFP8E4M3},        {"e4m3", Precision::kFP8E4M3},
        {"e4m3fn", Precision::kFP8E4M3},     {"float8e4m3fn", Precision::kFP8E4M3},
        {"fp8e4m3fn", Precision::kFP8E4M3},  {"e5m2", Precision::kFP8E5M2},
        {"float8e5m2", Precision::kFP8E5M2}, {"fp8e5m2", Precision::kFP8E5M2},
        {"int8", Precision::kINT8},
    };
    return t;
}

// Rounds the non-negative integer part r (exact in double) per `mode`.
double round_scaled(double r, RoundingMode mode) {
    const double fl = std::floor(r);
    const double frac = r - fl;
    switch (mode) {
        case RoundingMode::kNearestEven:
            if (frac != 0.5) return frac > 0.5 ? fl + 1 : fl;
            return std::fmod(fl, 2.0) == 0 ? fl : fl + 1;
        case RoundingMode::kNearestAway:
            return frac >= 0.5 ? fl + 1 : fl;
        case RoundingMode::kTowardZero:
            return fl;
    }
    return fl;
}

}  // namespace

Precision parse_precision(const std::string& s) {
    const std::string l = lower(s);
    for (const auto& [name, p] : name_table())
        if (l == name) return p;
    throw Error(ErrorKind::kUsage,
                "unknown precision '" + s +
                    "'; expected float32/fp32, tf32, float16/fp16/half, bfloat16/bf16, "
                    "fp8/e4m3fn, e5m2 or int8");
}

const char* precision_name(Precision p) {
    switch (p) {
        case Precision::kFP32:
            return "float32";
        case Precision::kTF32:
            return "tf32";
        case Precision::kFP16:
            return "float16";
        case Precision::kBF16:
            return "bfloat16";
        case Precision::kFP8E4M3:
            return "fp8e4m3fn";
        case Precision::kFP8E5M2:
            return "fp8e5m2";
        case Precision::kINT8:
            return "int8";
    }
    return "?";
}

RoundingMode parse_rounding_mode(const std::string& s) {
    const std::string l = lower(s);
    if (l == "nearest-even") return RoundingMode::kNearestEven;
    if (l == "nearest-away") return RoundingMode::kNearestAway;
    if (l == "toward-zero") return RoundingMode::kTowardZero;
    throw Error(ErrorKind::kUsage, "unknown rounding mode '" + s +
                                       "'; expected nearest-even, nearest-away or toward-zero");
}

const char* rounding_mode_name(RoundingMode m) {
    switch (m) {
        case RoundingMode::kNearestEven:
            return "nearest-even";
        case RoundingMode::kNearestAway:
            return "nearest-away";
        case RoundingMode::kTowardZero:
            return "toward-zero";
    }
    return "?";
}

FormatSpec format_spec(Precision p) {
    switch (p) {
        case Precision::kFP32:
            return {23, -126, std::numeric_limits<float>::max(), true};
        case Precision::kTF32:  // float32's exponent, a 10-bit mantissa
            return {10, -126, std::ldexp(2.0 - std::ldexp(1.0, -10), 127), true};
        case Precision::kFP16:
            return {10, -14, 65504.0, true};
        case Precision::kBF16:
            return {7, -126, std::ldexp(2.0 - std::ldexp(1.0, -7), 127), true};
        case Precision::kFP8E4M3:  // no infinity: saturates to +-448 (ONNX Cast saturate=1)
            return {3, -6, 448.0, false};
        case Precision::kFP8E5M2:  // IEEE-like: overflows to +-inf like float16
            return {2, -14, 57344.0, true};
        case Precision::kINT8:
            break;
    }
    throw Error(ErrorKind::kUnsupported,
                "int8 is not a float format: INT8 calibration is not implemented yet");
}

float round_to_format(const FormatSpec& f, float x, RoundingMode mode) {
    if (std::isnan(x)) return x;
    if (std::isinf(x)) return f.has_inf ? x : static_cast<float>(std::copysign(f.max_finite, x));
    const double a = std::fabs(static_cast<double>(x));
    if (a == 0) return x;
    int e = 0;
    std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
    const int exp = std::max(e - 1, f.min_exp);
    const double quantum = std::ldexp(1.0, exp - f.mant_bits);
    double y = round_scaled(a / quantum, mode) * quantum;
    if (y > f.max_finite)
        y = f.has_inf && mode != RoundingMode::kTowardZero ? std::numeric_limits<double>::infinity()
                                                           : f.max_finite;
    return static_cast<float>(std::copysign(y, static_cast<double>(x)));
}

float round_to(Precision p, float x, RoundingMode mode) {
    if (p == Precision::kFP32) return x;
    return round_to_format(format_spec(p), x, mode);
}

void RoundingStats::merge(const RoundingStats& o) {
    values += o.values;
    overflow += o.overflow;
    underflow += o.underflow;
    nonfinite += o.nonfinite;
    max_abs = std::max(max_abs, o.max_abs);
    max_round_err = std::max(max_round_err, o.max_round_err);
}

void round_tensor(Precision p, Tensor& t, RoundingMode mode, RoundingStats& stats) {
    if (t.dtype() != DataType::kFloat32 || p == Precision::kFP32 || t.numel() == 0) return;
    const FormatSpec f = format_spec(p);
    float* d = reinterpret_cast<float*>(t.mutable_bytes());
    for (uint64_t i = 0; i < t.numel(); ++i) {
        const float x = d[i];
        const float y = round_to_format(f, x, mode);
        const double ax = std::fabs(static_cast<double>(x));
        if (std::isfinite(x)) {
            stats.max_abs = std::max(stats.max_abs, ax);
            if (ax > f.max_finite) ++stats.overflow;
            if (x != 0 && y == 0) ++stats.underflow;
            if (std::isfinite(y))
                stats.max_round_err =
                    std::max(stats.max_round_err, std::fabs(static_cast<double>(y) - x));
        }
        if (!std::isfinite(y)) ++stats.nonfinite;
        d[i] = y;
    }
    stats.values += t.numel();
}

}  // namespace pg::emu
