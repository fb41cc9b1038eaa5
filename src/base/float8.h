// 8-bit and 4-bit float storage types (ONNX FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2,
// FLOAT8E5M2FNUZ, FLOAT8E8M0, FLOAT4E2M1) and exact conversions to and from float/double.
// Decoding is exact. Encoding rounds to nearest, ties to even, once (from double, so a float or
// double source is rounded a single time) and treats NaN, infinities and overflow as ONNX's Cast
// specifies (saturate = clamp to the largest finite value). Every format is described by a
// MiniFloatFormat; to add one, add a constant below and its handling of specials in float8.cc.
#pragma once

#include <cstdint>

#include "base/dtype.h"

namespace pg {

// How a format spends its special bit patterns.
enum class MiniFloatSpecials {
    kIeee,  // all-ones exponent: infinity (mantissa 0) or NaN (E5M2, float16, bfloat16)
    kFn,    // only S.1111.111 is NaN; no infinity (E4M3FN)
    kFnuz,  // 1.000...0 (negative zero) is the only NaN; no infinity, no -0 (E4M3FNUZ, E5M2FNUZ)
    kNone,  // no NaN, no infinity (FLOAT4E2M1); NaN encodes as 1.000...0 like ml_dtypes
};

// A binary float format with a sign bit, exp_bits exponent bits and mant_bits mantissa bits.
struct MiniFloatFormat {
    int exp_bits;
    int mant_bits;
    int bias;
    uint32_t max_finite;  // magnitude bits (sign excluded) of the largest finite value
    MiniFloatSpecials specials;
};

inline constexpr MiniFloatFormat kE4M3FN{4, 3, 7, 0x7E, MiniFloatSpecials::kFn};
inline constexpr MiniFloatFormat kE4M3FNUZ{4, 3, 8, 0x7F, MiniFloatSpecials::kFnuz};
inline constexpr MiniFloatFormat kE5M2{5, 2, 15, 0x7B, MiniFloatSpecials::kIeee};
inline constexpr MiniFloatFormat kE5M2FNUZ{5, 2, 16, 0x7F, MiniFloatSpecials::kFnuz};
inline constexpr MiniFloatFormat kE2M1{2, 1, 1, 0x7, MiniFloatSpecials::kNone};
inline constexpr MiniFloatFormat kHalfFormat{5, 10, 15, 0x7BFF, MiniFloatSpecials::kIeee};
inline constexpr MiniFloatFormat kBFloat16Format{8, 7, 127, 0x7F7F, MiniFloatSpecials::kIeee};

// The format of a float8 / float4 / float16 / bfloat16 type, or nullptr (float8e8m0 and every
// other type).
const MiniFloatFormat* minifloat_format(DataType dt);

// Bits of `fmt` -> double (exact; NaN patterns give a quiet NaN with the pattern's sign).
double minifloat_to_double(uint32_t bits, const MiniFloatFormat& fmt);
// double -> bits of `fmt`, round to nearest even. saturate: infinities and values rounding past
// the largest finite value become +-max_finite (kNone formats always saturate); otherwise they
// become infinity (kIeee) or NaN.
uint32_t double_to_minifloat(double x, const MiniFloatFormat& fmt, bool saturate);

// FLOAT8E8M0: an unsigned power of two 2^(bits-127); 0xFF is NaN, there is no zero.
enum class E8M0Rounding { kUp, kDown, kNearest };
float float8e8m0_bits_to_float(uint8_t bits);
// float -> E8M0 as ONNX's Cast-25 (numpy_helper.to_float8e8m0): the sign is ignored, NaN and
// infinity give 0xFF, saturate keeps rounding from reaching 0xFF.
uint8_t float_to_float8e8m0_bits(float f, bool saturate, E8M0Rounding mode);

// Storage types: bits only, arithmetic happens in float32.
template <const MiniFloatFormat& F>
struct MiniFloat {
    uint8_t bits = 0;
    static MiniFloat from_bits(uint8_t b) { return MiniFloat{b}; }
    static MiniFloat from_float(float f, bool saturate = true) {
        return MiniFloat{static_cast<uint8_t>(double_to_minifloat(f, F, saturate))};
    }
    float to_float() const { return static_cast<float>(minifloat_to_double(bits, F)); }
};
using float8e4m3fn = MiniFloat<kE4M3FN>;
using float8e4m3fnuz = MiniFloat<kE4M3FNUZ>;
using float8e5m2 = MiniFloat<kE5M2>;
using float8e5m2fnuz = MiniFloat<kE5M2FNUZ>;
using float4e2m1 = MiniFloat<kE2M1>;  // one nibble in the low 4 bits

}  // namespace pg
