// Attention family and misc math ops on hand-computed cases: Attention (plain, causal, GQA head
// mapping, KV cache), LinearAttention, RMSNormalization, RotaryEmbedding, CausalConvWithState,
// BitCast, CumProd, TensorScatter and Swish.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "base/error.h"
#include "support/op_runner.h"

namespace pg {
namespace {

using ir::Attribute;
using test::f32;
using test::i64;
using test::run_op;
using test::values_f32;

// 1 head, 2 tokens, head size 1: Q = [1, 2], K = [0, 1], V = [10, 20], scale 1.
const Tensor kQ = f32({1, 1, 2, 1}, {1, 2});
const Tensor kK = f32({1, 1, 2, 1}, {0, 1});
const Tensor kV = f32({1, 1, 2, 1}, {10, 20});

TEST(OpsAttention, TwoTokenAttentionIsSoftmaxWeightedValues) {
    const auto y = values_f32(run_op("Attention", {kQ, kK, kV}, {}, 23)[0]);
    const double e = std::exp(1.0), e2 = std::exp(2.0);
    EXPECT_NEAR(y[0], (10 + 20 * e) / (1 + e), 1e-4);
    EXPECT_NEAR(y[1], (10 + 20 * e2) / (1 + e2), 1e-4);
}

TEST(OpsAttention, CausalMaskHidesLaterKeys) {
    const auto y = values_f32(
        run_op("Attention", {kQ, kK, kV}, ir::attrs(Attribute::make_int("is_causal", 1)), 23)[0]);
    EXPECT_FLOAT_EQ(y[0], 10.0f);  // token 0 sees key 0 only
    const double e2 = std::exp(2.0);
    EXPECT_NEAR(y[1], (10 + 20 * e2) / (1 + e2), 1e-4);
}

TEST(OpsAttention, BoolMaskFalseExcludesKey) {
    const Tensor mask =
        Tensor::from_values(DataType::kBool, {2, 2}, std::vector<uint8_t>{0, 1, 1, 1});
    const auto y = values_f32(run_op("Attention", {kQ, kK, kV, mask}, {}, 23)[0]);
    EXPECT_FLOAT_EQ(y[0], 20.0f);  // token 0 sees key 1 only
}

TEST(OpsAttention, GqaRepeatsEachKvHeadForConsecutiveQueryHeads) {
    // 4 query heads, 2 KV heads, one key each: softmax over one key is 1, so Y[h] = V[h / 2].
    const Tensor q = f32({1, 4, 1, 1}, {1, 1, 1, 1});
    const Tensor k = f32({1, 2, 1, 1}, {1, 1});
    const Tensor v = f32({1, 2, 1, 1}, {5, 7});
    EXPECT_EQ(values_f32(run_op("Attention", {q, k, v}, {}, 23)[0]),
              (std::vector<float>{5, 5, 7, 7}));
}

TEST(OpsAttention, PastKeyValueAreConcatenatedIntoPresent) {
    const Tensor q = f32({1, 1, 1, 1}, {1});
    const Tensor past_k = f32({1, 1, 1, 1}, {0}), past_v = f32({1, 1, 1, 1}, {10});
    const Tensor k = f32({1, 1, 1, 1}, {1}), v = f32({1, 1, 1, 1}, {20});
    auto out = run_op("Attention", {q, k, v, Tensor(), past_k, past_v}, {}, 23, 3);
    EXPECT_EQ(out[1].dims(), (std::vector<int64_t>{1, 1, 2, 1}));
    EXPECT_EQ(values_f32(out[1]), (std::vector<float>{0, 1}));
    EXPECT_EQ(values_f32(out[2]), (std::vector<float>{10, 20}));
    const double e = std::exp(1.0);
    EXPECT_NEAR(values_f32(out[0])[0], (10 + 20 * e) / (1 + e), 1e-4);
}

TEST(OpsAttention, ThreeDInputNeedsHeadCounts) {
    const Tensor x = f32({1, 2, 2}, {1, 2, 3, 4});
    EXPECT_THROW(run_op("Attention", {x, x, x}, {}, 23), Error);
    auto y = run_op(
        "Attention", {x, x, x},
        ir::attrs(Attribute::make_int("q_num_heads", 2), Attribute::make_int("kv_num_heads", 2)),
        23)[0];
    EXPECT_EQ(y.dims(), (std::vector<int64_t>{1, 2, 2}));
}

TEST(OpsAttention, RmsNormalizationOfKnownVector) {
    // mean(3^2, 4^2) = 12.5; y = x / sqrt(12.5) * [1, 2].
    const auto y = values_f32(run_op("RMSNormalization", {f32({1, 2}, {3, 4}), f32({2}, {1, 2})},
                                     ir::attrs(Attribute::make_float("epsilon", 0.0f)), 23)[0]);
    EXPECT_NEAR(y[0], 3 / std::sqrt(12.5), 1e-6);
    EXPECT_NEAR(y[1], 8 / std::sqrt(12.5), 1e-6);
}

TEST(OpsAttention, RotaryEmbeddingRotatesPairs) {
    // cos 0, sin 1: (x1, x2) -> (-x2, x1).
    const auto y = values_f32(
        run_op("RotaryEmbedding",
               {f32({1, 1, 1, 2}, {1, 2}), f32({1, 1, 1}, {0}), f32({1, 1, 1}, {1})}, {}, 23)[0]);
    EXPECT_EQ(y, (std::vector<float>{-2, 1}));
}

TEST(OpsAttention, CausalConvWithStateUsesPastAndKeepsTail) {
    // One channel, kernel [1, 10]: y[t] = x[t-1] + 10 x[t], with x[-1] from past_state.
    auto out =
        run_op("CausalConvWithState",
               {f32({1, 1, 3}, {1, 2, 3}), f32({1, 1, 2}, {1, 10}), Tensor(), f32({1, 1, 1}, {5})},
               {}, 27, 2);
    EXPECT_EQ(values_f32(out[0]), (std::vector<float>{15, 21, 32}));
    EXPECT_EQ(values_f32(out[1]), (std::vector<float>{3}));
}

TEST(OpsAttention, LinearAttentionAccumulatesState) {
    // One head, d_k = d_v = 1, rule "linear", scale 1: S_t = S_{t-1} + k_t v_t, o_t = q_t S_t.
    const Tensor q = f32({1, 2, 1}, {1, 1}), k = f32({1, 2, 1}, {1, 2}), v = f32({1, 2, 1}, {3, 4});
    auto out = run_op(
        "LinearAttention", {q, k, v},
        ir::attrs(Attribute::make_int("q_num_heads", 1), Attribute::make_int("kv_num_heads", 1),
                  Attribute::make_float("scale", 1.0f),
                  Attribute::make_string("update_rule", "linear")),
        27, 2);
    EXPECT_EQ(values_f32(out[0]), (std::vector<float>{3, 11}));
    EXPECT_EQ(out[1].dims(), (std::vector<int64_t>{1, 1, 1, 1}));
    EXPECT_EQ(values_f32(out[1]), (std::vector<float>{11}));
}

TEST(OpsMiscMath, BitCastFloatIntBitPatterns) {
    auto out = run_op("BitCast", {f32({2}, {1.0f, -2.0f})}, ir::attrs(Attribute::make_int("to", 6)),
                      26)[0];
    ASSERT_EQ(out.dtype(), DataType::kInt32);
    EXPECT_EQ(out.data<int32_t>()[0], 0x3F800000);
    EXPECT_EQ(out.data<int32_t>()[1], static_cast<int32_t>(0xC0000000u));
    auto back = run_op("BitCast", {out}, ir::attrs(Attribute::make_int("to", 1)), 26)[0];
    EXPECT_EQ(values_f32(back), (std::vector<float>{1.0f, -2.0f}));
    auto halves =
        run_op("BitCast", {f32({1}, {1.0f})}, ir::attrs(Attribute::make_int("to", 5)), 26)[0];
    ASSERT_EQ(halves.dims(), (std::vector<int64_t>{2}));
    EXPECT_EQ(halves.data<int16_t>()[1], 0x3F80);
}

TEST(OpsMiscMath, CumProdExclusiveAndReverse) {
    const Tensor x = f32({4}, {1, 2, 3, 4});
    auto cumprod = [&](int64_t exclusive, int64_t reverse) {
        return values_f32(run_op("CumProd", {x, i64({}, {0})},
                                 ir::attrs(Attribute::make_int("exclusive", exclusive),
                                           Attribute::make_int("reverse", reverse)),
                                 26)[0]);
    };
    EXPECT_EQ(cumprod(0, 0), (std::vector<float>{1, 2, 6, 24}));
    EXPECT_EQ(cumprod(1, 0), (std::vector<float>{1, 1, 2, 6}));
    EXPECT_EQ(cumprod(0, 1), (std::vector<float>{24, 24, 12, 4}));
    EXPECT_EQ(cumprod(1, 1), (std::vector<float>{24, 12, 4, 1}));
}

TEST(OpsMiscMath, TensorScatterCircularWraps) {
    // Cache [1, 3, 1]; write two rows at index 2: the second wraps to row 0.
    auto y =
        run_op("TensorScatter", {f32({1, 3, 1}, {0, 0, 0}), f32({1, 2, 1}, {7, 8}), i64({1}, {2})},
               ir::attrs(Attribute::make_string("mode", "circular")), 24)[0];
    EXPECT_EQ(values_f32(y), (std::vector<float>{8, 0, 7}));
    EXPECT_THROW(run_op("TensorScatter",
                        {f32({1, 3, 1}, {0, 0, 0}), f32({1, 2, 1}, {7, 8}), i64({1}, {2})}, {}, 24),
                 Error);  // linear mode: index 3 is past the end
}

TEST(OpsMiscMath, SwishIsXTimesSigmoid) {
    const auto y = values_f32(run_op("Swish", {f32({2}, {0, 2})},
                                     ir::attrs(Attribute::make_float("alpha", 0.5f)), 24)[0]);
    EXPECT_FLOAT_EQ(y[0], 0.0f);
    EXPECT_NEAR(y[1], 2 / (1 + std::exp(-1.0)), 1e-6);
}

}  // namespace
}  // namespace pg
