// emu/precision.h: rounding to every emulated format at its boundaries (overflow, ties,
// subnormals, saturation) in each rounding mode, agreement of nearest-even with the storage
// conversions in base/ (float16.h, float8.h) over a sweep of float32 bit patterns, and the
// counters round_tensor keeps.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>

#include "base/error.h"
#include "base/float16.h"
#include "base/float8.h"
#include "emu/precision.h"

namespace pg::emu {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr RoundingMode kEven = RoundingMode::kNearestEven;
constexpr RoundingMode kAway = RoundingMode::kNearestAway;
constexpr RoundingMode kZero = RoundingMode::kTowardZero;

TEST(EmuPrecision, Float16OverflowBoundary) {
    EXPECT_EQ(round_to(Precision::kFP16, 65504.0f, kEven), 65504.0f);
    EXPECT_EQ(round_to(Precision::kFP16, 65519.996f, kEven), 65504.0f);
    EXPECT_EQ(round_to(Precision::kFP16, 65520.0f, kEven), kInf);  // tie -> even = 2^16 -> inf
    EXPECT_EQ(round_to(Precision::kFP16, -65520.0f, kEven), -kInf);
    EXPECT_EQ(round_to(Precision::kFP16, 65520.0f, kAway), kInf);
    EXPECT_EQ(round_to(Precision::kFP16, 65520.0f, kZero), 65504.0f);
    EXPECT_EQ(round_to(Precision::kFP16, 1e9f, kZero), 65504.0f);
    EXPECT_EQ(round_to(Precision::kFP16, 65505.5f, kEven), 65504.0f);  // 65504 + x in the tutorial
    EXPECT_EQ(round_to(Precision::kFP16, kInf, kZero), kInf);
}

TEST(EmuPrecision, Float16TiesAndSubnormals) {
    const float ulp1 = std::ldexp(1.0f, -10);
    EXPECT_EQ(round_to(Precision::kFP16, 1 + ulp1 / 2, kEven), 1.0f);
    EXPECT_EQ(round_to(Precision::kFP16, 1 + ulp1 / 2, kAway), 1 + ulp1);
    EXPECT_EQ(round_to(Precision::kFP16, 1 + 3 * ulp1 / 2, kEven), 1 + 2 * ulp1);
    EXPECT_EQ(round_to(Precision::kFP16, 1 + 3 * ulp1 / 2, kZero), 1 + ulp1);
    EXPECT_EQ(round_to(Precision::kFP16, -(1 + 3 * ulp1 / 2), kZero), -(1 + ulp1));
    const float tiny = std::ldexp(1.0f, -24);  // smallest subnormal
    EXPECT_EQ(round_to(Precision::kFP16, tiny / 2, kEven), 0.0f);
    EXPECT_EQ(round_to(Precision::kFP16, tiny / 2, kAway), tiny);
    EXPECT_EQ(round_to(Precision::kFP16, tiny * 1.5f, kEven), 2 * tiny);
    EXPECT_EQ(round_to(Precision::kFP16, tiny * 1.5f, kZero), tiny);
}

TEST(EmuPrecision, BFloat16Ties) {
    const float ulp = std::ldexp(1.0f, -7);
    EXPECT_EQ(round_to(Precision::kBF16, 1 + ulp / 2, kEven), 1.0f);
    EXPECT_EQ(round_to(Precision::kBF16, 1 + 3 * ulp / 2, kEven), 1 + 2 * ulp);
    EXPECT_EQ(round_to(Precision::kBF16, 1 + ulp / 2, kAway), 1 + ulp);
    EXPECT_EQ(round_to(Precision::kBF16, 1 + 3 * ulp / 2, kZero), 1 + ulp);
    EXPECT_EQ(round_to(Precision::kBF16, std::numeric_limits<float>::max(), kEven), kInf);
    EXPECT_EQ(round_to(Precision::kBF16, std::numeric_limits<float>::max(), kZero),
              std::bit_cast<float>(0x7F7F0000u));
}

TEST(EmuPrecision, Tf32KeepsTenMantissaBits) {
    const float ulp = std::ldexp(1.0f, -10);
    EXPECT_EQ(round_to(Precision::kTF32, 1 + ulp / 2, kEven), 1.0f);
    EXPECT_EQ(round_to(Precision::kTF32, 1 + 3 * ulp / 2, kEven), 1 + 2 * ulp);
    EXPECT_EQ(round_to(Precision::kTF32, 1 + ulp - std::ldexp(1.0f, -23), kZero), 1.0f);
    const float big = round_to(Precision::kTF32, 1e30f, kEven);
    EXPECT_EQ(std::bit_cast<uint32_t>(big) & 0x1FFFu, 0u);  // 13 low mantissa bits cleared
    EXPECT_LE(std::fabs(big - 1e30f), std::ldexp(1e30f, -11));
    EXPECT_EQ(round_to(Precision::kTF32, 98304.0f, kEven), 98304.0f);  // no float16 range limit
    EXPECT_EQ(round_to(Precision::kFP32, 1 + ulp / 3, kEven), 1 + ulp / 3);
}

TEST(EmuPrecision, Fp8SaturationPerFormat) {
    EXPECT_EQ(round_to(Precision::kFP8E4M3, 448.0f, kEven), 448.0f);
    EXPECT_EQ(round_to(Precision::kFP8E4M3, 464.0f, kEven), 448.0f);
    EXPECT_EQ(round_to(Precision::kFP8E4M3, 1e6f, kEven), 448.0f);
    EXPECT_EQ(round_to(Precision::kFP8E4M3, -kInf, kEven), -448.0f);
    EXPECT_TRUE(std::isnan(round_to(Precision::kFP8E4M3, NAN, kEven)));
    EXPECT_EQ(round_to(Precision::kFP8E4M3, 1.0625f, kEven), 1.0f);  // tie, 3 mantissa bits
    EXPECT_EQ(round_to(Precision::kFP8E4M3, 1.0625f, kAway), 1.125f);
    EXPECT_EQ(round_to(Precision::kFP8E5M2, 57344.0f, kEven), 57344.0f);
    EXPECT_EQ(round_to(Precision::kFP8E5M2, 61440.0f, kEven), kInf);
    EXPECT_EQ(round_to(Precision::kFP8E5M2, 61440.0f, kZero), 57344.0f);
    EXPECT_EQ(round_to(Precision::kFP8E5M2, 1.125f, kEven), 1.0f);
}

// Every 4099th float32 pattern (NaNs included): nearest-even agrees with base/'s encoders.
TEST(EmuPrecision, NearestEvenMatchesStorageConversions) {
    for (uint64_t b = 0; b <= 0xFFFFFFFFull; b += 4099) {
        const float x = std::bit_cast<float>(static_cast<uint32_t>(b));
        auto same = [&](float got, float want, const char* what) {
            if (std::isnan(want)) return std::isnan(got);
            if (got != want)
                ADD_FAILURE() << what << " x=" << x << " got " << got << " want " << want;
            return got == want;
        };
        if (!same(round_to(Precision::kFP16, x), half_bits_to_float(float_to_half_bits(x)),
                  "fp16") ||
            !same(round_to(Precision::kBF16, x), bfloat16_bits_to_float(float_to_bfloat16_bits(x)),
                  "bf16") ||
            !same(round_to(Precision::kFP8E4M3, x), float8e4m3fn::from_float(x, true).to_float(),
                  "e4m3fn") ||
            !same(round_to(Precision::kFP8E5M2, x), float8e5m2::from_float(x, false).to_float(),
                  "e5m2"))
            return;
    }
}

TEST(EmuPrecision, RoundTensorCounts) {
    Tensor t = Tensor::from_values<float>(DataType::kFloat32, {6},
                                          {65504.0f, 65520.0f, 1e-8f, -3.0f, NAN, 65510.0f});
    RoundingStats s;
    round_tensor(Precision::kFP16, t, kEven, s);
    EXPECT_EQ(s.values, 6u);
    EXPECT_EQ(s.overflow, 2u);   // 65520 and 65510 lie beyond 65504
    EXPECT_EQ(s.underflow, 1u);  // 1e-8
    EXPECT_EQ(s.nonfinite, 2u);  // inf from 65520, the NaN
    EXPECT_EQ(s.max_abs, 65520.0);
    EXPECT_EQ(s.max_round_err, 6.0);  // 65510 -> 65504
    EXPECT_EQ(t.data<float>()[1], kInf);
    EXPECT_EQ(t.data<float>()[5], 65504.0f);
    Tensor i = Tensor::from_values<int64_t>(DataType::kInt64, {1}, {70000});
    round_tensor(Precision::kFP16, i, kEven, s);  // not float32: untouched, not counted
    EXPECT_EQ(i.data<int64_t>()[0], 70000);
    EXPECT_EQ(s.values, 6u);
}

TEST(EmuPrecision, Names) {
    EXPECT_EQ(parse_precision("float16"), Precision::kFP16);
    EXPECT_EQ(parse_precision("HALF"), Precision::kFP16);
    EXPECT_EQ(parse_precision("fp32"), Precision::kFP32);
    EXPECT_EQ(parse_precision("bf16"), Precision::kBF16);
    EXPECT_EQ(parse_precision("e4m3fn"), Precision::kFP8E4M3);
    EXPECT_EQ(parse_precision("fp8"), Precision::kFP8E4M3);
    EXPECT_EQ(parse_precision("e5m2"), Precision::kFP8E5M2);
    EXPECT_EQ(parse_precision("tf32"), Precision::kTF32);
    EXPECT_STREQ(precision_name(Precision::kBF16), "bfloat16");
    EXPECT_EQ(parse_rounding_mode("toward-zero"), kZero);
    EXPECT_STREQ(rounding_mode_name(kAway), "nearest-away");
    try {
        parse_precision("fp7");
        ADD_FAILURE();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    }
    try {
        format_spec(Precision::kINT8);
        ADD_FAILURE();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
    }
}

}  // namespace
}  // namespace pg::emu
