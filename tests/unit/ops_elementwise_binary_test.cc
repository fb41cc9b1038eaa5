// Binary elementwise kernels: broadcasting, integer semantics, float16, errors.
#include <gtest/gtest.h>

#include <limits>

#include "base/error.h"
#include "base/float16.h"
#include "support/op_runner.h"

namespace pg {
namespace {

using test::f32;
using test::i64;
using test::run_op;

TEST(OpsBinary, AddBroadcastsChannels) {
    auto out = run_op("Add", {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({3}, {10, 20, 30})});
    EXPECT_EQ(out[0].dims(), (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(test::values_f32(out[0]), (std::vector<float>{11, 22, 33, 14, 25, 36}));
}

TEST(OpsBinary, BroadcastBothSides) {
    auto out = run_op("Mul", {f32({2, 1}, {1, 2}), f32({1, 3}, {1, 10, 100})});
    EXPECT_EQ(test::values_f32(out[0]), (std::vector<float>{1, 10, 100, 2, 20, 200}));
}

TEST(OpsBinary, IncompatibleShapesAreInvalidInput) {
    try {
        run_op("Add", {f32({2}, {1, 2}), f32({3}, {1, 2, 3})});
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
        EXPECT_NE(std::string(e.what()).find("cannot be broadcast"), std::string::npos);
    }
}

TEST(OpsBinary, ModFollowsPythonSignUnlessFmod) {
    auto py = run_op("Mod", {i64({2}, {-7, 7}), i64({2}, {3, -3})});
    EXPECT_EQ(py[0].data<int64_t>()[0], 2);
    EXPECT_EQ(py[0].data<int64_t>()[1], -2);
    auto c = run_op("Mod", {f32({1}, {-7}), f32({1}, {3})},
                    ir::attrs(ir::Attribute::make_int("fmod", 1)));
    EXPECT_EQ(test::values_f32(c[0])[0], -1.0f);
}

TEST(OpsBinary, IntegerDivisionByZeroIsAnError) {
    EXPECT_THROW(run_op("Div", {i64({1}, {1}), i64({1}, {0})}), Error);
}

// The lowest integer divided by -1 wraps to itself (numpy's answer) and its Mod by -1 is 0; the
// CPU's division traps on both (the process ended with SIGFPE).
TEST(OpsBinary, LowestIntegerByMinusOneWrapsInsteadOfTrapping) {
    const int64_t lo64 = std::numeric_limits<int64_t>::min();
    const int32_t lo32 = std::numeric_limits<int32_t>::min();
    EXPECT_EQ(run_op("Div", {i64({2}, {lo64, 7}), i64({2}, {-1, -1})})[0].data<int64_t>()[0], lo64);
    EXPECT_EQ(run_op("Div", {i64({2}, {lo64, 7}), i64({2}, {-1, -1})})[0].data<int64_t>()[1], -7);
    const Tensor a = Tensor::from_values<int32_t>(DataType::kInt32, {1}, {lo32});
    const Tensor b = Tensor::from_values<int32_t>(DataType::kInt32, {1}, {-1});
    EXPECT_EQ(run_op("Div", {a, b})[0].data<int32_t>()[0], lo32);
    EXPECT_EQ(run_op("Mod", {a, b})[0].data<int32_t>()[0], 0);
    EXPECT_EQ(run_op("Mod", {i64({1}, {lo64}), i64({1}, {-1})},
                     ir::attrs(ir::Attribute::make_int("fmod", 1)))[0]
                  .data<int64_t>()[0],
              0);
}

// Signed integer overflow wraps as numpy's does (undefined behaviour in C++, which the
// sanitizer build reported for Abs / Neg of the lowest value and ReduceProd): Add, Sub, Mul, Abs,
// Neg, ReduceSum and ReduceProd.
TEST(OpsBinary, IntegerOverflowWrapsAsNumpys) {
    const int64_t lo = std::numeric_limits<int64_t>::min(),
                  hi = std::numeric_limits<int64_t>::max();
    const auto first = [](const std::vector<Tensor>& out) { return out[0].data<int64_t>()[0]; };
    EXPECT_EQ(first(run_op("Add", {i64({1}, {hi}), i64({1}, {1})})), lo);
    EXPECT_EQ(first(run_op("Sub", {i64({1}, {lo}), i64({1}, {1})})), hi);
    EXPECT_EQ(first(run_op("Mul", {i64({1}, {hi}), i64({1}, {2})})), -2);
    EXPECT_EQ(first(run_op("Abs", {i64({1}, {lo})})), lo);
    EXPECT_EQ(first(run_op("Neg", {i64({1}, {lo})})), lo);
    const auto keep0 = [] { return ir::attrs(ir::Attribute::make_int("keepdims", 0)); };
    EXPECT_EQ(first(run_op("ReduceSum", {i64({2}, {hi, 1})}, keep0(), 13)), lo);
    EXPECT_EQ(first(run_op("ReduceProd", {i64({3}, {int64_t{1} << 62, 4, -3})}, keep0(), 13)), 0);
    // 16-bit products promote to int, where 65535 * 65535 overflows: computed unsigned.
    const Tensor u = Tensor::from_values<uint16_t>(DataType::kUInt16, {1}, {65535});
    EXPECT_EQ(run_op("Mul", {u, u})[0].data<uint16_t>()[0], 1);
    const Tensor s = Tensor::from_values<int16_t>(DataType::kInt16, {1}, {-32768});
    EXPECT_EQ(run_op("Mul", {s, s})[0].data<int16_t>()[0], 0);
}

TEST(OpsBinary, Float16ComputesInFloatAndRounds) {
    auto h = [](float v) { return float16::from_float(v).bits; };
    Tensor a = Tensor::from_values<uint16_t>(DataType::kFloat16, {2}, {h(65504), h(1)});
    Tensor b = Tensor::from_values<uint16_t>(DataType::kFloat16, {2}, {h(65504), h(2)});
    auto out = run_op("Add", {a, b});
    ASSERT_EQ(out[0].dtype(), DataType::kFloat16);
    EXPECT_EQ(out[0].data<uint16_t>()[0], 0x7C00);  // overflows to +inf
    EXPECT_EQ(half_bits_to_float(out[0].data<uint16_t>()[1]), 3.0f);
}

TEST(OpsBinary, ComparisonGivesBool) {
    auto out = run_op("Less", {f32({3}, {1, 2, 3}), f32({1}, {2})});
    ASSERT_EQ(out[0].dtype(), DataType::kBool);
    EXPECT_EQ(out[0].data<uint8_t>()[0], 1);
    EXPECT_EQ(out[0].data<uint8_t>()[1], 0);
}

}  // namespace
}  // namespace pg
