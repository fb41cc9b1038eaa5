// Kernels given inputs whose values are hostile: huge sizes, negative lengths, sums past int64,
// integer overflow. Each case is a finding of the input sweep (tests/conformance/
// input_sweep_test.cc, which fills each input of every node test with -1, 0, 1e12 and int64's
// lowest, or NaN, +-inf and 1e30) under the sanitizers, rebuilt here: each must be refused with
// kInvalidInput naming the problem, or compute what ONNX defines, never read out of bounds,
// overflow a signed integer, or allocate past the memory ceiling.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "base/error.h"
#include "base/heap.h"
#include "ir/builder.h"
#include "runtime/session.h"
#include "support/expect_error.h"
#include "support/op_runner.h"

namespace pg {
namespace {

using ir::Attribute;
using test::run_op;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// Range allocated up to 2^32 values unchecked (32 GiB of int64; a window function's expanded body,
// filled with a huge size by the input sweep, faulted in 8 GiB for a minute). It is now held to
// the memory ceiling like every other output.
TEST(OpsHostileValues, RangeIsHeldToTheMemoryCeiling) {
    const uint64_t before = set_memory_ceiling(64 << 20);
    const auto range = [](int64_t limit) {
        return run_op("Range", {test::i64({}, {0}), test::i64({}, {limit}), test::i64({}, {1})}, {},
                      17)
            .at(0);
    };
    test::expect_error([&] { range(int64_t{1} << 27); }, ErrorKind::kInvalidInput,
                       "Range: an output of shape [134217728] would need 1 GiB");
    const Tensor small = range(5);
    set_memory_ceiling(before);
    EXPECT_EQ(small.dims(), (std::vector<int64_t>{5}));
    EXPECT_EQ(small.data<int64_t>()[4], 4);
}

// MelWeightMatrix filled a vector of num_mel_bins + 2 edges before its output's size was checked
// (int32's maximum: 16 GiB, for a minute; the input sweep), and cast NaN edge bins to int64.
TEST(OpsHostileValues, MelWeightMatrixChecksItsSizeAndEdgesFirst) {
    const auto mel = [](int32_t bins, float lo) {
        return run_op("MelWeightMatrix",
                      {Tensor::from_values<int32_t>(DataType::kInt32, {}, {bins}),
                       Tensor::from_values<int32_t>(DataType::kInt32, {}, {16}),
                       Tensor::from_values<int32_t>(DataType::kInt32, {}, {8000}),
                       test::f32({}, {lo}), test::f32({}, {3000})},
                      {}, 17)
            .at(0);
    };
    const uint64_t before = set_memory_ceiling(64 << 20);
    test::expect_error([&] { mel(std::numeric_limits<int32_t>::max(), 0); },
                       ErrorKind::kInvalidInput,
                       "MelWeightMatrix: an output of shape [9, 2147483647]");
    set_memory_ceiling(before);
    test::expect_error([&] { mel(4, std::nanf("")); }, ErrorKind::kInvalidInput,
                       "edge frequencies must be finite");
    test::expect_error([&] { mel(4, -800); }, ErrorKind::kInvalidInput,
                       "fall outside the spectrum");
    EXPECT_EQ(mel(4, 0).dims(), (std::vector<int64_t>{9, 4}));
}

// LSTM read a negative sequence_lens entry as a row count (heap overflow in its final state
// copy); lengths past the sequence were clipped silently. Both are refused, as ONNX Runtime does.
TEST(OpsHostileValues, LstmSequenceLensMustFitTheSequence) {
    const auto lstm = [](int32_t len) {
        return run_op("LSTM",
                      {test::f32({2, 1, 1}, {1, 2}), test::f32({1, 4, 1}, {1, 1, 1, 1}),
                       test::f32({1, 4, 1}, {1, 1, 1, 1}), Tensor(),
                       Tensor::from_values<int32_t>(DataType::kInt32, {1}, {len})},
                      ir::attrs(Attribute::make_int("hidden_size", 1)), 14)
            .at(0);
    };
    test::expect_error([&] { lstm(-1); }, ErrorKind::kInvalidInput,
                       "sequence_lens[0] is -1, outside [0, 2]");
    test::expect_error([&] { lstm(3); }, ErrorKind::kInvalidInput, "outside [0, 2]");
    EXPECT_EQ(lstm(1).dims(), (std::vector<int64_t>{2, 1, 1, 1}));
}

// Col2Im multiplied image_shape's and block_shape's dims in int64 unchecked.
TEST(OpsHostileValues, Col2ImSizesPastInt64AreRefused) {
    const auto col2im = [](int64_t side) {
        return run_op("Col2Im",
                      {test::f32({1, 4, 1}, {1, 2, 3, 4}), test::i64({2}, {side, side}),
                       test::i64({2}, {2, 2})},
                      {}, 18)
            .at(0);
    };
    test::expect_error([&] { col2im(1000000000000); }, ErrorKind::kInvalidInput,
                       "sizes past int64");
    EXPECT_EQ(col2im(2).dims(), (std::vector<int64_t>{1, 1, 2, 2}));
}

// Attention (opset 24) took nonpad_kv_seqlen as given: int64's lowest minus the query length
// overflowed.
TEST(OpsHostileValues, AttentionNonpadLengthsMustFitTheKeys) {
    const Tensor qkv = test::f32({1, 1, 2, 2}, {1, 0, 0, 1});
    test::expect_error(
        [&] {
            run_op("Attention", {qkv, qkv, qkv, Tensor(), Tensor(), Tensor(), test::i64({1}, {-5})},
                   {}, 24);
        },
        ErrorKind::kInvalidInput, "nonpad_kv_seqlen holds -5, outside [0, 2]");
    EXPECT_EQ(run_op("Attention",
                     {qkv, qkv, qkv, Tensor(), Tensor(), Tensor(), test::i64({1}, {2})}, {}, 24)
                  .at(0)
                  .dims(),
              (std::vector<int64_t>{1, 1, 2, 2}));
}

// SplitToSequence summed its split sizes in int64 unchecked (two of int64's maximum).
TEST(OpsHostileValues, SplitToSequenceSizesMustNotOverflow) {
    test::expect_error(
        [] {
            run_op("SplitToSequence", {test::f32({4}, {1, 2, 3, 4}), test::i64({2}, {kMax, kMax})},
                   {}, 11);
        },
        ErrorKind::kInvalidInput, "must not be negative or add up past the axis length 4");
    test::expect_error(
        [] {
            run_op("SplitToSequence", {test::f32({4}, {1, 2, 3, 4}), test::i64({2}, {6, -2})}, {},
                   11);
        },
        ErrorKind::kInvalidInput, "must not be negative");
}

// CumSum of integers wraps as numpy's does (signed overflow was undefined).
TEST(OpsHostileValues, IntegerCumSumWraps) {
    constexpr int32_t kTop = std::numeric_limits<int32_t>::max();
    const Tensor y =
        run_op("CumSum",
               {Tensor::from_values<int32_t>(DataType::kInt32, {2}, {kTop, 1}), test::i64({}, {0})},
               {}, 14)
            .at(0);
    EXPECT_EQ(y.data<int32_t>()[0], kTop);
    EXPECT_EQ(y.data<int32_t>()[1], std::numeric_limits<int32_t>::min());
}

// SequenceConstruct (x, y) -> ConcatFromSequence(axis 0) with y fed as `y`. A sequence of mixed
// types was concatenated as the first's type (wrong values, or reads past the smaller one's
// storage), and tensors of another rank were concatenated unchecked (a crash): Debian's
// simple/test_sequence_model4 under the input sweep.
Tensor concat_of_sequence(const Tensor& y) {
    auto m = ir::new_model(12);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{2, 2});
    ir::Value* yv = b.input("y", y.dtype(), ir::Shape{});
    yv->set_type(ir::TypeInfo::tensor(y.dtype(), std::nullopt));  // any rank
    ir::Value* seq = b.op("SequenceConstruct", {x, yv}, {}, "seq");
    ir::Value* out =
        b.op("ConcatFromSequence", {seq}, ir::attrs(Attribute::make_int("axis", 0)), "cat");
    b.output(out, DataType::kFloat32, {-1, 2});
    runtime::Session session(*m, runtime::SessionOptions{});
    runtime::Feeds feeds;
    feeds["x"] = ops::RtValue::of(test::f32({2, 2}, {1, 2, 3, 4}));
    feeds["y"] = ops::RtValue::of(y);
    return session.run(feeds).at(0).second.tensor();
}

TEST(OpsHostileValues, SequencesHoldOneTypeAndConcatenateMatchingDims) {
    test::expect_error(
        [] {
            concat_of_sequence(Tensor::from_values<double>(DataType::kFloat64, {1, 2}, {5, 6}));
        },
        ErrorKind::kInvalidInput, "a sequence of float32 tensors cannot hold a float64 tensor");
    test::expect_error([] { concat_of_sequence(test::f32({}, {5})); }, ErrorKind::kInvalidInput,
                       "cannot concatenate float32 [2, 2] and float32 [] along axis 0");
    test::expect_error(
        [] {
            concat_of_sequence(test::f32({1, 3}, {5, 6, 7}));
        },
        ErrorKind::kInvalidInput, "and float32 [1, 3] along axis 0");
    EXPECT_EQ(test::values_f32(concat_of_sequence(test::f32({1, 2}, {5, 6}))),
              (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

}  // namespace
}  // namespace pg
