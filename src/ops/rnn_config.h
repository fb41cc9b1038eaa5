// What RNN, GRU and LSTM share between their plain float64 kernel (ops/rnn.cc, the oracle) and
// their float32 fast path (ops/rnn_f32.cc): the parsed attributes, the gate activations, and the
// shapes of one run (checked before anything is read). To add an activation, add a Kind, its
// definition in Act::operator() and its name in make_activation (rnn.cc); Act::apply falls back
// to the definition for kinds without a vector kernel.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/kernel.h"

namespace pg::ops::rnn {

enum class Cell { kRnn, kGru, kLstm };

// Gates per cell (RNN 1, GRU 3: z r h, LSTM 4: i o f c) and activations per direction.
inline int num_gates(Cell c) {
    return c == Cell::kRnn ? 1 : c == Cell::kGru ? 3 : 4;
}
inline int acts_per_dir(Cell c) {
    return c == Cell::kRnn ? 1 : c == Cell::kGru ? 2 : 3;
}

// One gate activation with its alpha and beta (ONNX's recurrent activation names).
struct Act {
    enum class Kind {
        kSigmoid,
        kTanh,
        kRelu,
        kSoftsign,
        kSoftplus,
        kLeakyRelu,
        kThresholdedRelu,
        kElu,
        kAffine,
        kScaledTanh,
        kHardSigmoid
    };
    Kind kind = Kind::kSigmoid;
    double a = 0, b = 0;
    // The definition, in float64 (the plain kernel).
    double operator()(double x) const;
    // x[i] = act(x[i]) in float32: vector kernels for Sigmoid and Tanh, the definition otherwise.
    void apply(float* x, int64_t n) const;
};

struct RnnConfig {
    Cell cell = Cell::kRnn;
    int64_t hidden = 0;
    int num_dirs = 1;
    bool reverse = false;  // single direction "reverse"
    bool layout_batch_first = false;
    double clip = 0;  // 0 = none
    bool input_forget = false;
    bool linear_before_reset = false;
    std::vector<Act> acts;  // per direction: acts_per_dir(cell) activations
};

// Sizes of one run, read from X and checked against every input that is given.
struct RnnDims {
    int64_t seq = 0, batch = 0, input = 0;
    std::vector<int64_t> lens;  // [batch], sequence_lens or seq
};

// Checks X, W, R, B, sequence_lens, initial_h, initial_c and P against each other
// (kInvalidInput) and returns the sizes.
RnnDims check_dims(const KernelContext& ctx, const RnnConfig& c);

// The float32 fast path: true when every given float input is float32.
bool f32_applies(const KernelContext& ctx);
// Runs the op in float32 (X W^T of all steps through gemm_fast, rnn_kernels.h per step) and sets
// the outputs.
void run_f32(KernelContext& ctx, const RnnConfig& c);

}  // namespace pg::ops::rnn
