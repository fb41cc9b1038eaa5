// Resize with hostile scales: an output dim past int64 (1e30, inf) or a NaN / non-positive
// scale is invalid input with a message naming it; the cast of such a dim to int64 was undefined.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "base/error.h"
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

}  // namespace
}  // namespace pg
