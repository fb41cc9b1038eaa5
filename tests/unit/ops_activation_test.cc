// Activation and softmax-like kernels: Clip's opset forms, softmax axis semantics before and
// after opset 13, PRelu broadcasting, NaN propagation, float16, numerical stability.
#include <gtest/gtest.h>

#include <cmath>

#include "base/error.h"
#include "base/float16.h"
#include "ir/builder.h"
#include "runtime/session.h"
#include "support/op_runner.h"

namespace pg {
namespace {

using test::f32;
using test::run_op;
using test::values_f32;

void expect_near(const std::vector<float>& got, const std::vector<float>& want, float tol = 1e-6f) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << i;
}

TEST(OpsActivation, ClipWithOmittedMin) {
    auto out = run_op("Clip", {f32({3}, {-5, 0.5f, 5}), Tensor(), f32({}, {1})}, {}, 13);
    EXPECT_EQ(values_f32(out[0]), (std::vector<float>{-5, 0.5f, 1}));
    auto none = run_op("Clip", {f32({2}, {-1e30f, 1e30f})}, {}, 13);
    EXPECT_EQ(values_f32(none[0]), (std::vector<float>{-1e30f, 1e30f}));
}

TEST(OpsActivation, ClipAttributesBeforeOpset11) {
    auto out = run_op(
        "Clip", {f32({3}, {-5, 0.5f, 5})},
        ir::attrs(ir::Attribute::make_float("min", -1), ir::Attribute::make_float("max", 2)), 6);
    EXPECT_EQ(values_f32(out[0]), (std::vector<float>{-1, 0.5f, 2}));
}

TEST(OpsActivation, ClipMinAboveMaxGivesMaxAndKeepsNaN) {
    auto out = run_op("Clip", {f32({3}, {-5, NAN, 5}), f32({}, {3}), f32({}, {1})}, {}, 13);
    EXPECT_EQ(values_f32(out[0])[0], 1);
    EXPECT_TRUE(std::isnan(values_f32(out[0])[1]));
    EXPECT_EQ(values_f32(out[0])[2], 1);
}

TEST(OpsActivation, ClipIntegers) {
    Tensor x = Tensor::from_values<int32_t>(DataType::kInt32, {3}, {-7, 3, 9});
    auto out = run_op("Clip", {x, Tensor::from_values<int32_t>(DataType::kInt32, {}, {0})}, {}, 13);
    EXPECT_EQ(out[0].data<int32_t>()[0], 0);
    EXPECT_EQ(out[0].data<int32_t>()[2], 9);
}

// [1, 2, 2] at axis 1: opset 11 normalizes the 4 trailing elements together, opset 13 each
// pair along axis 1.
TEST(OpsActivation, SoftmaxAxisSemanticsChangeAtOpset13) {
    Tensor x = f32({1, 2, 2}, {0, 0, 0, 0});
    auto axis1 = ir::attrs(ir::Attribute::make_int("axis", 1));
    expect_near(
        values_f32(run_op("Softmax", {x}, ir::attrs(ir::Attribute::make_int("axis", 1)), 11)[0]),
        {0.25f, 0.25f, 0.25f, 0.25f});
    expect_near(values_f32(run_op("Softmax", {x}, std::move(axis1), 13)[0]),
                {0.5f, 0.5f, 0.5f, 0.5f});
    // Default axis: 1 before opset 13, -1 from 13.
    Tensor y = f32({2, 2}, {1, 1, 3, 3});
    expect_near(values_f32(run_op("Softmax", {y}, {}, 13)[0]), {0.5f, 0.5f, 0.5f, 0.5f});
    // The axis is in [-rank, rank - 1] at every opset (ONNX Runtime refuses rank as well).
    for (const int64_t opset : {11, 13})
        EXPECT_THROW(
            run_op("Softmax", {y}, ir::attrs(ir::Attribute::make_int("axis", 2)), opset), Error);
}

TEST(OpsActivation, LogSoftmaxIsStableForLargeInputs) {
    auto out = run_op("LogSoftmax", {f32({3}, {1000, 1000, -1000})}, {}, 13);
    expect_near(values_f32(out[0]), {-std::log(2.0f), -std::log(2.0f), -2000 - std::log(2.0f)},
                1e-3f);
    auto sm = run_op("Softmax", {f32({2}, {10000, 0})}, {}, 13);
    EXPECT_EQ(values_f32(sm[0]), (std::vector<float>{1, 0}));
}

TEST(OpsActivation, HardmaxPicksFirstMaximum) {
    auto out = run_op("Hardmax", {f32({2, 3}, {1, 3, 3, 5, 2, 5})}, {}, 13);
    EXPECT_EQ(values_f32(out[0]), (std::vector<float>{0, 1, 0, 1, 0, 0}));
    auto old = run_op("Hardmax", {f32({2, 3}, {1, 3, 3, 5, 2, 5})},
                      ir::attrs(ir::Attribute::make_int("axis", 0)), 11);
    EXPECT_EQ(values_f32(old[0]),
              (std::vector<float>{0, 0, 0, 1, 0, 0}));  // one max over everything
}

TEST(OpsActivation, PReluBroadcastsSlope) {
    auto out = run_op("PRelu", {f32({2, 3}, {-1, -1, -1, 2, -2, 2}), f32({3}, {0.1f, 0.2f, 0.3f})},
                      {}, 16);
    expect_near(values_f32(out[0]), {-0.1f, -0.2f, -0.3f, 2, -0.4f, 2});
    // Opset 6: a 1-D slope of size C applies per channel (axis 1).
    auto v6 = run_op("PRelu", {f32({1, 2, 2}, {-1, -1, -1, -1}), f32({2}, {0.5f, 0.25f})}, {}, 6);
    expect_near(values_f32(v6[0]), {-0.5f, -0.5f, -0.25f, -0.25f});
}

TEST(OpsActivation, ReluOnIntegersAndNaN) {
    Tensor x = Tensor::from_values<int32_t>(DataType::kInt32, {2}, {-4, 4});
    auto out = run_op("Relu", {x}, {}, 14);
    EXPECT_EQ(out[0].data<int32_t>()[0], 0);
    EXPECT_EQ(out[0].data<int32_t>()[1], 4);
    EXPECT_TRUE(std::isnan(values_f32(run_op("Relu", {f32({1}, {NAN})})[0])[0]));
}

TEST(OpsActivation, GeluExactAndTanh) {
    Tensor x = f32({3}, {-1, 0, 1.5f});
    auto exact = run_op("Gelu", {x}, {}, 20);
    auto tanh =
        run_op("Gelu", {x}, ir::attrs(ir::Attribute::make_string("approximate", "tanh")), 20);
    for (int i = 0; i < 3; ++i) {
        const double v = values_f32(x)[i];
        EXPECT_NEAR(values_f32(exact[0])[i], 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))), 1e-6);
        EXPECT_NEAR(values_f32(tanh[0])[i],
                    0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v))),
                    1e-6);
    }
    EXPECT_NE(values_f32(exact[0])[2], values_f32(tanh[0])[2]);
}

TEST(OpsActivation, SoftplusAndSigmoidDoNotOverflow) {
    expect_near(values_f32(run_op("Softplus", {f32({2}, {100, -100})})[0]), {100, 0});
    expect_near(values_f32(run_op("Sigmoid", {f32({2}, {-100, 100})})[0]), {0, 1});
    expect_near(values_f32(run_op("Mish", {f32({1}, {100})}, {}, 18)[0]), {100}, 1e-4f);
}

TEST(OpsActivation, DefaultsOfAttributes) {
    Tensor x = f32({2}, {-1, 1});
    expect_near(values_f32(run_op("LeakyRelu", {x})[0]), {-0.01f, 1});
    expect_near(values_f32(run_op("Elu", {x})[0]), {std::expm1(-1.0f), 1});
    expect_near(values_f32(run_op("HardSigmoid", {x})[0]), {0.3f, 0.7f});
    expect_near(values_f32(run_op("HardSwish", {f32({3}, {-3, 1, 3})}, {}, 14)[0]),
                {0, 1.0f * (1 / 6.0f + 0.5f), 3});
    expect_near(values_f32(run_op("ThresholdedRelu", {f32({2}, {1, 1.5f})}, {}, 10)[0]), {0, 1.5f});
    expect_near(values_f32(run_op("Selu", {x})[0]),
                {1.05070102f * 1.67326319f * std::expm1(-1.0f), 1.05070102f}, 1e-5f);
    expect_near(
        values_f32(run_op("Celu", {x}, ir::attrs(ir::Attribute::make_float("alpha", 2)), 12)[0]),
        {2 * std::expm1(-0.5f), 1});
}

// ONNX's definitions propagate NaN (numpy's minimum and maximum do) and take x at 0 for Elu;
// ONNX Runtime agrees. The clamps here kept HardSigmoid(NaN) at 1, and Elu(0) with alpha NaN was
// NaN (the ONNX Runtime differential suite found both).
TEST(OpsActivation, NanAndEdgeValuesFollowOnnxDefinitions) {
    const Tensor nan = f32({1}, {NAN});
    EXPECT_TRUE(std::isnan(values_f32(run_op("HardSigmoid", {nan})[0])[0]));
    const auto alpha = [](float v) { return ir::attrs(ir::Attribute::make_float("alpha", v)); };
    EXPECT_TRUE(std::isnan(values_f32(run_op("HardSigmoid", {f32({1}, {1})}, alpha(NAN))[0])[0]));
    EXPECT_EQ(values_f32(run_op("Elu", {f32({1}, {0})}, alpha(NAN))[0])[0], 0.0f);
    // Celu = max(0, x) + min(0, alpha * (exp(x / alpha) - 1)): NaN for alpha 0 or NaN.
    EXPECT_TRUE(std::isnan(values_f32(run_op("Celu", {f32({1}, {1})}, alpha(0), 12)[0])[0]));
    EXPECT_TRUE(std::isnan(values_f32(run_op("Celu", {f32({1}, {1})}, alpha(NAN), 12)[0])[0]));
    EXPECT_EQ(values_f32(run_op("Celu", {f32({1}, {1})}, alpha(-2), 12)[0])[0], 1.0f);
}

TEST(OpsActivation, Float16Sigmoid) {
    Tensor x = Tensor::from_values<uint16_t>(DataType::kFloat16, {1}, {float_to_half_bits(0.5f)});
    auto out = run_op("Sigmoid", {x});
    ASSERT_EQ(out[0].dtype(), DataType::kFloat16);
    EXPECT_EQ(out[0].data<uint16_t>()[0], float_to_half_bits(1 / (1 + std::exp(-0.5f))));
}

// Softmax rows are split over the session's pool for large inputs; each row must sum to 1.
TEST(OpsActivation, ParallelSoftmaxRows) {
    const int64_t rows = 300, cols = 7, inner = 40;
    std::vector<float> x(rows * cols * inner);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 13) * 0.25f;
    auto m = ir::new_model(13);
    ir::GraphBuilder b(*m->graph);
    ir::Value* in = b.input("x", DataType::kFloat32, std::vector<int64_t>{rows, cols, inner});
    b.output(b.op("Softmax", {in}, ir::attrs(ir::Attribute::make_int("axis", 1))));
    runtime::SessionOptions opts;
    opts.threads = 4;
    runtime::Session s(*m, opts);
    auto out = s.run({{"x", ops::RtValue::of(f32({rows, cols, inner}, x))}});
    const float* y = out[0].second.tensor().data<float>();
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t i = 0; i < inner; ++i) {
            double sum = 0;
            for (int64_t c = 0; c < cols; ++c) sum += y[(r * cols + c) * inner + i];
            ASSERT_NEAR(sum, 1.0, 1e-5) << r << " " << i;
        }
}

}  // namespace
}  // namespace pg
