// The kernels of the runtime's blocked steps (runtime/fuse_nchwc.cc). A blocked value is the
// rank-5 tensor (N, C / 16, H, W, 16) of a 2-D op's value (ops/nchwc.h). Each kernel also takes
// its inputs plain (a value the entry reorder passed through, its channels not being a multiple
// of 16 at run time, or a type the blocked kernels do not run): it then runs the plain kernel
// on plain inputs and leaves its output plain, so the values are always the plain steps' and
// only the layout varies. Tests: tests/unit/ops_nchwc_kernels_test.cc.
#pragma once

#include <cstddef>
#include <vector>

#include "ops/attrs.h"
#include "ops/conv_fused.h"
#include "ops/kernel.h"
#include "ops/norm_fused.h"

namespace pg::ops {

// t is a blocked value: rank 5, last dim 16.
bool is_nchwc(const Tensor& t);
// The plain copy of a blocked t (t itself when it is not blocked).
Tensor plain_of(const Tensor& t, ThreadPool* pool);

// Input 0 -> output 0 blocked (a rank-4 float32 tensor with channels a multiple of 16: what the
// blocked kernels run), else passed through as it is (the steps after it then run plain).
KernelFn make_to_nchwc();
// Input 0 -> output 0 plain when blocked, else passed through.
KernelFn make_from_nchwc();
// A Conv chain (ConvChain, no shuffle) on blocked X (and residual): conv_nchwc with the chain's
// epilogue (conv_nchwc_winograd where nchwc_winograd_pays: 3x3, stride 1, maps of 13 x 13 and
// more), the output blocked (also from a plain float32 X); with output channels not a multiple
// of 16 and no residual, conv_nchwc_plain_out and the output plain. `blocked`: the inputs the plan
// gives blocked (X, the residual); anything else, or a Conv conv_nchwc does not run, goes
// through `plain` (the NCHW chain's kernel) on plain inputs.
KernelFn make_nchwc_conv(const ConvChain& chain, std::vector<size_t> blocked, KernelFn plain);
// A Conv chain make_nchwc_conv would run with its output plain (output channels not in whole
// blocks, no residual) whose only reader is the GlobalAveragePool node `average`: the two in one
// step (conv_nchwc_global_average), its output the pool's. Otherwise (a plain X, another type)
// `plain` (the chain's kernel) on plain inputs, then `plain_average` (the pool's) on its output.
// `average` must outlive the kernel (the plan's node).
KernelFn make_nchwc_conv_global_average(const ConvChain& chain, std::vector<size_t> blocked,
                                        KernelFn plain, const ir::Node& average,
                                        KernelFn plain_average);
// MaxPool (one output), AveragePool, GlobalAveragePool, GlobalMaxPool on blocked float32 X;
// `plain` is the op's kernel.
KernelFn make_nchwc_pool(const std::string& op, const Attrs& a, KernelFn plain);

// A BatchNormalization chain (norm_fused.h) on blocked float32 X: batch_norm_nchwc, the output
// blocked; `plain` is the chain's kernel (make_batch_norm_chain).
KernelFn make_nchwc_batch_norm(const BatchNormChain& chain, KernelFn plain);

// Concat along the channels (axis 1 of rank-4 values) of blocked inputs: the blocks of each
// image one input after another; `plain` is the op's kernel.
KernelFn make_nchwc_concat(KernelFn plain);

}  // namespace pg::ops
