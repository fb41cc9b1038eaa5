// Loss kernels: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss with weights,
// ignore_index, reductions, N-D inputs and invalid class indices.
#include <gtest/gtest.h>

#include <cmath>

#include "base/error.h"
#include "base/float16.h"
#include "support/op_runner.h"

namespace pg {
namespace {

using test::f32;
using test::i64;
using test::run_op;

ir::Attribute reduction(const std::string& r) {
    return ir::Attribute::make_string("reduction", r);
}

// x holds log-probabilities of N=2 samples over C=3 classes; targets 2 and 1.
const Tensor kLogProb = f32({2, 3}, {-1, -2, -3, -0.5f, -1.5f, -2.5f});
const Tensor kTarget = i64({2}, {2, 1});
const Tensor kWeight = f32({3}, {1, 2, 3});

TEST(OpsLoss, NllWeightedMeanDividesByWeightSum) {
    auto out = run_op("NegativeLogLikelihoodLoss", {kLogProb, kTarget, kWeight}, {}, 13);
    ASSERT_EQ(out[0].rank(), 0);
    EXPECT_FLOAT_EQ(test::values_f32(out[0])[0], (9.0f + 3.0f) / 5.0f);  // w=3*3, 2*1.5
}

TEST(OpsLoss, NllSumAndNone) {
    auto sum = run_op("NegativeLogLikelihoodLoss", {kLogProb, kTarget, kWeight},
                      ir::attrs(reduction("sum")), 13);
    EXPECT_FLOAT_EQ(test::values_f32(sum[0])[0], 12.0f);
    auto none =
        run_op("NegativeLogLikelihoodLoss", {kLogProb, kTarget}, ir::attrs(reduction("none")), 13);
    EXPECT_EQ(none[0].dims(), (std::vector<int64_t>{2}));
    EXPECT_EQ(test::values_f32(none[0]), (std::vector<float>{3.0f, 1.5f}));
}

TEST(OpsLoss, NllIgnoreIndexDropsElementAndItsWeight) {
    auto mean = run_op("NegativeLogLikelihoodLoss", {kLogProb, kTarget, kWeight},
                       ir::attrs(ir::Attribute::make_int("ignore_index", 1)), 13);
    EXPECT_FLOAT_EQ(test::values_f32(mean[0])[0], 3.0f);  // only 9 / 3 remains
    auto none =
        run_op("NegativeLogLikelihoodLoss", {kLogProb, kTarget, kWeight},
               ir::attrs(ir::Attribute::make_int("ignore_index", 1), reduction("none")), 13);
    EXPECT_EQ(test::values_f32(none[0]), (std::vector<float>{9.0f, 0.0f}));
}

TEST(OpsLoss, NllNegativeIgnoreIndexIsNotAClass) {
    auto out = run_op("NegativeLogLikelihoodLoss", {kLogProb, i64({2}, {-1, 0})},
                      ir::attrs(ir::Attribute::make_int("ignore_index", -1)), 13);
    EXPECT_FLOAT_EQ(test::values_f32(out[0])[0], 0.5f);  // mean over the one counted element
}

TEST(OpsLoss, NllSpatialInputPicksPerPosition) {
    // N=1, C=2, D=2: position 0 has log-probs (-1, -2), position 1 has (-3, -4).
    auto out =
        run_op("NegativeLogLikelihoodLoss", {f32({1, 2, 2}, {-1, -3, -2, -4}), i64({1, 2}, {0, 1})},
               ir::attrs(reduction("none")), 13);
    EXPECT_EQ(out[0].dims(), (std::vector<int64_t>{1, 2}));
    EXPECT_EQ(test::values_f32(out[0]), (std::vector<float>{1.0f, 4.0f}));
}

TEST(OpsLoss, OutOfRangeClassIsInvalidInput) {
    for (int64_t bad : {3, -2}) {
        try {
            run_op("NegativeLogLikelihoodLoss", {kLogProb, i64({2}, {bad, 0})}, {}, 13);
            FAIL() << bad;
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
        }
    }
    EXPECT_THROW(run_op("SoftmaxCrossEntropyLoss", {kLogProb, i64({2}, {0, 7})}, {}, 13), Error);
}

TEST(OpsLoss, TargetShapeMismatchIsInvalidInput) {
    try {
        run_op("NegativeLogLikelihoodLoss", {kLogProb, i64({3}, {0, 0, 0})}, {}, 13);
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
    }
}

TEST(OpsLoss, SoftmaxCrossEntropyWithLogProb) {
    auto out = run_op("SoftmaxCrossEntropyLoss", {f32({1, 2}, {0, 0}), i64({1}, {1})}, {}, 13, 2);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_NEAR(test::values_f32(out[0])[0], std::log(2.0f), 1e-6);
    EXPECT_EQ(out[1].dims(), (std::vector<int64_t>{1, 2}));
    EXPECT_NEAR(test::values_f32(out[1])[1], -std::log(2.0f), 1e-6);
}

TEST(OpsLoss, Float16ComputesInFloat) {
    auto h = [](float v) { return float16::from_float(v).bits; };
    const Tensor x =
        Tensor::from_values<uint16_t>(DataType::kFloat16, {2, 2}, {h(-1), h(-2), h(-0.5f), h(-4)});
    const Tensor w = Tensor::from_values<uint16_t>(DataType::kFloat16, {2}, {h(1), h(3)});
    auto out = run_op("NegativeLogLikelihoodLoss", {x, i64({2}, {1, 0}), w}, {}, 13);
    ASSERT_EQ(out[0].dtype(), DataType::kFloat16);
    EXPECT_EQ(half_bits_to_float(out[0].data<uint16_t>()[0]), 6.5f / 4.0f);  // (3*2 + 0.5) / 4
}

TEST(OpsLoss, SoftmaxCrossEntropyIsStableForLargeLogits) {
    auto out = run_op("SoftmaxCrossEntropyLoss", {f32({1, 2}, {1000, 0}), i64({1}, {0})}, {}, 13);
    EXPECT_NEAR(test::values_f32(out[0])[0], 0.0f, 1e-6);
}

}  // namespace
}  // namespace pg
