// Normalization ops: statistics outputs, GroupNormalization's two scale layouts, Dropout in
// inference, training mode refused.
#include <gtest/gtest.h>

#include <cmath>

#include "base/error.h"
#include "support/op_runner.h"

namespace pg {
namespace {

using ir::Attribute;
using test::f32;
using test::run_op;
using test::values_f32;

TEST(OpsNorm, LayerNormalizationGivesMeanAndInvStdDev) {
    auto out = run_op("LayerNormalization",
                      {f32({2, 2}, {1, 3, 2, 2}), f32({2}, {1, 1}), f32({2}, {0, 10})}, {}, 17, 3);
    const auto y = values_f32(out[0]);
    EXPECT_NEAR(y[0], -1.0f, 1e-4);
    EXPECT_NEAR(y[1], 11.0f, 1e-4);
    EXPECT_EQ(out[1].dims(), (std::vector<int64_t>{2, 1}));
    EXPECT_EQ(values_f32(out[1]), (std::vector<float>{2, 2}));
    EXPECT_NEAR(values_f32(out[2])[0], 1.0f / std::sqrt(1.0f + 1e-5f), 1e-6);
}

TEST(OpsNorm, GroupNormalizationScalesPerGroupOrPerChannel) {
    const Tensor x = f32({1, 4, 1}, {1, 3, 5, 7});  // groups of two channels: (1,3), (5,7)
    auto attrs = [] {
        return ir::attrs(Attribute::make_int("num_groups", 2),
                         Attribute::make_float("epsilon", 0.0f));
    };
    auto per_group = values_f32(
        run_op("GroupNormalization", {x, f32({2}, {1, 2}), f32({2}, {0, 0})}, attrs(), 18)[0]);
    EXPECT_EQ(per_group, (std::vector<float>{-1, 1, -2, 2}));
    auto per_channel = values_f32(run_op(
        "GroupNormalization", {x, f32({4}, {1, 2, 3, 4}), f32({4}, {0, 0, 0, 0})}, attrs(), 21)[0]);
    EXPECT_EQ(per_channel, (std::vector<float>{-1, 2, -3, 4}));
}

TEST(OpsNorm, BatchNormalizationInference) {
    auto out = run_op("BatchNormalization",
                      {f32({1, 2, 1}, {1, 1}), f32({2}, {2, 3}), f32({2}, {1, 0}), f32({2}, {0, 1}),
                       f32({2}, {4, 1})},
                      ir::attrs(Attribute::make_float("epsilon", 0.0f)), 15);
    EXPECT_EQ(values_f32(out[0]), (std::vector<float>{2, 0}));
}

TEST(OpsNorm, BatchNormalizationTrainingIsUnsupported) {
    try {
        run_op("BatchNormalization",
               {f32({1, 1, 1}, {1}), f32({1}, {1}), f32({1}, {0}), f32({1}, {0}), f32({1}, {1})},
               ir::attrs(Attribute::make_int("training_mode", 1)), 15, 3);
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
    }
}

TEST(OpsNorm, DropoutIsIdentityWithOnesMask) {
    auto out = run_op("Dropout", {f32({3}, {1, 2, 3})}, {}, 13, 2);
    EXPECT_EQ(values_f32(out[0]), (std::vector<float>{1, 2, 3}));
    ASSERT_EQ(out[1].dtype(), DataType::kBool);
    EXPECT_EQ(out[1].data<uint8_t>()[2], 1);
}

TEST(OpsNorm, LpNormalizationAndLrn) {
    auto l2 = values_f32(run_op("LpNormalization", {f32({1, 2}, {3, 4})})[0]);
    EXPECT_NEAR(l2[0], 0.6f, 1e-6);
    auto lrn = values_f32(
        run_op("LRN", {f32({1, 1, 1}, {2})},
               ir::attrs(Attribute::make_int("size", 1), Attribute::make_float("alpha", 1.0f),
                         Attribute::make_float("beta", 1.0f)))[0]);
    EXPECT_NEAR(lrn[0], 2.0f / 5.0f, 1e-6);  // 2 / (1 + 1 * 4)
}

TEST(OpsNorm, InstanceNormalizationNormalizesEachPlane) {
    auto out = values_f32(run_op("InstanceNormalization",
                                 {f32({1, 1, 2}, {0, 2}), f32({1}, {1}), f32({1}, {0})},
                                 ir::attrs(Attribute::make_float("epsilon", 0.0f)))[0]);
    EXPECT_EQ(out, (std::vector<float>{-1, 1}));
}

}  // namespace
}  // namespace pg
