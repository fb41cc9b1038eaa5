// Reductions, ArgMax/ArgMin, TopK and Unique: axes per opset, empty sets, keepdims, float16,
// ties, strings.
#include <gtest/gtest.h>

#include <cmath>

#include "base/error.h"
#include "base/float16.h"
#include "support/op_runner.h"

namespace pg {
namespace {

using ir::Attribute;
using test::f32;
using test::i64;
using test::run_op;

std::vector<int64_t> ints(const Tensor& t) {
    return {t.data<int64_t>(), t.data<int64_t>() + t.numel()};
}

TEST(OpsReduce, AxesAttributeBeforeInputAfter) {
    const Tensor x = f32({2, 2}, {1, 2, 3, 4});
    auto a = run_op("ReduceSum", {x}, ir::attrs(Attribute::make_ints("axes", {1})), 11);
    EXPECT_EQ(test::values_f32(a[0]), (std::vector<float>{3, 7}));
    auto b =
        run_op("ReduceSum", {x, i64({1}, {-2})}, ir::attrs(Attribute::make_int("keepdims", 0)), 13);
    EXPECT_EQ(b[0].dims(), (std::vector<int64_t>{2}));
    EXPECT_EQ(test::values_f32(b[0]), (std::vector<float>{4, 6}));
    auto c = run_op("ReduceMax", {x}, ir::attrs(Attribute::make_ints("axes", {0})), 17);
    EXPECT_EQ(test::values_f32(c[0]), (std::vector<float>{3, 4}));
    auto d = run_op("ReduceMax", {x, i64({1}, {0})}, {}, 18);
    EXPECT_EQ(test::values_f32(d[0]), (std::vector<float>{3, 4}));
}

TEST(OpsReduce, EmptyAxesReduceAllOrNoop) {
    const Tensor x = f32({2, 2}, {1, 2, 3, 4});
    auto all = run_op("ReduceMean", {x, i64({0}, {})}, {}, 18);
    EXPECT_EQ(all[0].dims(), (std::vector<int64_t>{1, 1}));
    EXPECT_EQ(test::values_f32(all[0])[0], 2.5f);
    auto noop = run_op("ReduceMean", {x, i64({0}, {})},
                       ir::attrs(Attribute::make_int("noop_with_empty_axes", 1)), 18);
    EXPECT_EQ(test::values_f32(noop[0]), test::values_f32(x));
}

// With noop_with_empty_axes each element is reduced alone: |x|, x * x, log x (as ONNX's current
// reference and ONNX Runtime), not the input as it is.
TEST(OpsReduce, NoopReducesEachElementAlone) {
    const Tensor x = f32({2, 2}, {-1, 2, -3, 0.5f});
    const auto noop = [] { return ir::attrs(Attribute::make_int("noop_with_empty_axes", 1)); };
    auto l1 = run_op("ReduceL1", {x, i64({0}, {})}, noop(), 18);
    EXPECT_EQ(test::values_f32(l1[0]), (std::vector<float>{1, 2, 3, 0.5f}));
    auto l2 = run_op("ReduceL2", {x}, noop(), 18);
    EXPECT_EQ(test::values_f32(l2[0]), (std::vector<float>{1, 2, 3, 0.5f}));
    auto sq = run_op("ReduceSumSquare", {x, i64({0}, {})}, noop(), 18);
    EXPECT_EQ(test::values_f32(sq[0]), (std::vector<float>{1, 4, 9, 0.25f}));
    auto lse = run_op("ReduceLogSumExp", {x, i64({0}, {})}, noop(), 18);
    EXPECT_EQ(test::values_f32(lse[0]), test::values_f32(x));
    auto ls = run_op("ReduceLogSum", {f32({2}, {1, 4})}, noop(), 18);
    EXPECT_FLOAT_EQ(test::values_f32(ls[0])[1], std::log(4.0f));
    EXPECT_EQ(ls[0].dims(), (std::vector<int64_t>{2}));
}

TEST(OpsReduce, EmptySetGivesIdentity) {
    const Tensor x = f32({2, 0}, {});
    auto sum = run_op("ReduceSum", {x, i64({1}, {1})}, {}, 13);
    EXPECT_EQ(test::values_f32(sum[0]), (std::vector<float>{0, 0}));
    auto prod = run_op("ReduceProd", {x, i64({1}, {1})}, {}, 18);
    EXPECT_EQ(test::values_f32(prod[0]), (std::vector<float>{1, 1}));
    auto mx = run_op("ReduceMax", {x, i64({1}, {1})}, {}, 18);
    EXPECT_TRUE(std::isinf(test::values_f32(mx[0])[0]) && test::values_f32(mx[0])[0] < 0);
    auto lse = run_op("ReduceLogSumExp", {x, i64({1}, {1})}, {}, 18);
    EXPECT_TRUE(std::isinf(test::values_f32(lse[0])[0]));
}

TEST(OpsReduce, IntegerMeanTruncatesAndMaxPropagatesNaN) {
    auto m =
        run_op("ReduceMean", {i64({2}, {1, 2})}, ir::attrs(Attribute::make_int("keepdims", 0)), 13);
    EXPECT_EQ(ints(m[0]), (std::vector<int64_t>{1}));
    auto n = run_op("ReduceMax", {f32({3}, {1, NAN, 2})}, {}, 13);
    EXPECT_TRUE(std::isnan(test::values_f32(n[0])[0]));
}

TEST(OpsReduce, Float16SumComputesInFloat) {
    auto h = [](float v) { return float16::from_float(v).bits; };
    // 2048 + 1 + 1 is 2048 when accumulated in float16, 2050 in float32.
    Tensor x = Tensor::from_values<uint16_t>(DataType::kFloat16, {3}, {h(2048), h(1), h(1)});
    auto out = run_op("ReduceSum", {x}, {}, 13);
    ASSERT_EQ(out[0].dtype(), DataType::kFloat16);
    EXPECT_EQ(half_bits_to_float(out[0].data<uint16_t>()[0]), 2050.0f);
}

TEST(OpsReduce, L1L2LogSumSumSquare) {
    const Tensor x = f32({2}, {-3, 4});
    auto one = [&](const char* op) { return test::values_f32(run_op(op, {x}, {}, 13)[0])[0]; };
    EXPECT_FLOAT_EQ(one("ReduceL1"), 7);
    EXPECT_FLOAT_EQ(one("ReduceL2"), 5);
    EXPECT_FLOAT_EQ(one("ReduceSumSquare"), 25);
    EXPECT_FLOAT_EQ(one("ReduceLogSum"), 0);
}

TEST(OpsReduce, LogSumExpDoesNotOverflow) {
    auto out = run_op("ReduceLogSumExp", {f32({2}, {1000, 1000})}, {}, 13);
    EXPECT_NEAR(test::values_f32(out[0])[0], 1000.0f + std::log(2.0f), 1e-3);
}

TEST(OpsReduce, ArgMaxSelectLastIndexAndEmptyAxis) {
    const Tensor x = f32({4}, {1, 3, 3, 0});
    EXPECT_EQ(ints(run_op("ArgMax", {x})[0]), (std::vector<int64_t>{1}));
    EXPECT_EQ(
        ints(run_op("ArgMax", {x}, ir::attrs(Attribute::make_int("select_last_index", 1)))[0]),
        (std::vector<int64_t>{2}));
    EXPECT_EQ(ints(run_op("ArgMin", {x}, ir::attrs(Attribute::make_int("keepdims", 0)))[0]),
              (std::vector<int64_t>{3}));
    EXPECT_THROW(run_op("ArgMax", {f32({0}, {})}), Error);
}

TEST(OpsReduce, TopKTiesGoToLowerIndex) {
    auto out = run_op("TopK", {f32({5}, {2, 5, 5, 1, 2}), i64({1}, {3})}, {}, 11, 2);
    EXPECT_EQ(test::values_f32(out[0]), (std::vector<float>{5, 5, 2}));
    EXPECT_EQ(ints(out[1]), (std::vector<int64_t>{1, 2, 0}));
    auto small = run_op("TopK", {f32({5}, {2, 5, 5, 1, 2}), i64({1}, {2})},
                        ir::attrs(Attribute::make_int("largest", 0)), 11, 2);
    EXPECT_EQ(ints(small[1]), (std::vector<int64_t>{3, 0}));
    auto old = run_op("TopK", {f32({3}, {1, 3, 2})}, ir::attrs(Attribute::make_int("k", 1)), 1, 2);
    EXPECT_EQ(ints(old[1]), (std::vector<int64_t>{1}));
    EXPECT_THROW(run_op("TopK", {f32({2}, {1, 2}), i64({1}, {3})}, {}, 11, 2), Error);
}

TEST(OpsReduce, UniqueUnsortedAndStrings) {
    auto u = run_op("Unique", {f32({5}, {2, 1, 2, 3, 1})},
                    ir::attrs(Attribute::make_int("sorted", 0)), 11, 4);
    EXPECT_EQ(test::values_f32(u[0]), (std::vector<float>{2, 1, 3}));
    EXPECT_EQ(ints(u[1]), (std::vector<int64_t>{0, 1, 3}));
    EXPECT_EQ(ints(u[2]), (std::vector<int64_t>{0, 1, 0, 2, 1}));
    EXPECT_EQ(ints(u[3]), (std::vector<int64_t>{2, 2, 1}));
    auto s = run_op("Unique", {Tensor::from_strings({3}, {"b", "a", "b"})}, {}, 11, 4);
    EXPECT_EQ(s[0].strings(), (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(ints(s[2]), (std::vector<int64_t>{1, 0, 1}));
}

TEST(OpsReduce, UniqueAlongAxisSortsSlices) {
    auto u = run_op("Unique", {f32({3, 2}, {2, 0, 1, 5, 2, 0})},
                    ir::attrs(Attribute::make_int("axis", 0)), 11, 4);
    EXPECT_EQ(u[0].dims(), (std::vector<int64_t>{2, 2}));
    EXPECT_EQ(test::values_f32(u[0]), (std::vector<float>{1, 5, 2, 0}));
    EXPECT_EQ(ints(u[3]), (std::vector<int64_t>{1, 2}));
}

}  // namespace
}  // namespace pg
