// Exhaustive tests of the 8-bit and 4-bit float conversions (base/float8.h): every bit pattern
// decodes as an independent decoder written from the format definitions says, every finite
// pattern round-trips, every midpoint between neighbours rounds to even, and NaN / infinity /
// overflow follow ONNX's Cast tables in both saturate modes.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "base/float16.h"
#include "base/float8.h"

namespace pg {
namespace {

struct Case {
    const char* name;
    const MiniFloatFormat* fmt;
    int e, m, bias;
    int bits;           // 8, or 4 for E2M1
    bool nan_all_ones;  // E4M3FN: S.1111.111 is NaN
    bool nan_neg_zero;  // FNUZ: 1.0000.000 is NaN
    bool ieee;          // E5M2: all-ones exponent is Inf / NaN
    double max;
};

const std::vector<Case>& cases() {
    static const std::vector<Case> c = {
        {"E4M3FN", &kE4M3FN, 4, 3, 7, 8, true, false, false, 448.0},
        {"E4M3FNUZ", &kE4M3FNUZ, 4, 3, 8, 8, false, true, false, 240.0},
        {"E5M2", &kE5M2, 5, 2, 15, 8, false, false, true, 57344.0},
        {"E5M2FNUZ", &kE5M2FNUZ, 5, 2, 16, 8, false, true, false, 57344.0},
        {"E2M1", &kE2M1, 2, 1, 1, 4, false, false, false, 6.0},
    };
    return c;
}

// Straight from the definition: (-1)^S * 2^(E - bias) * 1.M, or 2^(1 - bias) * 0.M.
double reference_decode(uint32_t b, const Case& c) {
    const uint32_t sign = (b >> (c.bits - 1)) & 1, exp = (b >> c.m) & ((1u << c.e) - 1),
                   man = b & ((1u << c.m) - 1);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    if (c.nan_all_ones && exp == (1u << c.e) - 1 && man == (1u << c.m) - 1) return nan;
    if (c.nan_neg_zero && sign == 1 && exp == 0 && man == 0) return nan;
    if (c.ieee && exp == (1u << c.e) - 1) return man ? nan : (sign ? -INFINITY : INFINITY);
    const double frac = static_cast<double>(man) / std::pow(2.0, c.m);
    const double v = exp == 0 ? frac * std::pow(2.0, 1 - c.bias)
                              : (1.0 + frac) * std::pow(2.0, static_cast<int>(exp) - c.bias);
    return sign ? -v : v;
}

uint32_t enc(double x, const Case& c, bool sat) {
    return double_to_minifloat(x, *c.fmt, sat);
}

TEST(Float8, EveryPatternDecodes) {
    for (const Case& c : cases()) {
        for (uint32_t b = 0; b < (1u << c.bits); ++b) {
            const double want = reference_decode(b, c), got = minifloat_to_double(b, *c.fmt);
            if (std::isnan(want))
                EXPECT_TRUE(std::isnan(got)) << c.name << " " << b;
            else
                EXPECT_EQ(std::bit_cast<uint64_t>(got), std::bit_cast<uint64_t>(want))
                    << c.name << " " << b;
        }
    }
}

TEST(Float8, LargestValuesAndSmallestSubnormals) {
    for (const Case& c : cases()) {
        EXPECT_EQ(minifloat_to_double(c.fmt->max_finite, *c.fmt), c.max) << c.name;
        EXPECT_EQ(minifloat_to_double(1, *c.fmt), std::pow(2.0, 1 - c.bias - c.m)) << c.name;
    }
    EXPECT_EQ(float8e4m3fn::from_bits(0x7E).to_float(), 448.0f);
    EXPECT_EQ(float8e5m2::from_bits(0x01).to_float(), std::ldexp(1.0f, -16));
}

TEST(Float8, FinitePatternsRoundTrip) {
    for (const Case& c : cases()) {
        for (uint32_t b = 0; b < (1u << c.bits); ++b) {
            const double v = minifloat_to_double(b, *c.fmt);
            if (std::isnan(v) || std::isinf(v)) continue;
            for (bool sat : {true, false}) EXPECT_EQ(enc(v, c, sat), b) << c.name << " " << b;
            EXPECT_EQ(enc(static_cast<float>(v), c, true), b);  // through float too
        }
    }
}

// Between each pair of neighbouring finite codes: the midpoint goes to the even code, anything
// above or below it to the nearer code.
TEST(Float8, MidpointsRoundToEven) {
    for (const Case& c : cases()) {
        const uint32_t sign = 1u << (c.bits - 1);
        for (uint32_t b = 0; b < c.fmt->max_finite; ++b) {
            const double lo = minifloat_to_double(b, *c.fmt),
                         hi = minifloat_to_double(b + 1, *c.fmt);
            const double mid = (lo + hi) / 2;
            const uint32_t even = (b & 1) ? b + 1 : b;
            for (bool sat : {true, false}) {
                EXPECT_EQ(enc(mid, c, sat), even) << c.name << " " << b;
                EXPECT_EQ(enc(std::nextafter(mid, 1e9), c, sat), b + 1) << c.name << " " << b;
                EXPECT_EQ(enc(std::nextafter(mid, 0.0), c, sat), b) << c.name << " " << b;
                const uint32_t neg_even = even == 0 && c.nan_neg_zero ? 0 : (even | sign);
                EXPECT_EQ(enc(-mid, c, sat), neg_even) << c.name << " " << b;
                EXPECT_EQ(enc(-std::nextafter(mid, 1e9), c, sat), (b + 1) | sign)
                    << c.name << " " << b;
            }
        }
    }
}

TEST(Float8, TinyValuesRoundToSignedZero) {
    EXPECT_EQ(enc(-1e-7, cases()[0], true), 0x80u);  // E4M3FN keeps -0
    EXPECT_EQ(enc(-1e-7, cases()[1], true), 0x00u);  // FNUZ has no -0
    EXPECT_EQ(enc(-0.0, cases()[3], false), 0x00u);
    EXPECT_EQ(enc(-0.0, cases()[4], true), 0x8u);  // E2M1 keeps -0
    EXPECT_EQ(enc(1e-300, cases()[2], true), 0x00u);
    EXPECT_EQ(enc(5e-324, cases()[2], true), 0x00u);  // double subnormal
}

// ONNX Cast: saturate clamps infinities and overflow to +-max; otherwise E5M2 overflows to Inf,
// E4M3FN to its NaN (sign kept), the FNUZ formats to 0x80. E2M1 always saturates.
TEST(Float8, OverflowInfinityAndNaN) {
    struct Row {
        int index;
        double just_over;  // the smallest double above the overflow midpoint
        uint32_t sat_pos, sat_neg, nosat_pos, nosat_neg, nan_pos, nan_neg;
    };
    const double inf = INFINITY;
    const Row rows[] = {
        {0, std::nextafter(464.0, inf), 0x7E, 0xFE, 0x7F, 0xFF, 0x7F, 0xFF},
        {1, 248.0, 0x7F, 0xFF, 0x80, 0x80, 0x80, 0x80},  // 240 is odd: the midpoint overflows
        {2, 61440.0, 0x7B, 0xFB, 0x7C, 0xFC, 0x7E, 0xFE},
        {3, 61440.0, 0x7F, 0xFF, 0x80, 0x80, 0x80, 0x80},
        {4, 7.0, 0x7, 0xF, 0x7, 0xF, 0x8, 0x8},
    };
    for (const Row& r : rows) {
        const Case& c = cases()[r.index];
        for (double big : {r.just_over, 1e6, 1e300, inf}) {
            EXPECT_EQ(enc(big, c, true), r.sat_pos) << c.name << " " << big;
            EXPECT_EQ(enc(-big, c, true), r.sat_neg) << c.name << " " << big;
            EXPECT_EQ(enc(big, c, false), r.nosat_pos) << c.name << " " << big;
            EXPECT_EQ(enc(-big, c, false), r.nosat_neg) << c.name << " " << big;
        }
        const double nan = std::numeric_limits<double>::quiet_NaN();
        EXPECT_EQ(enc(nan, c, true), r.nan_pos) << c.name;
        EXPECT_EQ(enc(-nan, c, false), r.nan_neg) << c.name;
    }
    // E5M2's infinities decode and re-encode.
    EXPECT_EQ(minifloat_to_double(0x7C, kE5M2), inf);
    EXPECT_EQ(enc(-inf, cases()[2], false), 0xFCu);
    // Just below the E4M3FN overflow midpoint rounds down to 448 even without saturation.
    EXPECT_EQ(enc(463.9, cases()[0], false), 0x7Eu);
    EXPECT_EQ(enc(464.0, cases()[0], false), 0x7Eu);
}

TEST(Float8, HalfAndBFloat16FormatsAgreeWithFloat16Header) {
    // The generic encoder on the 16-bit formats matches base/float16 on every midpoint region.
    for (uint32_t h = 0; h < 0x7C00; h += 7) {
        const float v = half_bits_to_float(static_cast<uint16_t>(h));
        EXPECT_EQ(minifloat_to_double(h, kHalfFormat), v);
        const float probe = std::nextafter(v, INFINITY) * 1.0003f;
        EXPECT_EQ(double_to_minifloat(probe, kHalfFormat, false), float_to_half_bits(probe)) << h;
        EXPECT_EQ(double_to_minifloat(probe, kBFloat16Format, false), float_to_bfloat16_bits(probe))
            << h;
    }
}

TEST(Float8E8M0, EveryPatternDecodes) {
    for (uint32_t b = 0; b < 255; ++b)
        EXPECT_EQ(float8e8m0_bits_to_float(static_cast<uint8_t>(b)),
                  std::pow(2.0, static_cast<int>(b) - 127));
    EXPECT_TRUE(std::isnan(float8e8m0_bits_to_float(0xFF)));
}

TEST(Float8E8M0, PowersOfTwoAreExactInEveryMode) {
    for (int k = -126; k <= 127; ++k)
        for (auto mode : {E8M0Rounding::kUp, E8M0Rounding::kDown, E8M0Rounding::kNearest})
            EXPECT_EQ(float_to_float8e8m0_bits(std::ldexp(1.0f, k), true, mode), k + 127);
}

TEST(Float8E8M0, RoundingModesAndSaturation) {
    using R = E8M0Rounding;
    EXPECT_EQ(float_to_float8e8m0_bits(1.1f, true, R::kUp), 128);       // -> 2
    EXPECT_EQ(float_to_float8e8m0_bits(1.9f, true, R::kDown), 127);     // -> 1
    EXPECT_EQ(float_to_float8e8m0_bits(1.4f, true, R::kNearest), 127);  // -> 1
    EXPECT_EQ(float_to_float8e8m0_bits(1.5f, true, R::kNearest), 128);  // tie goes up
    EXPECT_EQ(float_to_float8e8m0_bits(-4.0f, true, R::kUp), 129);      // sign ignored
    EXPECT_EQ(float_to_float8e8m0_bits(3e38f, true, R::kUp), 254);      // saturates
    EXPECT_EQ(float_to_float8e8m0_bits(3e38f, false, R::kUp), 255);     // overflows to NaN
    EXPECT_EQ(float_to_float8e8m0_bits(INFINITY, true, R::kUp), 255);
    EXPECT_EQ(float_to_float8e8m0_bits(NAN, true, R::kDown), 255);
    EXPECT_EQ(float_to_float8e8m0_bits(0.0f, true, R::kUp), 0);
}

}  // namespace
}  // namespace pg
