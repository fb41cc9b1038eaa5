// INT8 calibration for the emulator (--emu --int8): the activation scales of INT8 nodes, from a
// float32 reference run over calibration feeds or from a calibration cache file.
//
// Quantization scheme (TensorRT-like, symmetric, zero point 0): a node at INT8 fake-quantizes
// its float inputs, x -> scale * clamp(round_half_even(x / scale), -128, 127), computes in
// float32 and leaves its output in float32 (the next INT8 node quantizes it again on the way
// in). Activations (non-constant inputs) use one scale per tensor, amax / 127, calibrated here;
// weights (initializers / Constant outputs) use one scale per output channel computed from the
// weights themselves (Conv: axis 0, ConvTranspose: axis 1, MatMul / Gemm B: the N axis). Biases
// (Conv / ConvTranspose / Gemm input 2) stay float32 (TensorRT adds them in higher precision).
//
// Calibration cache format (our own text format, not TensorRT's): a header line, then one line
// per activation tensor, "tensor_name: scale" (the scale printed with 9 significant digits, so
// it reads back bit-identically). Example:
//     polygraph-int8-calibration v1 method=minmax
//     x: 0.0157480314
//     conv_out: 0.0423155129
// Names may contain ':' (the last ": " separates the scale). Blank lines are ignored.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ir/model.h"
#include "runtime/session.h"

namespace pg::emu {

// How an activation's amax is chosen: minmax takes max |x| over every calibration feed;
// percentile the given percentile of |x| over all values seen (99.99 by default), clipping
// outliers (they saturate at run time); entropy the threshold that minimizes the KL divergence
// between the histogram of |x| and its INT8-quantized version (entropy_threshold()).
enum class CalibrationMethod { kMinMax, kPercentile, kEntropy };
// Parses "minmax" / "percentile" / "entropy"; anything else throws kUsage.
CalibrationMethod parse_calibration_method(const std::string& s);
const char* calibration_method_name(CalibrationMethod m);

struct CalibrationOptions {
    CalibrationMethod method = CalibrationMethod::kMinMax;
    double percentile = 99.99;  // with kPercentile, in (0, 100]
    int threads = 0;
};

// Activation scale per tensor name.
using ScaleTable = std::map<std::string, float>;

// Entropy calibration (TensorRT's IInt8EntropyCalibrator2 idea, our own implementation): a
// histogram of |x| with kEntropyBins bins over [0, amax]; for each candidate bin count i in
// [kEntropyLevels, kEntropyBins], P = the first i bins with every larger value folded into bin
// i-1, Q = the first i bins merged into kEntropyLevels levels and spread back evenly over the
// bins of each level that are nonzero in P (zero bins of Q are smoothed by a small epsilon);
// the i with the least KL(P || Q) gives the threshold (i + 0.5) * bin_width, capped at amax.
inline constexpr size_t kEntropyBins = 2048;
inline constexpr size_t kEntropyLevels = 128;
// The threshold for a histogram of |x| (`hist[b]` counts values in [b, b+1) * bin_width).
// Fewer than kEntropyLevels bins, or an empty histogram: hist.size() * bin_width.
double entropy_threshold(const std::vector<double>& hist, double bin_width);
// The entropy amax of a set of |x| values: entropy_threshold() of their kEntropyBins-bin
// histogram over [0, max]. 0 for no values or all zeros.
double entropy_amax(const std::vector<float>& abs_values);

// The activation tensors `node` would quantize at INT8: its non-constant inputs 0 and 1 (the
// operands of Conv / ConvTranspose / MatMul / Gemm), by name.
std::vector<std::string> int8_activation_inputs(const ir::Node& node);
// True when input `slot` of `node` is fake-quantized at INT8 (inputs 0 and 1).
bool int8_quantizes_input(const ir::Node& node, size_t slot);
// The per-channel axis of a constant input (weight) of an INT8 node; -1 for per-tensor.
int int8_weight_axis(const ir::Node& node, size_t slot, size_t rank);

// Runs `model` in float32 once per feed and returns the scale of every activation tensor read
// by `int8_nodes` (nodes of model's main graph).
ScaleTable calibrate(const ir::Model& model, const std::vector<const ir::Node*>& int8_nodes,
                     const std::vector<runtime::Feeds>& feeds, const CalibrationOptions& o);

// The cache text for `scales` (header names `method`).
std::string format_calibration_cache(const ScaleTable& scales, const std::string& method);
// Parses a cache file's text; throws kInvalidInput naming `path` and the line on bad input.
ScaleTable parse_calibration_cache(const std::string& text, const std::string& path);

}  // namespace pg::emu
