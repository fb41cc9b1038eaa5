// Indexing kernels: negative and out-of-range indices, int32 indices, strings, empty tensors,
// opset differences and scatter reductions.
#include <gtest/gtest.h>

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

Tensor i32(std::vector<int64_t> dims, std::vector<int32_t> v) {
    return Tensor::from_values(DataType::kInt32, std::move(dims), v);
}

Tensor strs(std::vector<int64_t> dims, std::vector<std::string> v) {
    return Tensor::from_strings(std::move(dims), std::move(v));
}

// Runs f, which must throw kInvalidInput naming `op` and mentioning `needle`.
void expect_invalid(const std::function<void()>& f, const std::string& op,
                    const std::string& needle) {
    try {
        f();
        FAIL() << "expected an error from " << op;
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput) << e.what();
        EXPECT_NE(std::string(e.what()).find(op), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
}

TEST(OpsIndex, SliceNegativeStepsAndClamping) {
    const Tensor x = f32({5}, {0, 1, 2, 3, 4});
    auto a =
        run_op("Slice", {x, i64({1}, {-1}), i64({1}, {INT64_MIN}), i64({1}, {0}), i64({1}, {-2})});
    EXPECT_EQ(test::values_f32(a[0]), (std::vector<float>{4, 2, 0}));
    auto b = run_op("Slice", {x, i64({1}, {2}), i64({1}, {1000})});
    EXPECT_EQ(test::values_f32(b[0]), (std::vector<float>{2, 3, 4}));
    auto c = run_op("Slice", {x, i64({1}, {3}), i64({1}, {1})});
    EXPECT_EQ(c[0].numel(), 0u);
    expect_invalid(
        [&] {
            run_op("Slice", {x, i64({1}, {0}), i64({1}, {2}), i64({1}, {0}), i64({1}, {0})});
        },
        "Slice", "step");
}

TEST(OpsIndex, SliceHugeStepsDoNotOverflow) {
    const Tensor x = f32({3}, {0, 1, 2});
    auto a = run_op(
        "Slice", {x, i64({1}, {0}), i64({1}, {INT64_MAX}), i64({1}, {0}), i64({1}, {INT64_MAX})});
    EXPECT_EQ(test::values_f32(a[0]), (std::vector<float>{0}));
    auto b = run_op(
        "Slice", {x, i64({1}, {-1}), i64({1}, {INT64_MIN}), i64({1}, {0}), i64({1}, {INT64_MIN})});
    EXPECT_EQ(test::values_f32(b[0]), (std::vector<float>{2}));
}

TEST(OpsIndex, SliceOpset1AttributesAndStrings) {
    auto a = run_op("Slice", {strs({2, 2}, {"a", "b", "c", "d"})},
                    ir::attrs(Attribute::make_ints("starts", {1}),
                              Attribute::make_ints("ends", {2}), Attribute::make_ints("axes", {1})),
                    1);
    EXPECT_EQ(a[0].strings(), (std::vector<std::string>{"b", "d"}));
}

TEST(OpsIndex, GatherNegativeInt32IndicesAndStrings) {
    auto a = run_op("Gather", {strs({3}, {"a", "b", "c"}), i32({2}, {-1, 0})});
    EXPECT_EQ(a[0].strings(), (std::vector<std::string>{"c", "a"}));
    auto b = run_op("Gather", {f32({2, 2}, {1, 2, 3, 4}), i64({}, {1})},
                    ir::attrs(Attribute::make_int("axis", 1)));
    EXPECT_EQ(b[0].dims(), (std::vector<int64_t>{2}));
    EXPECT_EQ(test::values_f32(b[0]), (std::vector<float>{2, 4}));
}

TEST(OpsIndex, OutOfRangeIndicesAreInvalidInput) {
    expect_invalid(
        [] {
            run_op("Gather", {f32({3}, {1, 2, 3}), i64({1}, {3})});
        },
        "Gather", "out of range");
    expect_invalid(
        [] {
            run_op("Gather", {f32({3}, {1, 2, 3}), i64({1}, {-4})});
        },
        "Gather", "out of range");
    expect_invalid(
        [] {
            run_op("GatherElements", {f32({2}, {1, 2}), i64({1}, {5})});
        },
        "GatherElements", "out of range");
    expect_invalid(
        [] {
            run_op("GatherND", {f32({2, 2}, {1, 2, 3, 4}), i64({1, 2}, {0, 2})});
        },
        "GatherND", "out of range");
    expect_invalid(
        [] {
            run_op("ScatterElements", {f32({2}, {1, 2}), i64({1}, {2}), f32({1}, {9})});
        },
        "ScatterElements", "out of range");
    expect_invalid(
        [] {
            run_op("ScatterND", {f32({2}, {1, 2}), i64({1, 1}, {-3}), f32({1}, {9})});
        },
        "ScatterND", "out of range");
}

TEST(OpsIndex, GatherElementsAndNDWithBatchDims) {
    auto a = run_op("GatherElements", {f32({2, 2}, {1, 2, 3, 4}), i32({2, 2}, {1, 0, -1, 1})},
                    ir::attrs(Attribute::make_int("axis", 1)));
    EXPECT_EQ(test::values_f32(a[0]), (std::vector<float>{2, 1, 4, 4}));
    auto b = run_op("GatherND", {f32({2, 2}, {1, 2, 3, 4}), i64({2, 1}, {1, 0})},
                    ir::attrs(Attribute::make_int("batch_dims", 1)), 12);
    EXPECT_EQ(test::values_f32(b[0]), (std::vector<float>{2, 3}));
}

TEST(OpsIndex, ScatterReductionsAndDuplicateIndices) {
    const Tensor data = f32({3}, {1, 2, 3});
    auto run = [&](const char* red) {
        return test::values_f32(run_op("ScatterElements",
                                       {data, i64({2}, {0, 0}), f32({2}, {5, 7})},
                                       ir::attrs(Attribute::make_string("reduction", red)), 18)[0]);
    };
    EXPECT_EQ(run("none"), (std::vector<float>{7, 2, 3}));  // last update wins
    EXPECT_EQ(run("add"), (std::vector<float>{13, 2, 3}));
    EXPECT_EQ(run("mul"), (std::vector<float>{35, 2, 3}));
    EXPECT_EQ(run("max"), (std::vector<float>{7, 2, 3}));
    EXPECT_EQ(run("min"), (std::vector<float>{1, 2, 3}));
    auto nd = run_op("ScatterND", {strs({2}, {"a", "b"}), i64({1, 1}, {-1}), strs({1}, {"z"})});
    EXPECT_EQ(nd[0].strings(), (std::vector<std::string>{"a", "z"}));
}

TEST(OpsIndex, ScatterAddFloat16ComputesInFloat) {
    auto h = [](float v) { return float16::from_float(v).bits; };
    Tensor d = Tensor::from_values<uint16_t>(DataType::kFloat16, {2}, {h(1), h(2)});
    Tensor u = Tensor::from_values<uint16_t>(DataType::kFloat16, {1}, {h(0.5f)});
    auto out = run_op("ScatterND", {d, i64({1, 1}, {1}), u},
                      ir::attrs(Attribute::make_string("reduction", "add")), 16);
    ASSERT_EQ(out[0].dtype(), DataType::kFloat16);
    EXPECT_EQ(half_bits_to_float(out[0].data<uint16_t>()[1]), 2.5f);
}

TEST(OpsIndex, OneHotWrapsNegativeAndIgnoresOutOfRange) {
    auto a = run_op("OneHot", {i64({3}, {-1, 5, 0}), i64({}, {3}), f32({2}, {0, 1})});
    EXPECT_EQ(a[0].dims(), (std::vector<int64_t>{3, 3}));
    EXPECT_EQ(test::values_f32(a[0]), (std::vector<float>{0, 0, 1, 0, 0, 0, 1, 0, 0}));
}

TEST(OpsIndex, NonZeroStringsAndScalar) {
    auto a = run_op("NonZero", {strs({2, 2}, {"", "x", "y", ""})});
    EXPECT_EQ(a[0].dims(), (std::vector<int64_t>{2, 2}));
    EXPECT_EQ(ints(a[0]), (std::vector<int64_t>{0, 1, 1, 0}));
    auto s = run_op("NonZero", {f32({}, {3})});
    EXPECT_EQ(s[0].dims(), (std::vector<int64_t>{1, 1}));
}

TEST(OpsIndex, CompressShortConditionAndNoAxis) {
    Tensor cond = Tensor::from_values<uint8_t>(DataType::kBool, {2}, {0, 1});
    auto a = run_op("Compress", {f32({2, 2}, {1, 2, 3, 4}), cond});
    EXPECT_EQ(test::values_f32(a[0]), (std::vector<float>{2}));
    Tensor far = Tensor::from_values<uint8_t>(DataType::kBool, {3}, {0, 0, 1});
    expect_invalid(
        [&] {
            run_op("Compress", {f32({2}, {1, 2}), far}, ir::attrs(Attribute::make_int("axis", 0)));
        },
        "Compress", "beyond");
}

TEST(OpsIndex, ReverseSequenceChecksLengths) {
    auto a = run_op("ReverseSequence", {f32({3, 2}, {1, 2, 3, 4, 5, 6}), i64({2}, {2, 3})});
    EXPECT_EQ(test::values_f32(a[0]), (std::vector<float>{3, 6, 1, 4, 5, 2}));
    expect_invalid(
        [] {
            run_op("ReverseSequence", {f32({3, 2}, {1, 2, 3, 4, 5, 6}), i64({2}, {4, 1})});
        },
        "ReverseSequence", "out of range");
}

TEST(OpsIndex, CumSumExclusiveReverseInt) {
    auto a =
        run_op("CumSum", {i64({4}, {1, 2, 3, 4}), i32({}, {0})},
               ir::attrs(Attribute::make_int("exclusive", 1), Attribute::make_int("reverse", 1)));
    EXPECT_EQ(ints(a[0]), (std::vector<int64_t>{9, 7, 4, 0}));
    auto b = run_op("CumSum", {f32({2, 2}, {1, 2, 3, 4}), i64({}, {-1})});
    EXPECT_EQ(test::values_f32(b[0]), (std::vector<float>{1, 3, 3, 7}));
}

}  // namespace
}  // namespace pg
