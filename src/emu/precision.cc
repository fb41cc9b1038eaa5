#include "emu/precision.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <limits>
#include <mutex>
#include <utility>
#include <vector>

#include "base/error.h"
#include "base/float16.h"
#include "base/thread_pool.h"

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
                "int8 is not a float format: it is emulated by fake quantization with "
                "calibrated scales (fake_quant_int8)");
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
    saturated += o.saturated;
    lowest = std::min(lowest, o.lowest);
    highest = std::max(highest, o.highest);
}

namespace {

// Elements per parallel chunk; tensors under two chunks are rounded inline.
constexpr int64_t kRoundGrain = int64_t{1} << 15;

// Rounds to a format with float32's exponent range (BF16: K = 16, TF32: K = 13) by dropping the
// low K mantissa bits; a carry into the exponent gives the next binade or infinity, as the
// generic routine does. NaN and infinities pass through unchanged.
template <int K>
[[gnu::always_inline]] inline float round_low_bits(float x, RoundingMode mode) {
    constexpr uint32_t kMask = (1u << K) - 1u;
    const uint32_t b = std::bit_cast<uint32_t>(x);
    uint32_t r = b;
    if (mode == RoundingMode::kNearestEven)
        r += (kMask >> 1) + ((b >> K) & 1u);
    else if (mode == RoundingMode::kNearestAway)
        r += 1u << (K - 1);
    return std::bit_cast<float>((b & 0x7FFFFFFFu) >= 0x7F800000u ? b : r & ~kMask);
}

// FP16 nearest-even, bit-identical to float_to_half_bits then half_bits_to_float (base/float16.h)
// but inlinable: normal halves drop 13 mantissa bits with a nearest-even carry, |x| at or past
// 65520 becomes infinity, and the subnormal range (quantum 2^-24) rounds by the float32 adder
// ((a + 0.5) - 0.5 is exact and ties to even). NaN keeps its payload.
[[gnu::always_inline]] inline float round_fp16_even(float x) {
    const uint32_t b = std::bit_cast<uint32_t>(x);
    const uint32_t sign = b & 0x80000000u, a = b & 0x7FFFFFFFu;
    const uint32_t normal = (a + 0xFFFu + ((a >> 13) & 1u)) & ~0x1FFFu;
    const uint32_t sub = std::bit_cast<uint32_t>((std::bit_cast<float>(a) + 0.5f) - 0.5f);
    // Masks rather than branches, so the rounding loop vectorizes.
    const uint32_t is_normal = 0u - static_cast<uint32_t>(a >= 0x38800000u);
    const uint32_t is_inf = 0u - static_cast<uint32_t>(a >= 0x477FF000u);
    const uint32_t keep = 0u - static_cast<uint32_t>(a >= 0x7F800000u);
    uint32_t r = (normal & is_normal) | (sub & ~is_normal);
    r = sign | (r & ~is_inf) | (0x7F800000u & is_inf);
    return std::bit_cast<float>((b & keep) | (r & ~keep));
}

// round_fp16_even for |x| at most 65504 (float16's largest finite value), where neither its
// overflow nor its NaN/Inf selection applies: the same result there.
[[gnu::always_inline]] inline float round_fp16_even_in_range(float x) {
    const uint32_t b = std::bit_cast<uint32_t>(x);
    const uint32_t sign = b & 0x80000000u, a = b & 0x7FFFFFFFu;
    const uint32_t normal = (a + 0xFFFu + ((a >> 13) & 1u)) & ~0x1FFFu;
    const uint32_t sub = std::bit_cast<uint32_t>((std::bit_cast<float>(a) + 0.5f) - 0.5f);
    const uint32_t is_normal = 0u - static_cast<uint32_t>(a >= 0x38800000u);
    return std::bit_cast<float>(sign | (normal & is_normal) | (sub & ~is_normal));
}

// The FP16 nearest-even rounder, with its in-range form for round_span_in_range.
struct Fp16EvenRound {
    float operator()(float x) const { return round_fp16_even(x); }
    float in_range(float x) const { return round_fp16_even_in_range(x); }
};

// rnd.in_range(x) when the rounder has an in-range form, else rnd(x).
template <class Round>
[[gnu::always_inline]] inline float round_in_range(const Round& rnd, float x) {
    if constexpr (requires { rnd.in_range(x); })
        return rnd.in_range(x);
    else
        return rnd(x);
}

// A float's bits mapped to an unsigned key that orders like the value (negative values have
// their bits flipped, non-negative ones the sign bit set), so min / max reductions run on
// integers and vectorize; from_order_key() inverts it.
[[gnu::always_inline]] inline uint32_t order_key(float x) {
    const uint32_t b = std::bit_cast<uint32_t>(x);
    return b & 0x80000000u ? ~b : b | 0x80000000u;
}

inline float from_order_key(uint32_t k) {
    return std::bit_cast<float>(k & 0x80000000u ? k & 0x7FFFFFFFu : ~k);
}

// What rounding a span did, plus whether any element changed and how many inputs were NaN/Inf.
struct SpanResult {
    RoundingStats stats;
    uint64_t nonfinite_in = 0;
    bool changed = false;
    double out_max_abs = 0;                                    // largest finite |rounded x|
    double out_lo = std::numeric_limits<double>::infinity();   // smallest finite rounded x
    double out_hi = -std::numeric_limits<double>::infinity();  // largest finite rounded x
    void merge(const SpanResult& o) {
        out_lo = std::min(out_lo, o.out_lo);
        out_hi = std::max(out_hi, o.out_hi);
        stats.merge(o.stats);
        nonfinite_in += o.nonfinite_in;
        changed = changed || o.changed;
        out_max_abs = std::max(out_max_abs, o.out_max_abs);
    }
};

// Rounds src[b, e) with `rnd`, writing to dst when kWrite (dst may equal src), counting as
// round_tensor always has. `max_finite` is exact in float32 for every format. Fast paths: the
// counters work on bit patterns (a non-negative float's bits order like its value) so the loop
// vectorizes, and |rounded - x| is exact in float (the unit test checks it).
template <bool kWrite, class Round>
[[gnu::always_inline]] inline void round_span_full(const float* src, float* dst, int64_t b,
                                                   int64_t e, float max_finite, Round rnd,
                                                   SpanResult& r) {
    const uint32_t mf = std::bit_cast<uint32_t>(max_finite);
    uint32_t max_abs = 0, max_err = 0;
    uint32_t lo = 0xFFFFFFFFu, hi = 0;  // order keys (order_key) of finite rounded values
    uint32_t ovf = 0, unf = 0, nonfinite = 0, nonfinite_in = 0;  // e - b < 2^32 (see caller)
    for (int64_t i = b; i < e; ++i) {
        const float x = src[i], y = rnd(x);
        const uint32_t ax = std::bit_cast<uint32_t>(x) & 0x7FFFFFFFu;
        const uint32_t ay = std::bit_cast<uint32_t>(y) & 0x7FFFFFFFu;
        const uint32_t fx = ax < 0x7F800000u, fy = ay < 0x7F800000u;  // 0 or 1
        const uint32_t err = std::bit_cast<uint32_t>(std::fabs(y - x)) & 0x7FFFFFFFu;
        max_abs = std::max(max_abs, ax & (0u - fx));
        max_err = std::max(max_err, err & (0u - (fx & fy)));
        ovf += fx & static_cast<uint32_t>(ax > mf);
        unf += fx & static_cast<uint32_t>(ax != 0) & static_cast<uint32_t>(ay == 0);
        nonfinite += 1u - fy;
        nonfinite_in += 1u - fx;
        const uint32_t key = order_key(y);
        lo = std::min(lo, key | (0u - (1u - fy)));
        hi = std::max(hi, key & (0u - fy));
        if constexpr (kWrite) dst[i] = y;
    }
    SpanResult part;
    if (lo <= hi) {
        part.out_lo = from_order_key(lo), part.out_hi = from_order_key(hi);
        // The largest finite |y| is at one of the extremes.
        part.out_max_abs = std::max(std::fabs(part.out_lo), std::fabs(part.out_hi));
    }
    part.stats = {static_cast<uint64_t>(e - b), ovf, unf, nonfinite, std::bit_cast<float>(max_abs),
                  std::bit_cast<float>(max_err)};
    part.nonfinite_in = nonfinite_in;
    // The fast rounders return NaN and infinities as they are and keep the sign of zero, so an
    // element changed exactly when its error is nonzero or it overflowed to infinity.
    part.changed = max_err != 0 || nonfinite != nonfinite_in;
    r.merge(part);
}

// What a first read of a span finds: the largest |x| (as bits), the smallest nonzero |x| (as
// bits, 0xFFFFFFFF when there is none) and the lowest and highest x in order_key order.
struct SpanRange {
    uint32_t max_abs = 0, min_nonzero = 0xFFFFFFFFu;
    uint32_t lo = 0xFFFFFFFFu, hi = 0;
};

[[gnu::always_inline]] inline SpanRange span_range(const float* src, int64_t b, int64_t e) {
    SpanRange g;
    uint32_t min_m1 = 0xFFFFFFFFu;  // smallest |x| - 1 (0 wraps to the largest)
    for (int64_t i = b; i < e; ++i) {
        const uint32_t ax = std::bit_cast<uint32_t>(src[i]) & 0x7FFFFFFFu;
        g.max_abs = std::max(g.max_abs, ax);
        min_m1 = std::min(min_m1, ax - 1u);
        const uint32_t key = order_key(src[i]);
        g.lo = std::min(g.lo, key);
        g.hi = std::max(g.hi, key);
    }
    g.min_nonzero = min_m1 + 1u == 0 ? 0xFFFFFFFFu : min_m1 + 1u;
    return g;
}

// round_span_full on a span all of whose |x| are at most max_finite (range `g`). The fast
// rounders (and the identity) round such a value to a finite one within range, keep its sign,
// treat x and -x alike and never decrease: so overflow and NaN/Inf counts are 0, the largest
// |x| is g.max_abs, the lowest and highest rounded values are the rounded g.lo and g.hi, and
// when the smallest nonzero |x| does not round to zero nothing underflows. Only the rounding
// error (and, otherwise, the underflow count) is left to the loop. Gives the same SpanResult as
// round_span_full (the unit test diffs the two).
template <bool kWrite, class Round>
[[gnu::always_inline]] inline void round_span_in_range(const float* src, float* dst, int64_t b,
                                                       int64_t e, const SpanRange& g, Round rnd,
                                                       SpanResult& r) {
    const bool may_underflow =
        g.min_nonzero != 0xFFFFFFFFu && rnd(std::bit_cast<float>(g.min_nonzero)) == 0.0f;
    uint32_t max_err = 0, unf = 0;
    if (may_underflow) {
        for (int64_t i = b; i < e; ++i) {
            const float x = src[i], y = round_in_range(rnd, x);
            max_err = std::max(max_err, std::bit_cast<uint32_t>(std::fabs(y - x)));
            unf += static_cast<uint32_t>(x != 0.0f) & static_cast<uint32_t>(y == 0.0f);
            if constexpr (kWrite) dst[i] = y;
        }
    } else {
        for (int64_t i = b; i < e; ++i) {
            const float x = src[i], y = round_in_range(rnd, x);
            max_err = std::max(max_err, std::bit_cast<uint32_t>(std::fabs(y - x)));
            if constexpr (kWrite) dst[i] = y;
        }
    }
    SpanResult part;
    part.out_lo = rnd(from_order_key(g.lo)), part.out_hi = rnd(from_order_key(g.hi));
    part.out_max_abs = std::max(std::fabs(part.out_lo), std::fabs(part.out_hi));
    part.stats = {static_cast<uint64_t>(e - b), 0, unf, 0, std::bit_cast<float>(g.max_abs),
                  std::bit_cast<float>(max_err)};
    part.changed = max_err != 0;
    r.merge(part);
}

// Elements per block of round_span_fast (one L1-resident slice read twice).
constexpr int64_t kRangeBlock = 1024;

// round_span_full, block by block: a first read finds the block's range; a block within
// max_finite (the usual case) takes round_span_in_range, any other the full loop. Same results.
template <bool kWrite, class Round>
[[gnu::always_inline]] inline void round_span_fast(const float* src, float* dst, int64_t b,
                                                   int64_t e, float max_finite, Round rnd,
                                                   SpanResult& r) {
    const uint32_t mf = std::bit_cast<uint32_t>(max_finite);
    for (int64_t b0 = b; b0 < e; b0 += kRangeBlock) {
        const int64_t e0 = std::min(e, b0 + kRangeBlock);
        const SpanRange g = span_range(src, b0, e0);
        if (g.max_abs <= mf)
            round_span_in_range<kWrite>(src, dst, b0, e0, g, rnd, r);
        else
            round_span_full<kWrite>(src, dst, b0, e0, max_finite, rnd, r);
    }
}

// round_span_fast for the generic routine: the same counters, the error in double (saturation
// can make it inexact in float).
template <bool kWrite, class Round>
void round_span_generic(const float* src, float* dst, int64_t b, int64_t e, float max_finite,
                        Round rnd, SpanResult& r) {
    SpanResult part;
    RoundingStats& s = part.stats;
    for (int64_t i = b; i < e; ++i) {
        const float x = src[i], y = rnd(x);
        const double ax = std::fabs(static_cast<double>(x));
        if (std::isfinite(x)) {
            s.max_abs = std::max(s.max_abs, ax);
            s.overflow += ax > max_finite;
            s.underflow += x != 0 && y == 0;
            if (std::isfinite(y))
                s.max_round_err = std::max(s.max_round_err, std::fabs(static_cast<double>(y) - x));
        }
        if (std::isfinite(y)) {
            part.out_max_abs = std::max(part.out_max_abs, std::fabs(static_cast<double>(y)));
            part.out_lo = std::min(part.out_lo, static_cast<double>(y));
            part.out_hi = std::max(part.out_hi, static_cast<double>(y));
        }
        s.nonfinite += !std::isfinite(y);
        part.nonfinite_in += !std::isfinite(x);
        part.changed = part.changed || std::bit_cast<uint32_t>(y) != std::bit_cast<uint32_t>(x);
        if constexpr (kWrite) dst[i] = y;
    }
    s.values = static_cast<uint64_t>(e - b);
    r.merge(part);
}

// round_span_fast compiled for AVX2 (8 lanes and unsigned max/compare instructions, 2-4x the
// SSE2 loop): the same operations on the same values, so bit-identical results and counters.
template <bool kWrite, class Round>
__attribute__((target("avx2"))) void round_span_fast_avx2(const float* src, float* dst, int64_t b,
                                                          int64_t e, float max_finite, Round rnd,
                                                          SpanResult& r) {
    round_span_fast<kWrite>(src, dst, b, e, max_finite, rnd, r);
}

// The same for AVX-512 (16 lanes, mask registers for the compares).
template <bool kWrite, class Round>
__attribute__((target("avx512f,avx512bw,avx512vl"))) void round_span_fast_avx512(
    const float* src, float* dst, int64_t b, int64_t e, float max_finite, Round rnd,
    SpanResult& r) {
    round_span_fast<kWrite>(src, dst, b, e, max_finite, rnd, r);
}

bool cpu_has_avx2() {
    static const bool has = __builtin_cpu_supports("avx2");
    return has;
}

bool cpu_has_avx512() {
    static const bool has = __builtin_cpu_supports("avx512f") &&
                            __builtin_cpu_supports("avx512bw") &&
                            __builtin_cpu_supports("avx512vl");
    return has;
}

template <bool kWrite, bool kFast, class Round>
void round_span(const float* src, float* dst, int64_t b, int64_t e, float max_finite, Round rnd,
                SpanResult& r) {
    if constexpr (kFast) {
        if (cpu_has_avx512())
            round_span_fast_avx512<kWrite>(src, dst, b, e, max_finite, rnd, r);
        else if (cpu_has_avx2())
            round_span_fast_avx2<kWrite>(src, dst, b, e, max_finite, rnd, r);
        else
            round_span_fast<kWrite>(src, dst, b, e, max_finite, rnd, r);
    } else
        round_span_generic<kWrite>(src, dst, b, e, max_finite, rnd, r);
}

// round_span over [0, n), split over `pool` for large n; chunk results merge in any order
// (sums and maxima), so the result does not depend on the split.
template <bool kWrite, bool kFast = true, class Round>
SpanResult run_spans(const float* src, float* dst, int64_t n, float max_finite, Round rnd,
                     ThreadPool* pool) {
    SpanResult total;
    if (!pool || pool->num_threads() <= 1 || n < 2 * kRoundGrain) {
        round_span<kWrite, kFast>(src, dst, 0, n, max_finite, rnd, total);
        return total;
    }
    std::mutex mu;
    pool->parallel_for(n, kRoundGrain, [&](int64_t b, int64_t e) {
        SpanResult part;
        round_span<kWrite, kFast>(src, dst, b, e, max_finite, rnd, part);
        std::lock_guard<std::mutex> lock(mu);
        total.merge(part);
    });
    return total;
}

// run_spans with round_low_bits<K> for a mode known at compile time (the loop then vectorizes).
template <bool kWrite, int K>
SpanResult low_bits_spans(RoundingMode mode, const float* src, float* dst, int64_t n, float mf,
                          ThreadPool* pool) {
    constexpr auto kEven = RoundingMode::kNearestEven, kAway = RoundingMode::kNearestAway;
    constexpr auto kZero = RoundingMode::kTowardZero;
    if (mode == kEven)
        return run_spans<kWrite>(
            src, dst, n, mf, [](float x) { return round_low_bits<K>(x, kEven); }, pool);
    if (mode == kAway)
        return run_spans<kWrite>(
            src, dst, n, mf, [](float x) { return round_low_bits<K>(x, kAway); }, pool);
    return run_spans<kWrite>(
        src, dst, n, mf, [](float x) { return round_low_bits<K>(x, kZero); }, pool);
}

// Rounds n floats of src (to dst when kWrite) to `p` with the fastest exact rounder.
template <bool kWrite>
SpanResult round_floats(Precision p, RoundingMode mode, const float* src, float* dst, int64_t n,
                        ThreadPool* pool) {
    const FormatSpec f = format_spec(p);
    const float mf = static_cast<float>(f.max_finite);
    if (p == Precision::kFP16 && mode == RoundingMode::kNearestEven)
        return run_spans<kWrite>(src, dst, n, mf, Fp16EvenRound{}, pool);
    if (p == Precision::kBF16) return low_bits_spans<kWrite, 16>(mode, src, dst, n, mf, pool);
    if (p == Precision::kTF32) return low_bits_spans<kWrite, 13>(mode, src, dst, n, mf, pool);
    return run_spans<kWrite, false>(
        src, dst, n, mf, [&f, mode](float x) { return round_to_format(f, x, mode); }, pool);
}

bool roundable(Precision p, const Tensor& t) {
    return t.dtype() == DataType::kFloat32 && p != Precision::kFP32 && t.numel() != 0;
}

}  // namespace

bool has_fast_rounding(Precision p, RoundingMode mode) {
    return (p == Precision::kFP16 && mode == RoundingMode::kNearestEven) || p == Precision::kBF16 ||
           p == Precision::kTF32;
}

float round_to_fast(Precision p, float x, RoundingMode mode) {
    if (p == Precision::kFP16 && mode == RoundingMode::kNearestEven) return round_fp16_even(x);
    if (p == Precision::kBF16) return round_low_bits<16>(x, mode);
    if (p == Precision::kTF32) return round_low_bits<13>(x, mode);
    return round_to(p, x, mode);
}

void round_tensor(Precision p, Tensor& t, RoundingMode mode, RoundingStats& stats,
                  ThreadPool* pool) {
    RoundingStats ignored;
    round_tensor(p, t, mode, stats, ignored, pool);
}

void round_tensor(Precision p, Tensor& t, RoundingMode mode, RoundingStats& stats,
                  RoundingStats& rounded_stats, ThreadPool* pool) {
    if (!roundable(p, t)) return;
    float* d = reinterpret_cast<float*>(t.mutable_bytes());
    const auto n = static_cast<int64_t>(t.numel());
    const SpanResult r = round_floats<true>(p, mode, d, d, n, pool);
    stats.merge(r.stats);
    RoundingStats again;
    again.values = static_cast<uint64_t>(n);
    again.nonfinite = r.stats.nonfinite;
    again.max_abs = r.out_max_abs;
    again.lowest = r.out_lo, again.highest = r.out_hi;
    rounded_stats.merge(again);
}

RoundingStats representable_stats(Precision p, const Tensor& t, ThreadPool* pool) {
    if (!roundable(p, t)) return {};
    const float mf = static_cast<float>(format_spec(p).max_finite);
    const SpanResult r = run_spans<false>(
        t.data<float>(), nullptr, static_cast<int64_t>(t.numel()), mf, [](float x) { return x; },
        pool);
    RoundingStats s = r.stats;
    s.lowest = r.out_lo, s.highest = r.out_hi;
    return s;
}

Tensor rounded_copy(Precision p, const Tensor& src, RoundingMode mode, RoundingStats& stats,
                    uint64_t& nonfinite_in, ThreadPool* pool) {
    if (!roundable(p, src)) return src;
    const auto n = static_cast<int64_t>(src.numel());
    const SpanResult r = round_floats<false>(p, mode, src.data<float>(), nullptr, n, pool);
    stats.merge(r.stats);
    nonfinite_in += r.nonfinite_in;
    if (!r.changed) return src;
    // Rounded straight from src into fresh storage (no copy-then-round).
    Tensor out = Tensor::uninitialized(DataType::kFloat32, src.dims());
    float* d = reinterpret_cast<float*>(out.mutable_bytes());
    round_floats<true>(p, mode, src.data<float>(), d, n, pool);
    return out;
}

namespace {

// round(x / scale) clamped to [-128, 127]; `clipped` tells whether the clamp changed it.
double quant_level(float x, float scale, RoundingMode mode, bool& clipped) {
    clipped = false;
    if (!(scale > 0)) {
        clipped = x != 0;
        return 0;
    }
    const double r = static_cast<double>(x) / static_cast<double>(scale);
    double q = std::isinf(r) ? r : std::copysign(round_scaled(std::fabs(r), mode), r);
    if (q > 127) q = 127, clipped = true;
    if (q < -128) q = -128, clipped = true;
    return q;
}

}  // namespace

float fake_quant_int8(float x, float scale, RoundingMode mode) {
    if (std::isnan(x)) return x;
    bool clipped = false;
    return static_cast<float>(quant_level(x, scale, mode, clipped) * static_cast<double>(scale));
}

float int8_scale(double amax) {
    if (!(amax > 0) || !std::isfinite(amax)) return 0.0f;
    return static_cast<float>(amax / 127.0);
}

std::vector<float> int8_channel_scales(const Tensor& t, size_t axis) {
    if (t.dtype() != DataType::kFloat32 || axis >= static_cast<size_t>(t.rank())) return {};
    const auto& dims = t.dims();
    int64_t outer = 1, inner = 1;
    for (size_t i = 0; i < axis; ++i) outer *= dims[i];
    for (size_t i = axis + 1; i < dims.size(); ++i) inner *= dims[i];
    const int64_t c = dims[axis];
    std::vector<double> amax(static_cast<size_t>(c), 0.0);
    const float* d = t.data<float>();
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t k = 0; k < c; ++k)
            for (int64_t i = 0; i < inner; ++i) {
                const double a = std::fabs(static_cast<double>(d[(o * c + k) * inner + i]));
                if (std::isfinite(a))
                    amax[static_cast<size_t>(k)] = std::max(amax[static_cast<size_t>(k)], a);
            }
    std::vector<float> out;
    for (double a : amax) out.push_back(int8_scale(a));
    return out;
}

Tensor fake_quant_copy(const Tensor& src, const std::vector<float>& scales, size_t axis,
                       RoundingMode mode, RoundingStats& stats, uint64_t& nonfinite_in) {
    if (src.dtype() != DataType::kFloat32 || src.numel() == 0 || scales.empty()) return src;
    const auto& dims = src.dims();
    int64_t c = 1, inner = 1;
    if (scales.size() > 1) {
        if (axis >= static_cast<size_t>(src.rank()) ||
            dims[axis] != static_cast<int64_t>(scales.size()))
            throw Error(ErrorKind::kInvalidInput,
                        "INT8: " + std::to_string(scales.size()) +
                            " per-channel scales do not match the tensor's axis " +
                            std::to_string(axis));
        c = dims[axis];
        for (size_t i = axis + 1; i < dims.size(); ++i) inner *= dims[i];
    }
    Tensor out = Tensor::zeros(DataType::kFloat32, dims);
    float* dst = reinterpret_cast<float*>(out.mutable_bytes());
    const float* s = src.data<float>();
    const uint64_t n = src.numel();
    for (uint64_t i = 0; i < n; ++i) {
        const float x = s[i];
        const float scale = scales[c == 1 ? 0 : static_cast<size_t>((i / inner) % c)];
        ++stats.values;
        if (!std::isfinite(x)) {
            ++nonfinite_in;
            if (std::isnan(x)) {
                dst[i] = x;
                ++stats.nonfinite;
                continue;
            }
        } else {
            stats.max_abs = std::max(stats.max_abs, std::fabs(static_cast<double>(x)));
        }
        bool clipped = false;
        const double q = quant_level(x, scale, mode, clipped);
        dst[i] = static_cast<float>(q * static_cast<double>(scale));
        stats.saturated += clipped;
        if (std::isfinite(x))
            stats.max_round_err =
                std::max(stats.max_round_err,
                         std::fabs(static_cast<double>(dst[i]) - static_cast<double>(x)));
    }
    return out;
}

}  // namespace pg::emu
