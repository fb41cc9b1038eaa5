// Reduced-precision formats for the emulator (--emu): which formats a node can run at, their
// names on the command line, and rounding a float32 value or tensor to a format's storage with a
// chosen rounding mode while counting what the rounding did (overflow, underflow to zero, ...).
// To add a format: add an enumerator, its names in precision.cc's name table and its
// FormatSpec in format_spec().
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace pg {
class ThreadPool;
}

namespace pg::emu {

enum class Precision { kFP32, kTF32, kFP16, kBF16, kFP8E4M3, kFP8E5M2, kINT8 };

// How a value between two representable neighbours is rounded.
enum class RoundingMode {
    kNearestEven,  // IEEE default: nearest, ties to the even mantissa
    kNearestAway,  // nearest, ties away from zero
    kTowardZero,   // truncation; never overflows to infinity (clamps to the largest finite)
};

// Parses "float32"/"fp32", "tf32", "float16"/"fp16"/"half", "bfloat16"/"bf16",
// "fp8"/"e4m3"/"e4m3fn"/"float8e4m3fn", "e5m2"/"float8e5m2", "int8" (case-insensitive).
// Throws kUsage naming the accepted spellings.
Precision parse_precision(const std::string& s);
// Canonical name: "float32", "tf32", "float16", "bfloat16", "fp8e4m3fn", "fp8e5m2", "int8".
const char* precision_name(Precision p);
// Parses "nearest-even", "nearest-away", "toward-zero". Throws kUsage.
RoundingMode parse_rounding_mode(const std::string& s);
const char* rounding_mode_name(RoundingMode m);

// A binary float format described by its mantissa bits and exponent range.
struct FormatSpec {
    int mant_bits = 23;     // explicit mantissa bits
    int min_exp = -126;     // exponent of the smallest normal number (subnormals below)
    double max_finite = 0;  // largest finite magnitude
    bool has_inf = true;    // overflow gives +-inf (else it saturates to +-max_finite)
};

// The storage format of `p` (kFP32: float32 itself). Throws kUnsupported for kINT8.
FormatSpec format_spec(Precision p);

// `x` rounded to the format of `p` (returned as float32; exact in float32 for every format).
// NaN stays NaN; infinities stay infinite, or saturate in formats without infinity.
float round_to(Precision p, float x, RoundingMode mode = RoundingMode::kNearestEven);
// The generic (double-based) rounding: the reference every fast path is diffed against.
float round_to_format(const FormatSpec& f, float x, RoundingMode mode);

// True when round_to_fast() has an exact bit-level path for (p, mode): FP16 nearest-even (via
// base/float16.h), BF16 and TF32 in every mode (mantissa bit masking).
bool has_fast_rounding(Precision p, RoundingMode mode);
// round_to(p, x, mode) through the fast path when has_fast_rounding(p, mode), else the generic
// routine; bit-identical to round_to_format(format_spec(p), x, mode) (unit-tested).
float round_to_fast(Precision p, float x, RoundingMode mode);

// What rounding a set of values did. Counts are element counts.
struct RoundingStats {
    uint64_t values = 0;       // elements rounded
    uint64_t overflow = 0;     // finite values beyond the format's largest finite value
    uint64_t underflow = 0;    // nonzero finite values that rounded to zero
    uint64_t nonfinite = 0;    // NaN / Inf after rounding
    double max_abs = 0;        // largest finite |x| before rounding
    double max_round_err = 0;  // largest |rounded - x| over finite results
    uint64_t saturated = 0;    // INT8 only: values clipped to [-128, 127] * scale
    // Smallest and largest finite value: filled only in the stats of a rounded tensor
    // (round_tensor's rounded_stats, representable_stats); +inf / -inf when there is none.
    double lowest = std::numeric_limits<double>::infinity();
    double highest = -std::numeric_limits<double>::infinity();
    void merge(const RoundingStats& o);
};

// Rounds every element of a float32 tensor in place (other dtypes are left alone) and adds what
// happened to `stats`. Large tensors are split over `pool` when given.
void round_tensor(Precision p, Tensor& t, RoundingMode mode, RoundingStats& stats,
                  ThreadPool* pool = nullptr);
// round_tensor that also adds to `rounded_stats` what rounded_copy(p, t, mode, ...) would report
// for the rounded tensor (rounding is idempotent: values, NaN/Inf count and largest finite |x|;
// no overflow, underflow or rounding error), so a consumer at `p` can skip that check.
void round_tensor(Precision p, Tensor& t, RoundingMode mode, RoundingStats& stats,
                  RoundingStats& rounded_stats, ThreadPool* pool);

// What round_tensor(p, t, ...) reports for a float32 tensor whose elements are all
// representable at `p`, without writing: values, NaN/Inf count and largest finite |x| (no
// overflow, underflow or rounding error), plus its lowest and highest finite value. Read-only
// and vectorized; split over `pool`.
RoundingStats representable_stats(Precision p, const Tensor& t, ThreadPool* pool = nullptr);

// A float32 tensor's rounding to `p` without touching `src`: returns `src` itself (shared
// buffer, no copy) when every element is already representable, else a rounded copy. Adds what
// the rounding did to `stats` (as round_tensor would) and the count of NaN/Inf elements of
// `src` to `nonfinite_in`. Other dtypes and kFP32 come back unchanged with no stats.
Tensor rounded_copy(Precision p, const Tensor& src, RoundingMode mode, RoundingStats& stats,
                    uint64_t& nonfinite_in, ThreadPool* pool = nullptr);

// ---- INT8 fake quantization (symmetric, zero point 0) ----
// x -> scale * clamp(round(x / scale), -128, 127), computed in double, returned as float32.
// `round` follows `mode` (nearest-even by default). NaN stays NaN; +-inf saturates. A scale
// <= 0 (a tensor that was all zeros at calibration) maps every finite value to 0.
float fake_quant_int8(float x, float scale, RoundingMode mode = RoundingMode::kNearestEven);

// The symmetric scale for a largest magnitude: amax / 127 (0 for amax 0 or not finite).
float int8_scale(double amax);

// Per-channel symmetric scales of a float32 tensor along `axis` (amax of each slice / 127).
std::vector<float> int8_channel_scales(const Tensor& t, size_t axis);

// A fake-quantized copy of a float32 tensor: one scale (per tensor) or scales.size() ==
// dims[axis] (per channel along `axis`). Adds to `stats` (values, saturated = values whose
// round(x / scale) fell outside [-128, 127], max_abs, max_round_err, nonfinite) and the NaN/Inf
// count of `src` to `nonfinite_in`. Other dtypes come back unchanged.
Tensor fake_quant_copy(const Tensor& src, const std::vector<float>& scales, size_t axis,
                       RoundingMode mode, RoundingStats& stats, uint64_t& nonfinite_in);

}  // namespace pg::emu
