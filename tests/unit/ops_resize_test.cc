// Resize with hostile scales: an output dim past int64 (1e30, inf) or a NaN / non-positive
// scale is invalid input with a message naming it; the cast of such a dim to int64 was undefined.
// Also empty axes and integer overshoot.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "base/error.h"
#include "support/expect_error.h"
#include "support/op_runner.h"

namespace pg {
namespace {

// The message of the kInvalidInput error Resize gives for `scales` on a 1x1x2x2 input.
std::string refusal(std::vector<float> scales) {
    try {
        test::run_op("Resize",
                     {test::f32({1, 1, 2, 2}, {1, 2, 3, 4}), Tensor(), test::f32({4}, scales)}, {},
                     13);
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput) << e.what();
        return e.what();
    }
    return "no error";
}

TEST(OpsResize, HostileScalesAreInvalidInput) {
    EXPECT_NE(refusal({1, 1, 1e30f, 1e30f}).find("output dim of 2e+30"), std::string::npos);
    EXPECT_NE(refusal({1, 1, INFINITY, 1}).find("output dim of inf"), std::string::npos);
    EXPECT_NE(refusal({1, 1, std::nanf(""), 1}).find("positive"), std::string::npos);
    EXPECT_NE(refusal({1, 1, -2, 1}).find("positive"), std::string::npos);
}

// Sizes: a negative one is refused; sizes whose values could not fit in memory are refused at
// once (they filled per-axis tables for minutes before).
TEST(OpsResize, HostileSizesAreInvalidInput) {
    auto sized = [](std::vector<int64_t> sizes) -> std::string {
        try {
            test::run_op(
                "Resize",
                {test::f32({1, 1, 2, 2}, {1, 2, 3, 4}), Tensor(), Tensor(), test::i64({4}, sizes)},
                {}, 13);
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput) << e.what();
            return e.what();
        }
        return "no error";
    };
    EXPECT_NE(sized({1, 1, -5, 2}).find("must not be negative"), std::string::npos);
    EXPECT_NE(sized({1, 1, 700000000, 800000000}).find("would need"), std::string::npos);
    EXPECT_EQ(sized({1, 1, 3, 3}), "no error");
}

// tf_crop_and_resize with a NaN or huge roi: those outputs take extrapolation_value (the NaN
// coordinate passed the range test and its neighbours' indices read far outside the input: the
// process ended with SIGSEGV).
TEST(OpsResize, NonFiniteRoiExtrapolates) {
    const float nan = std::nanf("");
    const std::vector<Tensor> in{test::f32({1, 1, 2, 2}, {1, 2, 3, 4}),
                                 test::f32({8}, {0, 0, nan, 0, 1, 1, 1e30f, 1}),
                                 test::f32({4}, {1, 1, 2, 2})};
    const Tensor y =
        test::run_op("Resize", in,
                     ir::attrs(ir::Attribute::make_string("mode", "linear"),
                               ir::Attribute::make_string("coordinate_transformation_mode",
                                                          "tf_crop_and_resize"),
                               ir::Attribute::make_float("extrapolation_value", 7.0f)),
                     13)
            .at(0);
    ASSERT_EQ(y.dims(), (std::vector<int64_t>{1, 1, 4, 4}));
    for (const float v : test::values_f32(y)) EXPECT_EQ(v, 7.0f);
}

TEST(OpsResize, OrdinaryScalesStillWork) {
    const Tensor y =
        test::run_op(
            "Resize",
            {test::f32({1, 1, 2, 2}, {1, 2, 3, 4}), Tensor(), test::f32({4}, {1, 1, 2, 2})}, {}, 13)
            .at(0);
    EXPECT_EQ(y.dims(), (std::vector<int64_t>{1, 1, 4, 4}));
}

// An axis of size 0 has nothing to sample from: sizes that grow it are refused (the cubic, linear
// and nearest modes read past the empty input: the input sweep, tests/conformance/); sizes of 0
// there give an empty output.
TEST(OpsResize, AnEmptyAxisCannotGrow) {
    auto sized = [](std::vector<int64_t> sizes, const std::string& mode) {
        return test::run_op("Resize",
                            {Tensor::zeros(DataType::kFloat32, {1, 1, 0, 2}), Tensor(), Tensor(),
                             test::i64({4}, sizes)},
                            ir::attrs(ir::Attribute::make_string("mode", mode)), 13)
            .at(0);
    };
    for (const char* mode : {"nearest", "linear", "cubic"}) {
        test::expect_error([&] { sized({1, 1, 3, 3}, mode); }, ErrorKind::kInvalidInput,
                           "axis 2 has size 0 and cannot be resized to 3");
        EXPECT_EQ(sized({1, 1, 0, 3}, mode).dims(), (std::vector<int64_t>{1, 1, 0, 3})) << mode;
    }
}

// A cubic resize of integers overshoots next to a step (0, 0, 255, 255 upsampled: about -18 and
// 273); the values saturate to the type's range, where a cast from double past it was undefined
// (and on x86 wrapped 273 to 17).
TEST(OpsResize, IntegerCubicOvershootSaturates) {
    const std::vector<float> steps{0, 0, 255, 255};
    const auto cubic = [] { return ir::attrs(ir::Attribute::make_string("mode", "cubic")); };
    const Tensor scales = test::f32({4}, {1, 1, 1, 2});
    const Tensor wide =
        test::run_op("Resize", {test::f32({1, 1, 1, 4}, steps), Tensor(), scales}, cubic(), 13)
            .at(0);
    const Tensor bytes =
        test::run_op(
            "Resize",
            {Tensor::from_values<uint8_t>(DataType::kUInt8, {1, 1, 1, 4}, {0, 0, 255, 255}),
             Tensor(), scales},
            cubic(), 13)
            .at(0);
    ASSERT_EQ(bytes.numel(), 8u);
    const std::vector<float> ref = test::values_f32(wide);
    EXPECT_GT(*std::max_element(ref.begin(), ref.end()), 255.0f);  // it does overshoot
    EXPECT_LT(*std::min_element(ref.begin(), ref.end()), 0.0f);
    for (size_t i = 0; i < ref.size(); ++i)
        EXPECT_EQ(bytes.data<uint8_t>()[i], std::clamp(std::nearbyint(ref[i]), 0.0f, 255.0f)) << i;
}

// pytorch_half_pixel with an output of length 1 reads input coordinate 0 (ONNX's text; ONNX
// Runtime agrees). With antialiasing the filter spans the whole axis, so the coordinate shows:
// 0 gives the taps 1, .75, .5, .25 at columns 0..3 plus .75, .5, .25 clamped onto column 0
// (weights 2.5, .75, .5, .25 over 4: 1.625); -0.5, what this build read, gave 1.4375.
TEST(OpsResize, PytorchHalfPixelLengthOneReadsCoordinateZero) {
    const Tensor y =
        test::run_op("Resize",
                     {test::f32({1, 1, 1, 4}, {1, 2, 3, 4}), Tensor(), Tensor(),
                      test::i64({4}, {1, 1, 1, 1})},
                     ir::attrs(ir::Attribute::make_string("mode", "linear"),
                               ir::Attribute::make_string("coordinate_transformation_mode",
                                                          "pytorch_half_pixel"),
                               ir::Attribute::make_int("antialias", 1)),
                     18)
            .at(0);
    EXPECT_NEAR(test::values_f32(y)[0], (2.5 * 1 + 0.75 * 2 + 0.5 * 3 + 0.25 * 4) / 4, 1e-6);
}

}  // namespace
}  // namespace pg
