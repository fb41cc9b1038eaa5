// 16-bit float storage types. Storage only: arithmetic happens in float32 after conversion.
// Conversions round to nearest, ties to even; NaN stays NaN (quiet), overflow goes to infinity.
// The 8-bit and 4-bit formats live beside these in the precision layer's files.
#pragma once

#include <bit>
#include <cstdint>

namespace pg {

// IEEE 754 binary16 bits -> float32 (exact).
float half_bits_to_float(uint16_t h);
// float32 -> IEEE 754 binary16 bits, round to nearest even.
uint16_t float_to_half_bits(float f);
// bfloat16 bits -> float32 (exact).
inline float bfloat16_bits_to_float(uint16_t b) {
    return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}
// float32 -> bfloat16 bits, round to nearest even; NaN stays a quiet NaN.
uint16_t float_to_bfloat16_bits(float f);

// IEEE binary16 storage type.
struct float16 {
    uint16_t bits = 0;
    static float16 from_bits(uint16_t b) { return float16{b}; }
    static float16 from_float(float f) { return float16{float_to_half_bits(f)}; }
    float to_float() const { return half_bits_to_float(bits); }
};

// bfloat16 storage type.
struct bfloat16 {
    uint16_t bits = 0;
    static bfloat16 from_bits(uint16_t b) { return bfloat16{b}; }
    static bfloat16 from_float(float f) { return bfloat16{float_to_bfloat16_bits(f)}; }
    float to_float() const { return bfloat16_bits_to_float(bits); }
};

}  // namespace pg
