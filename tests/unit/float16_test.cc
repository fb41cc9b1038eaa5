// Exhaustive tests of base/float16.h: all 65536 float16 and bfloat16 patterns decode as the
// format definition says and round-trip through float; float -> 16-bit rounding is checked at
// every midpoint between neighbouring finite values (subnormals included) and at the overflow
// boundary (65504 / 65520 for float16).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>

#include "base/float16.h"

namespace pg {
namespace {

// (-1)^S * 2^(E - bias) * 1.M, or 2^(1 - bias) * 0.M; all-ones exponent = Inf / NaN.
double reference(uint32_t bits, int e, int m, int bias) {
    const uint32_t sign = bits >> (e + m), exp = (bits >> m) & ((1u << e) - 1),
                   man = bits & ((1u << m) - 1);
    double v;
    if (exp == (1u << e) - 1)
        v = man ? NAN : INFINITY;
    else if (exp == 0)
        v = man / std::pow(2.0, m) * std::pow(2.0, 1 - bias);
    else
        v = (1 + man / std::pow(2.0, m)) * std::pow(2.0, static_cast<int>(exp) - bias);
    return sign ? -v : v;
}

TEST(Float16, EveryHalfPatternDecodesAndRoundTrips) {
    for (uint32_t h = 0; h < 65536; ++h) {
        const float f = half_bits_to_float(static_cast<uint16_t>(h));
        const double want = reference(h, 5, 10, 15);
        if (std::isnan(want)) {
            ASSERT_TRUE(std::isnan(f)) << h;
            const uint16_t back = float_to_half_bits(f);
            EXPECT_EQ(back & 0x7C00u, 0x7C00u) << h;
            EXPECT_NE(back & 0x3FFu, 0u) << h;
            EXPECT_EQ(back & 0x8000u, h & 0x8000u) << h;
            continue;
        }
        ASSERT_EQ(static_cast<double>(f), want) << h;
        ASSERT_EQ(std::signbit(f), (h & 0x8000u) != 0) << h;
        ASSERT_EQ(float_to_half_bits(f), h) << h;
        ASSERT_EQ(float16::from_float(f).bits, h);
    }
}

TEST(Float16, EveryBFloat16PatternDecodesAndRoundTrips) {
    for (uint32_t b = 0; b < 65536; ++b) {
        const float f = bfloat16_bits_to_float(static_cast<uint16_t>(b));
        const double want = reference(b, 8, 7, 127);
        if (std::isnan(want)) {
            ASSERT_TRUE(std::isnan(f)) << b;
            EXPECT_TRUE(std::isnan(bfloat16_bits_to_float(float_to_bfloat16_bits(f)))) << b;
            continue;
        }
        ASSERT_EQ(static_cast<double>(f), want) << b;
        ASSERT_EQ(float_to_bfloat16_bits(f), b) << b;
    }
}

// Every pair of neighbouring finite positive values (lo, hi): the midpoint (exact in float) goes
// to the even pattern, the floats just above and below it to hi and lo; same for negatives.
template <typename Dec, typename Enc>
void check_midpoints(uint32_t last_finite, Dec dec, Enc enc) {
    for (uint32_t b = 0; b < last_finite; ++b) {
        const float lo = dec(b), hi = dec(b + 1);
        const double exact_mid = (static_cast<double>(lo) + hi) / 2;
        const float mid = static_cast<float>(exact_mid);
        ASSERT_EQ(static_cast<double>(mid), exact_mid) << b;  // representable in float
        const uint32_t even = (b & 1) ? b + 1 : b;
        ASSERT_EQ(enc(mid), even) << b;
        ASSERT_EQ(enc(std::nextafter(mid, INFINITY)), b + 1) << b;
        ASSERT_EQ(enc(std::nextafter(mid, 0.0f)), b) << b;
        ASSERT_EQ(enc(-mid), even | 0x8000u) << b;
        ASSERT_EQ(enc(-std::nextafter(mid, INFINITY)), (b + 1) | 0x8000u) << b;
    }
}

TEST(Float16, HalfRoundsToNearestEvenAtEveryMidpoint) {
    check_midpoints(
        0x7BFF, [](uint32_t b) { return half_bits_to_float(static_cast<uint16_t>(b)); },
        [](float f) { return static_cast<uint32_t>(float_to_half_bits(f)); });
}

TEST(Float16, BFloat16RoundsToNearestEvenAtEveryMidpoint) {
    check_midpoints(
        0x7F7F, [](uint32_t b) { return bfloat16_bits_to_float(static_cast<uint16_t>(b)); },
        [](float f) { return static_cast<uint32_t>(float_to_bfloat16_bits(f)); });
}

TEST(Float16, HalfOverflowBoundary) {
    EXPECT_EQ(float_to_half_bits(65504.0f), 0x7BFF);
    EXPECT_EQ(float_to_half_bits(std::nextafter(65520.0f, 0.0f)), 0x7BFF);  // below the midpoint
    EXPECT_EQ(float_to_half_bits(65520.0f), 0x7C00);  // the midpoint rounds to even: infinity
    EXPECT_EQ(float_to_half_bits(-65520.0f), 0xFC00);
    EXPECT_EQ(float_to_half_bits(1e10f), 0x7C00);
    EXPECT_EQ(float_to_half_bits(INFINITY), 0x7C00);
    EXPECT_EQ(float_to_half_bits(-INFINITY), 0xFC00);
}

TEST(Float16, HalfUnderflowBoundary) {
    const float min_sub = std::ldexp(1.0f, -24);
    EXPECT_EQ(float_to_half_bits(min_sub / 2), 0x0000);  // tie with zero: even
    EXPECT_EQ(float_to_half_bits(std::nextafter(min_sub / 2, 1.0f)), 0x0001);
    EXPECT_EQ(float_to_half_bits(-min_sub / 4), 0x8000);
    EXPECT_EQ(float_to_half_bits(std::ldexp(1.0f, -140)), 0x0000);
    EXPECT_EQ(float_to_half_bits(std::numeric_limits<float>::denorm_min()), 0x0000);
}

TEST(Float16, BFloat16OverflowAndNaN) {
    const float max = bfloat16_bits_to_float(0x7F7F);
    const float next = std::bit_cast<float>(0x7F7F8000u);  // midpoint between max and 2^128
    EXPECT_EQ(float_to_bfloat16_bits(std::nextafter(next, 0.0f)), 0x7F7F);
    EXPECT_EQ(float_to_bfloat16_bits(next), 0x7F80);  // ties to even: infinity
    EXPECT_EQ(float_to_bfloat16_bits(max), 0x7F7F);
    EXPECT_EQ(float_to_bfloat16_bits(std::bit_cast<float>(0x7F800001u)) & 0x7FC0u,
              0x7FC0u);  // quiet
}

}  // namespace
}  // namespace pg
