// A model zoo built in code with our own IR builder, for benchmarks and tests: ResNet-, MobileNet-
// and transformer-style networks, an LSTM and an N-node chain, all opset 17 with static input
// shapes and seeded random weights (the same seed gives the same model, bit for bit). Every
// builder takes an options struct whose defaults are the benchmark sizes; tests shrink them.
// To add a model: an options struct, a builder returning std::unique_ptr<ir::Model>, and a line
// in bench/interpreter_bench.cc and tests/unit/zoo_test.cc.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/model.h"

namespace pg::zoo {

// ResNet-18-like CNN: 7x7/2 stem, MaxPool, basic blocks (Conv+BatchNorm+Relu, residual Add,
// 1x1 downsample), GlobalAveragePool, Flatten, Gemm. Input "image" [1, 3, image, image].
struct ResNetOptions {
    int64_t image = 224;                     // input height and width
    int64_t width = 64;                      // channels of the first stage (doubled per stage)
    int64_t classes = 1000;                  // logits
    std::vector<int> blocks = {2, 2, 2, 2};  // basic blocks per stage
    uint32_t seed = 1;
};
std::unique_ptr<ir::Model> resnet_style(const ResNetOptions& options = {});

// MobileNet-v1-like CNN: 3x3/2 stem, 13 depthwise-separable blocks (3x3 Conv with group=C, then
// 1x1 Conv, each followed by BatchNorm and Clip(0, 6) as Relu6), GlobalAveragePool, Gemm.
// Input "image" [1, 3, image, image].
struct MobileNetOptions {
    int64_t image = 224;
    int64_t width = 32;  // stem channels; the blocks use 2x .. 32x this
    int64_t classes = 1000;
    uint32_t seed = 2;
};
std::unique_ptr<ir::Model> mobilenet_style(const MobileNetOptions& options = {});

// Pre-norm transformer encoder: per layer LayerNormalization, Q/K/V MatMuls, Reshape/Transpose
// to heads, MatMul, scale, Softmax, MatMul, Transpose/Reshape back, output MatMul, residual Add,
// then LayerNormalization and an FFN (MatMul, activation, MatMul) with a residual Add. Even
// layers use Relu in the FFN, odd layers Erf-based GELU. Input "x" [1, seq, d_model].
struct TransformerOptions {
    int64_t seq = 128;
    int64_t d_model = 256;
    int64_t heads = 4;
    int64_t layers = 2;
    int64_t ffn = 1024;  // hidden width of the feed-forward block
    uint32_t seed = 3;
};
std::unique_ptr<ir::Model> transformer_encoder(const TransformerOptions& options = {});

// One forward LSTM layer over "x" [seq, batch, input], then a MatMul head on every step's
// hidden state: output [seq, 1, batch, outputs].
struct LstmOptions {
    int64_t seq = 32;
    int64_t batch = 1;
    int64_t input = 64;
    int64_t hidden = 128;
    int64_t outputs = 16;
    uint32_t seed = 4;
};
std::unique_ptr<ir::Model> lstm_model(const LstmOptions& options = {});

// A chain of `nodes` float ops on "x" [1, width], cycling through Add, Mul, Tanh, Sub, Sigmoid
// and Abs (constants are seeded random vectors); values stay bounded for any length.
std::unique_ptr<ir::Model> chain_model(int64_t nodes, int64_t width = 16, uint32_t seed = 5);

// Replaces every ConstantOfShape node of the main graph whose shape input is a constant int64
// initializer and whose value is float32 (or absent) by a float32 initializer of that shape
// with the same name, holding seeded random values: tensors of rank >= 2 (weights) uniform in
// +-sqrt(3 / fan_in) (variance 1 / fan_in: deep nets neither blow up nor saturate their softmax)
// with fan_in = product of dims[1:]; BatchNormalization scales and variances (rank 1) uniform
// in [0.5, 1.5), so variances stay positive; other rank 0 or 1 tensors (biases, BatchNorm
// offsets and means) uniform in +-0.1. Shape initializers left unused are removed. Returns how many
// nodes were replaced.
//   before: s = [64, 3, 3, 3] (int64); w = ConstantOfShape(s); y = Conv(x, w)
//   after:  w = <random float32 [64, 3, 3, 3]>; y = Conv(x, w)
// `debug precision` / `debug reduce` test bed: a chain of `nodes` float32 ops on "x" [1, width]
// (Mul by constants in [0.8, 1.25), Add and Sub of constants in +-0.5, Abs, Neg: values stay
// O(1), FP16 rounding keeps them within 1e-2 and errors neither shrink nor grow) with two planted
// overflow points, at about one third and two thirds of the chain: Sigmoid, then Add(65504) named
// "plant<i>_add" (its exact result exceeds FP16's 65504) and Sub(65504) named "plant<i>_sub"
// (cancels, so in FP16 it returns 0). Under FP16 emulation the model fails any tolerance below ~0.3
// unless exactly the four planted nodes stay in float32. Other nodes are named "n<k>_<op>".
struct PlantedOptions {
    int64_t nodes = 210;  // total node count, planted ones included (at least 12)
    int64_t width = 16;
    uint32_t seed = 6;
};
std::unique_ptr<ir::Model> planted_overflow_model(const PlantedOptions& options = {});
// The names of the planted nodes, in graph order: plant1_add, plant1_sub, plant2_add, plant2_sub.
std::vector<std::string> planted_node_names();

int randomize_constant_of_shape_weights(ir::Model& model, uint32_t seed);

}  // namespace pg::zoo
