// Unary elementwise kernels: rounding, NaN propagation, float16, integer semantics, errors.
#include <gtest/gtest.h>

#include <cmath>

#include "base/error.h"
#include "base/float16.h"
#include "base/float8.h"
#include "ir/builder.h"
#include "runtime/session.h"
#include "support/op_runner.h"

namespace pg {
namespace {

using test::f32;
using test::run_op;
using test::values_f32;

Tensor h16(std::vector<float> v) {
    std::vector<uint16_t> bits;
    for (float f : v) bits.push_back(float_to_half_bits(f));
    return Tensor::from_values(DataType::kFloat16, {static_cast<int64_t>(v.size())}, bits);
}

std::vector<uint8_t> bools(const Tensor& t) {
    return {t.data<uint8_t>(), t.data<uint8_t>() + t.numel()};
}

TEST(OpsUnary, RoundHalfToEven) {
    auto out = run_op("Round", {f32({7}, {0.5f, 1.5f, 2.5f, -0.5f, -2.5f, 2.4f, -1.6f})});
    EXPECT_EQ(values_f32(out[0]), (std::vector<float>{0, 2, 2, -0.0f, -2, 2, -2}));
    EXPECT_TRUE(std::signbit(values_f32(out[0])[3]));
}

TEST(OpsUnary, NaNPropagates) {
    const float nan = NAN;
    for (const char* op : {"Abs", "Neg", "Sign", "Floor", "Ceil", "Round", "Exp", "Sqrt", "Sin",
                           "Erf", "Reciprocal"}) {
        auto out = run_op(op, {f32({2}, {nan, 1.0f})}, {}, 13);
        EXPECT_TRUE(std::isnan(values_f32(out[0])[0])) << op;
        EXPECT_FALSE(std::isnan(values_f32(out[0])[1])) << op;
    }
}

TEST(OpsUnary, Float16ComputesInFloatAndRounds) {
    auto out = run_op("Sqrt", {h16({4.0f, 2.0f})});
    ASSERT_EQ(out[0].dtype(), DataType::kFloat16);
    EXPECT_EQ(half_bits_to_float(out[0].data<uint16_t>()[0]), 2.0f);
    EXPECT_EQ(out[0].data<uint16_t>()[1], float_to_half_bits(std::sqrt(2.0f)));
    auto e = run_op("Exp", {h16({12.0f})});  // e^12 > 65504: overflows to inf in float16
    EXPECT_EQ(e[0].data<uint16_t>()[0], 0x7C00);
}

TEST(OpsUnary, IntegerAbsNegSign) {
    Tensor x = Tensor::from_values<int8_t>(DataType::kInt8, {4}, {-128, -3, 0, 5});
    auto abs = run_op("Abs", {x});
    EXPECT_EQ(abs[0].data<int8_t>()[0], -128);  // wraps like numpy
    EXPECT_EQ(abs[0].data<int8_t>()[1], 3);
    auto neg = run_op("Neg", {x});
    EXPECT_EQ(neg[0].data<int8_t>()[3], -5);
    auto sign = run_op("Sign", {x});
    EXPECT_EQ((std::vector<int8_t>(sign[0].data<int8_t>(), sign[0].data<int8_t>() + 4)),
              (std::vector<int8_t>{-1, -1, 0, 1}));
}

TEST(OpsUnary, IsInfDetectsOnlyRequestedSigns) {
    Tensor x = f32({4}, {INFINITY, -INFINITY, NAN, 1.0f});
    EXPECT_EQ(bools(run_op("IsInf", {x})[0]), (std::vector<uint8_t>{1, 1, 0, 0}));
    auto pos = run_op("IsInf", {x}, ir::attrs(ir::Attribute::make_int("detect_negative", 0)));
    EXPECT_EQ(bools(pos[0]), (std::vector<uint8_t>{1, 0, 0, 0}));
    auto neg = run_op("IsInf", {x}, ir::attrs(ir::Attribute::make_int("detect_positive", 0)));
    EXPECT_EQ(bools(neg[0]), (std::vector<uint8_t>{0, 1, 0, 0}));
}

TEST(OpsUnary, IsNaNOnFloat16AndFloat8) {
    EXPECT_EQ(bools(run_op("IsNaN", {h16({NAN, 1.0f, INFINITY})})[0]),
              (std::vector<uint8_t>{1, 0, 0}));
    Tensor f8 = Tensor::from_values<uint8_t>(DataType::kFloat8E4M3FN, {3}, {0x7F, 0xFF, 0x7E});
    EXPECT_EQ(bools(run_op("IsNaN", {f8}, {}, 20)[0]), (std::vector<uint8_t>{1, 1, 0}));
    Tensor e5 = Tensor::from_values<uint8_t>(DataType::kFloat8E5M2, {3}, {0x7C, 0xFC, 0x7E});
    EXPECT_EQ(bools(run_op("IsInf", {e5}, {}, 20)[0]), (std::vector<uint8_t>{1, 1, 0}));
}

TEST(OpsUnary, NotAndBitwiseNot) {
    Tensor b = Tensor::from_values<uint8_t>(DataType::kBool, {2}, {0, 1});
    EXPECT_EQ(bools(run_op("Not", {b})[0]), (std::vector<uint8_t>{1, 0}));
    Tensor u = Tensor::from_values<uint8_t>(DataType::kUInt8, {2}, {0x0F, 0xFF});
    auto out = run_op("BitwiseNot", {u}, {}, 18);
    EXPECT_EQ(out[0].data<uint8_t>()[0], 0xF0);
    EXPECT_EQ(out[0].data<uint8_t>()[1], 0x00);
}

TEST(OpsUnary, DomainEdges) {
    auto log = run_op("Log", {f32({3}, {0.0f, -1.0f, 1.0f})});
    EXPECT_EQ(values_f32(log[0])[0], -INFINITY);
    EXPECT_TRUE(std::isnan(values_f32(log[0])[1]));
    EXPECT_EQ(values_f32(run_op("Reciprocal", {f32({1}, {-0.0f})})[0])[0], -INFINITY);
    EXPECT_EQ(values_f32(run_op("Atanh", {f32({1}, {1.0f})})[0])[0], INFINITY);
}

TEST(OpsUnary, FloatOnlyOpRejectsIntegers) {
    try {
        run_op("Exp", {test::i64({1}, {1})});
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
    }
}

// Large tensors run in parallel chunks on the session's pool; every element must be written.
TEST(OpsUnary, ParallelLoopsCoverEveryElement) {
    const int64_t n = 100003;
    std::vector<float> x(n);
    for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(i % 1000) - 500.0f;
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* in = b.input("x", DataType::kFloat32, std::vector<int64_t>{n});
    b.output(b.op("Neg", {b.op("Abs", {in})}));
    runtime::SessionOptions opts;
    opts.threads = 4;
    runtime::Session s(*m, opts);
    auto out = s.run({{"x", ops::RtValue::of(f32({n}, x))}});
    const float* y = out[0].second.tensor().data<float>();
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(y[i], -std::fabs(x[i])) << i;
}

}  // namespace
}  // namespace pg
