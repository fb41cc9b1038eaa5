// NonMaxSuppression selection order and thresholds, plus the small ops of misc_linalg.cc
// (Shrink, Det).
#include <gtest/gtest.h>

#include "base/error.h"
#include "support/op_runner.h"

namespace pg {
namespace {

using ir::Attribute;
using test::f32;
using test::i64;
using test::run_op;

std::vector<int64_t> values_i64(const Tensor& t) {
    return std::vector<int64_t>(t.data<int64_t>(), t.data<int64_t>() + t.numel());
}

// Boxes 0 and 1 are identical, box 2 lies apart; [y1, x1, y2, x2].
const Tensor kBoxes = f32({1, 3, 4}, {0, 0, 1, 1, 0, 0, 1, 1, 0, 2, 1, 3});

TEST(OpsDetection, NmsEqualScoresPreferLowerIndex) {
    auto out = run_op(
        "NonMaxSuppression",
        {kBoxes, f32({1, 1, 3}, {0.5f, 0.5f, 0.9f}), i64({1}, {10}), f32({1}, {0.5f})}, {}, 11);
    EXPECT_EQ(out[0].dims(), (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(values_i64(out[0]), (std::vector<int64_t>{0, 0, 2, 0, 0, 0}));
}

TEST(OpsDetection, NmsIouMustExceedThreshold) {
    // Identical boxes have IoU 1: not suppressed at threshold 1, suppressed below it.
    const Tensor scores = f32({1, 1, 3}, {0.5f, 0.6f, 0.1f});
    auto at_one =
        run_op("NonMaxSuppression", {kBoxes, scores, i64({1}, {10}), f32({1}, {1.0f})}, {}, 11);
    EXPECT_EQ(values_i64(at_one[0]), (std::vector<int64_t>{0, 0, 1, 0, 0, 0, 0, 0, 2}));
    auto below =
        run_op("NonMaxSuppression", {kBoxes, scores, i64({1}, {10}), f32({1}, {0.99f})}, {}, 11);
    EXPECT_EQ(values_i64(below[0]), (std::vector<int64_t>{0, 0, 1, 0, 0, 2}));
}

TEST(OpsDetection, NmsScoreThresholdIsStrictAndLimitApplies) {
    const Tensor scores = f32({1, 1, 3}, {0.5f, 0.6f, 0.1f});
    auto out = run_op("NonMaxSuppression",
                      {kBoxes, scores, i64({1}, {10}), f32({1}, {1.0f}), f32({1}, {0.5f})}, {}, 11);
    EXPECT_EQ(values_i64(out[0]), (std::vector<int64_t>{0, 0, 1}));
    auto limited = run_op("NonMaxSuppression", {kBoxes, scores, i64({1}, {1})}, {}, 11);
    EXPECT_EQ(values_i64(limited[0]), (std::vector<int64_t>{0, 0, 1}));
}

TEST(OpsDetection, NmsWithoutMaxOutputSelectsNothing) {
    auto out = run_op("NonMaxSuppression", {kBoxes, f32({1, 1, 3}, {0.5f, 0.6f, 0.1f})}, {}, 11);
    EXPECT_EQ(out[0].dims(), (std::vector<int64_t>{0, 3}));
}

TEST(OpsDetection, NmsCenterPointBoxes) {
    // [x_center, y_center, w, h]: boxes 0 and 1 overlap by half (IoU 1/3), box 2 is far away.
    const Tensor boxes = f32({1, 3, 4}, {0, 0, 2, 2, 1, 0, 2, 2, 10, 10, 2, 2});
    const Tensor scores = f32({1, 1, 3}, {0.9f, 0.8f, 0.7f});
    auto keep = run_op("NonMaxSuppression", {boxes, scores, i64({1}, {5}), f32({1}, {0.4f})},
                       ir::attrs(Attribute::make_int("center_point_box", 1)), 11);
    EXPECT_EQ(keep[0].dims()[0], 3);
    auto drop = run_op("NonMaxSuppression", {boxes, scores, i64({1}, {5}), f32({1}, {0.3f})},
                       ir::attrs(Attribute::make_int("center_point_box", 1)), 11);
    EXPECT_EQ(values_i64(drop[0]), (std::vector<int64_t>{0, 0, 0, 0, 0, 2}));
}

TEST(OpsDetection, NmsMismatchedShapesAreInvalidInput) {
    try {
        run_op("NonMaxSuppression", {kBoxes, f32({1, 1, 2}, {0.5f, 0.6f}), i64({1}, {10})}, {}, 11);
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
    }
}

TEST(OpsMiscLinalg, ShrinkSoftAndHard) {
    auto soft = run_op(
        "Shrink", {f32({5}, {-2, -1, 0, 1, 2})},
        ir::attrs(Attribute::make_float("lambd", 1.5f), Attribute::make_float("bias", 1.5f)), 9);
    EXPECT_EQ(test::values_f32(soft[0]), (std::vector<float>{-0.5f, 0, 0, 0, 0.5f}));
    auto hard = run_op("Shrink", {f32({5}, {-2, -1, 0, 1, 2})},
                       ir::attrs(Attribute::make_float("lambd", 1.5f)), 9);
    EXPECT_EQ(test::values_f32(hard[0]), (std::vector<float>{-2, 0, 0, 0, 2}));
}

TEST(OpsMiscLinalg, DetBatchedWithPivoting) {
    // [[0, 1], [1, 0]] needs a row swap: det -1. [[2, 0], [0, 3]]: 6.
    auto out = run_op("Det", {f32({2, 2, 2}, {0, 1, 1, 0, 2, 0, 0, 3})}, {}, 11);
    EXPECT_EQ(out[0].dims(), (std::vector<int64_t>{2}));
    EXPECT_EQ(test::values_f32(out[0]), (std::vector<float>{-1, 6}));
    EXPECT_THROW(run_op("Det", {f32({2, 3}, {1, 2, 3, 4, 5, 6})}, {}, 11), Error);
}

}  // namespace
}  // namespace pg
