// A Conv whose only reader is BatchNormalization and/or a per-channel Mul / Add and/or a residual
// Add / Sum and/or Relu / Clip,
// run as one kernel: the float32 Conv fast path with the normalization, the residual and the
// activation applied to each output tile while it is in cache (GemmEpilogue). The arithmetic is the
// plain kernels', so the result is bit-identical to running Conv, BatchNormalization and the
// activation one after another; tests diff the two (tests/unit/ops_conv_fused_test.cc,
// tests/unit/session_fuse_test.cc). The runtime decides what to fuse (runtime/fuse.cc). To fuse
// another activation, add it to ConvChain::Act, to the epilogue (ops/gemm_kernels.h) and to the
// runtime's matcher.
#pragma once

#include <cstdint>

#include "ops/conv_kernels.h"
#include "ops/kernel.h"

namespace pg::ops {

struct ConvChain {
    enum class Act { kNone, kRelu, kClip };
    ConvAttrs conv;
    bool batch_norm = false;
    double epsilon = 1e-5;
    bool scale = false;     // a Mul by one value per output channel (after the normalization)
    bool shift = false;     // then an Add of one value per output channel
    bool residual = false;  // an Add / Sum of the chain's value and one other tensor
    Act act = Act::kNone;
    // Clip's bounds from attributes (opset < 11); otherwise from inputs when given.
    bool clip_from_attrs = false;
    float clip_min = 0.0f, clip_max = 0.0f;
    // Then ShuffleNet's channel shuffle: Reshape to (n, g, m / g, spatial...), Transpose
    // (0, 2, 1, 3, ...), Reshape back to the Conv's dims, folded into where the Conv writes each
    // output channel (conv_fast's shuffle; not with a residual). The Reshapes' allowzero.
    bool shuffle = false;
    bool shuffle_allowzero[2] = {false, false};
    // The blocked kernels only (nchwc_kernels.h): a pool reads the output next, whole, so the
    // stores that would go around the caches (the blocked Winograd Conv's and the depthwise
    // Conv's) go through them (GemmEpilogue::keep_cached).
    bool keep_cached = false;
};

// The fused kernel. Its inputs: X, W, B (may be omitted), then scale, B, mean, var when
// batch_norm, then the Mul's per-channel factors when scale, the Add's when shift (any shape
// with one value per output channel), then the other addend when residual, then Clip's min, max
// (may be omitted) when act is kClip and not from attributes, then the two Reshapes' shapes when
// shuffle (always the last two inputs). One output: the last op's. Anything
// the float32 fast path does not cover (other types, BatchNormalization parameters of the wrong
// size, a residual that is not exactly the Conv output's shape, non-scalar Clip bounds, per-channel
// factors of the wrong count, Reshapes that do not shuffle channels of this Conv's output) runs
// `plain`, which must run the unfused kernels on the same inputs.
KernelFn make_conv_chain(const ConvChain& chain, KernelFn plain);

// Shared with the blocked chain (nchwc_kernels.cc). Every input after X and W that the fast path
// reads is float32 with the size it expects (X, W and the residual's dims are the caller's to
// check); *residual receives the residual's input index (0: none).
bool conv_chain_inputs_fit(const ConvChain& chain, const KernelContext& ctx, size_t* residual);
// The fused epilogue (rows = output channels): BatchNormalization's per-channel factor as
// batch_norm_fast computes it (held in k), the per-channel Mul / Add, the residual (res only;
// res_origin is the caller's), the activation's bounds. No bias (conv_fast takes it apart).
GemmEpilogue conv_chain_epilogue(const ConvChain& chain, const KernelContext& ctx,
                                 std::vector<float>& k);

}  // namespace pg::ops
