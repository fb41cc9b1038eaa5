// Kernels given attributes and shapes that contradict each other, as a mutated model has them
// (each case is a finding of run_model_fuzz, tests/fuzz/, reduced by hand): every one must be
// refused with kInvalidInput naming the op and the problem, never an internal error, an
// out-of-bounds access, an unbounded allocation or a hang.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "base/error.h"
#include "support/expect_error.h"
#include "support/op_runner.h"

namespace pg {
namespace {

using ir::Attribute;
using test::run_op;

// run_op refused with kInvalidInput, the message holding `text`.
void expect_refused(const std::string& op, const std::vector<Tensor>& inputs,
                    std::vector<Attribute> attrs, int64_t opset, const std::string& text,
                    size_t outputs = 1) {
    test::expect_error([&] { run_op(op, inputs, std::move(attrs), opset, outputs); },
                       ErrorKind::kInvalidInput, text);
}

// TfIdfVectorizer's attributes in TF mode, counting the pool's unigrams and bigrams.
std::vector<Attribute> tfidf_attrs(std::vector<int64_t> counts, std::vector<int64_t> indexes,
                                   std::vector<int64_t> pool, int64_t max_skip = 0) {
    return ir::attrs(
        Attribute::make_int("min_gram_length", 1), Attribute::make_int("max_gram_length", 2),
        Attribute::make_int("max_skip_count", max_skip), Attribute::make_string("mode", "TF"),
        Attribute::make_ints("ngram_counts", std::move(counts)),
        Attribute::make_ints("ngram_indexes", std::move(indexes)),
        Attribute::make_ints("pool_int64s", std::move(pool)));
}

TEST(OpsHostileAttrs, TfIdfVectorizerCountsPastThePool) {
    const Tensor x = test::i64({4}, {1, 2, 3, 4});
    // No pool at all (its attribute misspelled): the bigrams' start at 4 lies past it.
    expect_refused("TfIdfVectorizer", {x}, tfidf_attrs({0, 4}, {0, 1, 2}, {}), 9,
                   "ngram_counts must rise from 0 to at most the pool's 0 tokens");
    expect_refused("TfIdfVectorizer", {x}, tfidf_attrs({0, -2}, {0, 1, 2}, {1, 2, 3, 4}), 9,
                   "ngram_counts must rise");
    expect_refused("TfIdfVectorizer", {x}, tfidf_attrs({3, 1}, {0, 1, 2}, {1, 2, 3, 4}), 9,
                   "ngram_counts must rise");
}

TEST(OpsHostileAttrs, TfIdfVectorizerIndexesMustCoverThePool) {
    const Tensor x = test::i64({4}, {1, 2, 3, 4});
    // Two unigrams and one bigram, two indexes: the bigram's output was read past the indexes.
    expect_refused("TfIdfVectorizer", {x}, tfidf_attrs({0, 2}, {0, 1}, {1, 2, 3, 4}), 9,
                   "2 ngram_indexes for the pool's 3 n-grams");
    // A negative index was a write before the output's counts.
    expect_refused("TfIdfVectorizer", {x}, tfidf_attrs({0, 2}, {0, -1, 1}, {1, 2, 3, 4}), 9,
                   "ngram_indexes holds -1");
    expect_refused("TfIdfVectorizer", {x}, tfidf_attrs({0, 2}, {0, int64_t{1} << 40, 1}, {1, 2}), 9,
                   "outside [0, 2^31)");
}

TEST(OpsHostileAttrs, TfIdfVectorizerHugeSkipEndsAtTheRow) {
    // max_skip_count 2^62 looped over every skip; skips past the row join nothing.
    const auto out = run_op("TfIdfVectorizer", {test::i64({4}, {1, 2, 3, 4})},
                            tfidf_attrs({0, 2}, {0, 1, 2}, {1, 2, 1, 3}, int64_t{1} << 62), 9);
    EXPECT_EQ(test::values_f32(out[0]), (std::vector<float>{1, 1, 1}));
}

// No n-grams and no indexes: an empty output (the counts' empty vector was indexed).
TEST(OpsHostileAttrs, TfIdfVectorizerWithoutNgramsGivesNoOutputs) {
    const auto out = run_op("TfIdfVectorizer", {test::i64({2, 2}, {1, 2, 3, 4})},
                            tfidf_attrs({}, {}, {1, 2}), 9);
    EXPECT_EQ(out[0].dims(), (std::vector<int64_t>{2, 0}));
}

TEST(OpsHostileAttrs, TfIdfVectorizerWeightsMustCoverTheOutput) {
    std::vector<Attribute> a = tfidf_attrs({0, 2}, {0, 1, 2}, {1, 2, 3, 4});
    a.push_back(Attribute::make_floats("weights", {1.0f}));
    a[3] = Attribute::make_string("mode", "IDF");
    expect_refused("TfIdfVectorizer", {test::i64({4}, {1, 2, 3, 4})}, std::move(a), 9,
                   "1 weights for 3 outputs");
}

// LinearAttention's gated rule read decay at (b * T + t) * columns with only its last dim
// checked: a decay of one step for two read past its end.
TEST(OpsHostileAttrs, LinearAttentionStepInputsMustCoverEveryStep) {
    const Tensor q = test::f32({1, 2, 1}, {1, 1}), k = test::f32({1, 2, 1}, {1, 2});
    const Tensor v = test::f32({1, 2, 1}, {3, 4});
    const auto attrs = [](const char* rule) {
        return ir::attrs(Attribute::make_int("q_num_heads", 1),
                         Attribute::make_int("kv_num_heads", 1),
                         Attribute::make_string("update_rule", rule));
    };
    expect_refused("LinearAttention", {q, k, v, Tensor(), test::f32({1, 1, 1}, {0})},
                   attrs("gated"), 27, "decay must be [1, 2, columns], got [1, 1, 1]", 2);
    expect_refused("LinearAttention", {q, k, v, Tensor(), test::f32({1}, {0})}, attrs("gated"), 27,
                   "decay must be [1, 2, columns], got [1]", 2);
    expect_refused("LinearAttention", {q, k, v, Tensor(), Tensor(), test::f32({2, 1, 1}, {1, 1})},
                   attrs("delta"), 27, "beta must be [1, 2, columns]", 2);
    const Tensor beta = test::f32({1, 2, 1}, {1, 1});
    expect_refused("LinearAttention",
                   {q, k, v, Tensor(), Tensor(), beta, test::f32({1, 2, 2}, {1, 1, 1, 1})},
                   attrs("delta"), 27, "erase_gate must have kv_num_heads * d_k columns", 2);
}

// RoiAlign on an inverted roi (half_pixel: no samples, as ONNX's grid of ceil(negative) rows)
// indexed an empty vector of samples; on a map with no rows it read before the input.
TEST(OpsHostileAttrs, RoiAlignWithoutSamplesGivesZeros) {
    const Tensor x = test::f32({1, 1, 2, 2}, {1, 2, 3, 4});
    const Tensor inverted = test::f32({1, 4}, {1.5f, 1.5f, 0.5f, 0.5f});
    const Tensor batch = test::i64({1}, {0});
    EXPECT_EQ(test::values_f32(run_op("RoiAlign", {x, inverted, batch}, {}, 16)[0]),
              (std::vector<float>{0}));
    const Tensor flat = Tensor::zeros(DataType::kFloat32, {1, 2, 0, 3});
    const Tensor roi = test::f32({1, 4}, {0, 0, 1, 1});
    const auto out = run_op("RoiAlign", {flat, roi, batch}, {}, 16)[0];
    EXPECT_EQ(out.dims(), (std::vector<int64_t>{1, 2, 1, 1}));
    EXPECT_EQ(test::values_f32(out), (std::vector<float>{0, 0}));
}

// RotaryEmbedding read a scalar cos cache's last dim (an empty vector's back()), and divided by
// half the head size, 0 for heads of no values.
TEST(OpsHostileAttrs, RotaryEmbeddingScalarCacheAndEmptyHeads) {
    const Tensor x = test::f32({1, 1, 1, 2}, {1, 2});  // [B, H, S, D]
    const Tensor scalar = test::f32({}, {1});
    expect_refused("RotaryEmbedding", {x, scalar, scalar}, {}, 23,
                   "cos/sin caches must have rotary_dim / 2 columns");
    const Tensor empty = Tensor::zeros(DataType::kFloat32, {1, 1, 1, 0});
    const Tensor cache = Tensor::zeros(DataType::kFloat32, {1, 0});
    EXPECT_EQ(run_op("RotaryEmbedding", {empty, cache, cache}, {}, 23)[0].dims(),
              (std::vector<int64_t>{1, 1, 1, 0}));
}

// Reshape multiplied the target's dims in int64 (24 * 2^63 - 1 overflowed): a target past int64
// is refused as any other wrong count.
TEST(OpsHostileAttrs, ReshapeToAShapePastInt64IsRefused) {
    const Tensor x = Tensor::zeros(DataType::kFloat32, {2, 24});
    const int64_t big = INT64_MAX;
    expect_refused("Reshape", {x, test::i64({3}, {24, big, -1})}, {}, 14, "cannot infer -1");
    expect_refused("Reshape", {x, test::i64({2}, {big, big})}, {}, 14, "cannot reshape");
}

// Range read element 0 of start, limit and delta whatever their size (an empty one: a read past
// its storage).
TEST(OpsHostileAttrs, RangeTakesScalarsOnly) {
    const Tensor one = test::f32({}, {1}), empty = Tensor::zeros(DataType::kFloat32, {0});
    expect_refused("Range", {empty, one, one}, {}, 11,
                   "Range: start, limit and delta must be scalars, input 0 has shape [0]");
    expect_refused("Range", {one, test::f32({2}, {5, 6}), one}, {}, 11, "input 1 has shape [2]");
    EXPECT_EQ(test::values_f32(
                  run_op("Range", {test::f32({1}, {0}), test::f32({}, {3}), one}, {}, 11)[0]),
              (std::vector<float>{0, 1, 2}));
}

// MaxUnpool read strides and pads with std::vector::at: one stride for two axes was an internal
// error.
TEST(OpsHostileAttrs, MaxUnpoolCountsItsStridesAndPads) {
    const Tensor x = test::f32({1, 1, 2, 2}, {1, 2, 3, 4}),
                 i = test::i64({1, 1, 2, 2}, {0, 1, 2, 3});
    const auto attrs = [](std::vector<int64_t> strides, std::vector<int64_t> pads) {
        return ir::attrs(Attribute::make_ints("kernel_shape", {2, 2}),
                         Attribute::make_ints("strides", std::move(strides)),
                         Attribute::make_ints("pads", std::move(pads)));
    };
    expect_refused("MaxUnpool", {x, i}, attrs({2}, {0, 0, 0, 0}), 11,
                   "strides need one value per spatial axis and pads two");
    expect_refused("MaxUnpool", {x, i}, attrs({2, 2}, {0, 0}), 11, "and pads two");
    expect_refused("MaxUnpool", {x, i}, attrs({0, 2}, {0, 0, 0, 0}), 11,
                   "strides must be positive");
}

Tensor u8(std::vector<int64_t> dims, std::vector<uint8_t> v) {
    return Tensor::from_values(DataType::kUInt8, std::move(dims), v);
}

// ConvInteger and QLinearConv had their own window code with no checks: 3-D weights for a 4-D
// input read past the weights' dims (the fuzzer's finding), and strides of 0 divided by zero.
// They now take Conv's shape checks.
TEST(OpsHostileAttrs, IntegerConvsTakeConvsShapeChecks) {
    const Tensor x = u8({1, 1, 3, 3}, std::vector<uint8_t>(9, 1));
    expect_refused("ConvInteger", {x, u8({2, 1, 2}, {1, 2, 3, 4})}, {}, 10,
                   "ConvInteger: X must have rank >= 3 and W the same rank");
    const Tensor w = u8({2, 1, 2, 2}, std::vector<uint8_t>(8, 1));
    expect_refused("ConvInteger", {x, w}, ir::attrs(Attribute::make_ints("strides", {0, 0})), 10,
                   "stride");
    expect_refused("ConvInteger", {x, u8({2, 2, 2, 2}, std::vector<uint8_t>(16, 1))}, {}, 10,
                   "channels do not match");
    const auto out = run_op("ConvInteger", {x, w}, {}, 10)[0];
    EXPECT_EQ(out.dims(), (std::vector<int64_t>{1, 2, 2, 2}));
    EXPECT_EQ(out.data<int32_t>()[0], 4);
}

// QLinearConv read its bias per output channel, and QLinear ops their scales and zero points,
// without counting them.
TEST(OpsHostileAttrs, QuantizedParametersAreCounted) {
    const Tensor x = u8({1, 1, 2, 2}, {1, 2, 3, 4}), w = u8({2, 1, 1, 1}, {1, 1});
    const Tensor one = test::f32({}, {1}), zero = u8({}, {0});
    const Tensor bias1 = Tensor::from_values<int32_t>(DataType::kInt32, {1}, {5});
    expect_refused("QLinearConv", {x, one, zero, w, one, zero, one, zero, bias1}, {}, 10,
                   "QLinearConv: B must have M = 2 values, got 1");
    expect_refused("QLinearConv", {x, one, zero, w, test::f32({3}, {1, 1, 1}), zero, one, zero}, {},
                   10, "3 weight scales for an output of shape [1, 2, 2, 2]");
    const Tensor no_zp = Tensor::zeros(DataType::kUInt8, {0});
    expect_refused("QLinearConv", {x, one, zero, w, one, zero, one, no_zp}, {}, 10,
                   "y_zero_point: expected a single value, got 0");
    expect_refused("QLinearConv", {x, one, zero, w, one, u8({3}, {0, 0, 0}), one, zero}, {}, 10,
                   "a zero point of shape [3] for an input of shape [2, 1, 1, 1]");
    const Tensor a = u8({2, 2}, {1, 2, 3, 4});
    expect_refused("MatMulInteger", {a, a, u8({3}, {0, 0, 0})}, {}, 10,
                   "MatMulInteger: a zero point of shape [3]");
    expect_refused("MatMulInteger", {u8({}, {1}), a}, {}, 10, "operands must have rank >= 1");
}

TEST(OpsHostileAttrs, GemmInputsOfAnotherTypeAreRefused) {
    // A float16 A with an int8 B: B was read as floats, past its storage.
    const Tensor a = Tensor::from_values<uint16_t>(DataType::kFloat16, {1, 2}, {0x3c00, 0x3c00});
    const Tensor b8 = Tensor::from_values<int8_t>(DataType::kInt8, {2, 2}, {1, 2, 3, 4});
    expect_refused("Gemm", {a, b8}, {}, 13, "Gemm: inputs 0 and 1 have different types");
    const Tensor x = test::f32({1, 2}, {1, 2}), b = test::f32({2, 2}, {1, 0, 0, 1});
    expect_refused("Gemm", {x, b, test::i64({2}, {1, 1})}, {}, 13,
                   "inputs 0 and 2 have different types (float32 and int64)");
}

TEST(OpsHostileAttrs, MaxRoiPoolRoisOfAnotherTypeAreRefused) {
    const Tensor x = test::f32({1, 1, 2, 2}, {1, 2, 3, 4});
    const Tensor rois = Tensor::from_values<double>(DataType::kFloat64, {1, 5}, {0, 0, 0, 1, 1});
    expect_refused("MaxRoiPool", {x, rois}, ir::attrs(Attribute::make_ints("pooled_shape", {1, 1})),
                   1, "MaxRoiPool: X and rois have different types");
}

TEST(OpsHostileAttrs, GridSampleRefusesAnEmptyImage) {
    // X of 0 columns: each sample took the address of its plane in an empty vector.
    const Tensor x = Tensor::zeros(DataType::kFloat32, {1, 1, 2, 0});
    expect_refused("GridSample", {x, test::f32({1, 1, 1, 2}, {0, 0})}, {}, 16,
                   "GridSample: X has an empty spatial dim (shape [1, 1, 2, 0])");
}

TEST(OpsHostileAttrs, MaxRoiPoolRefusesNonFiniteAndHugeRois) {
    const Tensor x = test::f32({1, 1, 2, 2}, {1, 2, 3, 4});
    const auto pooled = [] { return ir::attrs(Attribute::make_ints("pooled_shape", {1, 1})); };
    const float nan = std::numeric_limits<float>::quiet_NaN();
    expect_refused("MaxRoiPool", {x, test::f32({1, 5}, {0, 0, 0, nan, 1})}, pooled(), 1,
                   "MaxRoiPool: roi 0 holds a non-finite or huge value");
    expect_refused("MaxRoiPool", {x, test::f32({1, 5}, {0, 0, 0, 1, 1e30f})}, pooled(), 1,
                   "non-finite or huge");
}

TEST(OpsHostileAttrs, NormalizationParametersMustBeFloats) {
    const Tensor x = test::f32({1, 2, 2}, {1, 2, 3, 4});
    const Tensor s8 = Tensor::from_values<int8_t>(DataType::kInt8, {2}, {1, 1});
    expect_refused("InstanceNormalization", {x, s8, test::f32({2}, {0, 0})}, {}, 6,
                   "InstanceNormalization: inputs 0 and 1 have different types (float32 and int8)");
    expect_refused("BatchNormalization", {x, s8, s8, s8, s8}, {}, 15, "got int8");
}

TEST(OpsHostileAttrs, BatchNormalizationParametersMayHaveTheirOwnFloatType) {
    // Opset 15: float64 X, float32 scale / bias / mean / var (they were read as doubles).
    const Tensor x = Tensor::from_values<double>(DataType::kFloat64, {1, 2, 1}, {3, 5});
    const Tensor one = test::f32({2}, {1, 2}), zero = test::f32({2}, {0, 0});
    const Tensor var = test::f32({2}, {1, 1});
    const Tensor y = run_op("BatchNormalization", {x, one, zero, zero, var},
                            ir::attrs(Attribute::make_float("epsilon", 0)), 15)[0];
    ASSERT_EQ(y.dtype(), DataType::kFloat64);
    EXPECT_EQ(y.element_as_double(0), 3);
    EXPECT_EQ(y.element_as_double(1), 10);
}

// STFT indexed its signal's three dims and its window's one unchecked (a scalar signal: the input
// sweep, tests/conformance/), and read a window shorter than frame_length past its end.
TEST(OpsHostileAttrs, StftChecksItsSignalAndWindow) {
    const Tensor signal = test::f32({1, 8, 1}, {1, 2, 3, 4, 5, 6, 7, 8});
    const Tensor step = test::i64({}, {4});
    expect_refused("STFT", {test::f32({}, {1}), step}, {}, 17,
                   "signal must be (batch, length, 1 or 2), got []");
    expect_refused("STFT", {test::f32({1, 8, 3}, std::vector<float>(24, 1.0f)), step}, {}, 17,
                   "signal must be (batch, length, 1 or 2)");
    expect_refused("STFT", {signal, step, test::f32({}, {1})}, {}, 17, "window must be 1-D");
    expect_refused("STFT", {signal, step, test::f32({3}, {1, 1, 1}), test::i64({}, {4})}, {}, 17,
                   "window has 3 values, frame_length is 4");
    const Tensor y = run_op("STFT", {signal, step, test::f32({4}, {1, 1, 1, 1})}, {}, 17).at(0);
    EXPECT_EQ(y.dims(), (std::vector<int64_t>{1, 2, 3, 2}));  // onesided: 4 / 2 + 1 bins
    EXPECT_FLOAT_EQ(test::values_f32(y)[0], 10.0f);           // 1 + 2 + 3 + 4
}

// The attribute sweep (tests/conformance/attribute_sweep_test.cc): a blocksize of 2^40 squared
// wrapped to 0, and C % 0 was a division by zero (SIGFPE).
TEST(OpsHostileAttrs, DepthToSpaceBlocksizeSquaredOverflows) {
    const Tensor x = test::f32({1, 4, 1, 1}, {1, 2, 3, 4});
    for (const int64_t b :
         {int64_t{1} << 32, int64_t{1} << 40, std::numeric_limits<int64_t>::max()})
        expect_refused("DepthToSpace", {x}, ir::attrs(Attribute::make_int("blocksize", b)), 13,
                       "C divisible by blocksize^2");
    const Tensor empty = Tensor::zeros(DataType::kFloat32, {1, 0, 2, 2});
    expect_refused("DepthToSpace", {empty},
                   ir::attrs(Attribute::make_int("blocksize", int64_t{1} << 62)), 13,
                   "C divisible by blocksize^2");
    const Tensor tall = Tensor::zeros(DataType::kFloat32, {1, 0, int64_t{1} << 33, 1});
    expect_refused("DepthToSpace", {tall},
                   ir::attrs(Attribute::make_int("blocksize", int64_t{1} << 31)), 13,
                   "height or width overflows");
    const Tensor flat = Tensor::zeros(DataType::kFloat32, {1, 3, 0, 0});
    expect_refused("SpaceToDepth", {flat},
                   ir::attrs(Attribute::make_int("blocksize", int64_t{1} << 40)), 13,
                   "channels overflow");
}

// The sanitizer build's attribute sweep: a DeformConv stride of 0 divided by zero in the output
// size; LSTM's gates x hidden_size and a blocked quantization's block count overflowed int64.
TEST(OpsHostileAttrs, DeformConvRnnAndBlockSizesAreBounded) {
    const Tensor x = test::f32({1, 1, 2, 2}, {1, 2, 3, 4}), w = test::f32({1, 1, 1, 1}, {1});
    const Tensor off = Tensor::zeros(DataType::kFloat32, {1, 2, 2, 2});
    expect_refused("DeformConv", {x, w, off}, ir::attrs(Attribute::make_ints("strides", {0, 1})),
                   19, "strides must lie in [1, 2^40]");
    expect_refused(
        "DeformConv", {x, w, off},
        ir::attrs(Attribute::make_ints("pads", {0, 0, std::numeric_limits<int64_t>::max(), 0})), 19,
        "pads must lie in [0, 2^40]");
    const Tensor seq = test::f32({1, 1, 1}, {1}), lw = test::f32({1, 4, 1}, {1, 1, 1, 1});
    expect_refused(
        "LSTM", {seq, lw, lw},
        ir::attrs(Attribute::make_int("hidden_size", std::numeric_limits<int64_t>::max())), 14,
        "hidden_size must lie in [1, 2^40]");
    const Tensor scale = test::f32({1, 1}, {1});
    // One block past the axis' 4 values: (4 + block - 1) / block overflowed.
    const Tensor one_block =
        run_op("DequantizeLinear",
               {Tensor::from_values<int8_t>(DataType::kInt8, {1, 4}, {1, 2, 3, 4}), scale},
               ir::attrs(Attribute::make_int("axis", 1),
                         Attribute::make_int("block_size", std::numeric_limits<int64_t>::max())),
               21)[0];
    EXPECT_EQ(test::values_f32(one_block), (std::vector<float>{1, 2, 3, 4}));
    expect_refused("DequantizeLinear",
                   {Tensor::from_values<int8_t>(DataType::kInt8, {1, 4}, {1, 2, 3, 4}), scale},
                   ir::attrs(Attribute::make_int("axis", 1), Attribute::make_int("block_size", -2)),
                   21, "block_size must not be negative");
}

TEST(OpsHostileAttrs, RoiAlignOutputSizeOverflowIsRefused) {
    const Tensor x = test::f32({1, 1, 2, 2}, {1, 2, 3, 4}), rois = test::f32({1, 4}, {0, 0, 1, 1});
    const Tensor batch = test::i64({1}, {0});
    expect_refused(
        "RoiAlign", {x, rois, batch},
        ir::attrs(Attribute::make_int("output_height", std::numeric_limits<int64_t>::max()),
                  Attribute::make_int("output_width", 5)),
        16, "output_height x output_width overflows int64");
}

// The sanitizer build's attribute sweep: group x the weights' channels and Split's sizes summed
// past int64.
TEST(OpsHostileAttrs, GroupAndSplitSizesOverflowAreRefused) {
    const Tensor x = test::f32({1, 4, 2, 2}, std::vector<float>(16, 1.0f));
    const Tensor w = test::f32({4, 4, 1, 1}, std::vector<float>(16, 1.0f));
    expect_refused("Conv", {x, w},
                   ir::attrs(Attribute::make_int("group", std::numeric_limits<int64_t>::max())), 11,
                   "channels do not match the weights and group");
    constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
    expect_refused("Split", {test::f32({2}, {1, 2})},
                   ir::attrs(Attribute::make_ints("split", {kMax, kMax})), 11,
                   "split sizes overflow int64", 2);
}

// A flag ONNX defines as 0 or 1, given another value: ONNX Runtime reads keepdims 2 as 0 and
// ceil_mode 2 as 1, and gives noise for Cast's saturate 2 (the ONNX Runtime differential suite
// found these); the reference refuses the model instead of picking a reading.
TEST(OpsHostileAttrs, FlagsOtherThanZeroOrOneAreRefused) {
    const Tensor x = test::f32({1, 1, 2, 2}, {1, 2, 3, 4});
    for (const int64_t v : {int64_t{2}, int64_t{-1}, std::numeric_limits<int64_t>::min()}) {
        expect_refused("ArgMax", {x}, ir::attrs(Attribute::make_int("keepdims", v)), 13,
                       "attribute 'keepdims' is " + std::to_string(v) + "; it must be 0 or 1");
        expect_refused("ReduceSum", {x}, ir::attrs(Attribute::make_int("keepdims", v)), 13,
                       "'keepdims'");
        expect_refused("AveragePool", {x},
                       ir::attrs(Attribute::make_ints("kernel_shape", {2, 2}),
                                 Attribute::make_int("ceil_mode", v)),
                       19, "'ceil_mode'");
        expect_refused("Cast", {x},
                       ir::attrs(Attribute::make_int("to", 1), Attribute::make_int("saturate", v)),
                       21, "'saturate'");
        expect_refused("CumSum", {x, test::i64({}, {0})},
                       ir::attrs(Attribute::make_int("reverse", v)), 14, "'reverse'");
    }
    // 0 and 1 still run, and mean what ONNX says.
    EXPECT_EQ(run_op("ArgMax", {x}, ir::attrs(Attribute::make_int("keepdims", 0)), 13)[0].rank(), 3);
    EXPECT_EQ(run_op("ArgMax", {x}, ir::attrs(Attribute::make_int("keepdims", 1)), 13)[0].rank(), 4);
}

// An axis named twice (-1 and 3 of a rank-4 tensor): Pad applied the last pads, Resize and
// CenterCropPad resized or cropped the axis once per entry. ONNX leaves it undefined and ONNX
// Runtime refuses it (the differential suite found the difference).
TEST(OpsHostileAttrs, RepeatedAxesAreRefused) {
    const Tensor x = test::f32({1, 1, 2, 2}, {1, 2, 3, 4});
    expect_refused("Pad", {x, test::i64({4}, {1, 1, 1, 1}), Tensor(), test::i64({2}, {-1, 3})},
                   {}, 18, "Pad: axis 3 is listed twice");
    expect_refused("CenterCropPad", {x, test::i64({2}, {1, 1})},
                   ir::attrs(Attribute::make_ints("axes", {-1, 3})), 18,
                   "CenterCropPad: axis 3 is listed twice");
    expect_refused("Resize", {x, Tensor(), test::f32({2}, {2, 2})},
                   ir::attrs(Attribute::make_ints("axes", {3, -1})), 19,
                   "Resize: axis 3 is listed twice");
}

// A Constant with two value attributes: ONNX allows one; ONNX Runtime took one, the reference
// another (the differential suite's Constant cases with value_float added beside value).
TEST(OpsHostileAttrs, ConstantWithTwoValuesIsRefused) {
    expect_refused("Constant", {},
                   ir::attrs(Attribute::make_float("value_float", 1),
                             Attribute::make_int("value_int", 2)),
                   13, "Constant: one value attribute allowed; found 'value_float' and 'value_int'");
    EXPECT_EQ(run_op("Constant", {}, ir::attrs(Attribute::make_int("value_int", 2)), 13)[0]
                  .data<int64_t>()[0],
              2);
}

// Models ONNX's checker refuses, which the reference ran with a guess (session 34).
TEST(OpsHostileAttrs, ContradictoryOrMissingAttributesAreRefused) {
    const Tensor x = test::f32({4}, {1, 2, 3, 4});
    expect_refused("Split", {x, test::i64({2}, {2, 2})},
                   ir::attrs(Attribute::make_int("num_outputs", 2)), 18,
                   "both the split input and the num_outputs attribute", 2);
    expect_refused("Split", {x}, ir::attrs(Attribute::make_int("num_outputs", 0)), 18,
                   "num_outputs is 0", 2);
    expect_refused("Resize", {test::f32({1, 1, 2, 2}, {1, 2, 3, 4}), Tensor(),
                              test::f32({4}, {1, 1, 2, 2})},
                   ir::attrs(Attribute::make_string("keep_aspect_ratio_policy", "wide")), 19,
                   "unknown keep_aspect_ratio_policy 'wide'");
    std::vector<Attribute> no_mode = tfidf_attrs({0, 2}, {0, 1, 2}, {1, 2, 3, 4});
    no_mode.erase(no_mode.begin() + 3);  // mode
    expect_refused("TfIdfVectorizer", {test::i64({4}, {1, 2, 3, 4})}, std::move(no_mode), 9,
                   "required attribute 'mode' is missing");
}

}  // namespace
}  // namespace pg
