// Winograd F(2x2, 3x3) for 2-D float32 Convs with 3x3 kernels, stride 1 and dilation 1: each
// 4x4 input tile and each 3x3 filter are transformed to 4x4, the 16 transformed positions are
// 16 independent GEMMs over the input channels, and each product transforms back to a 2x2
// output block, so a 3x3 Conv takes 16 multiplications per 4 outputs instead of 36. The
// transforms use only the factors 0, +-1 and 1/2, so the rounding stays a few ulps of the
// direct sum's (numeric contract, not bit for bit: tests/unit/ops_conv_winograd_test.cc diffs
// it against conv_reference). The filter transforms are made per run, in blocks of output
// channels (all at once, up front, when the image takes several bands and they fit), and the
// input is transformed a band of tile rows at a time, so the scratch stays near max(2 MiB, half
// the layer's weights).
#pragma once
#include <cstdint>

#include "ops/conv_kernels.h"
#include "ops/gemm_kernels.h"

namespace pg {
class ThreadPool;
}

namespace pg::ops {

// Whether the Winograd kernel can run a group of `cg` input and `mg` output channels over
// window g: 2-D, 3x3, stride 1, dilation 1, no negative pads, at least 64 channels each way.
bool winograd_takes(const Window& g, int64_t cg, int64_t mg);
// Whether conv_winograd runs it: winograd_takes, and a map large enough (and channels many
// enough) for Winograd to beat the direct path (see the measured rule in conv_winograd.cc), or
// set_winograd_any_size on.
bool winograd_fits(const Window& g, int64_t cg, int64_t mg);
// One (image, group) of a Conv as in conv_direct (a.a: the group's mg x cg*9 weights, a.m = mg,
// a.c / a.ldc: y_g, a.epilogue: the bias and anything fused, applied to each finished output
// row). Returns false, doing nothing, when winograd_fits is false or Winograd is switched off.
bool conv_winograd(const Window& g, const float* xg, int64_t cg, const GemmArgs<float>& a,
                   ThreadPool* pool);
// Tests: switches conv_winograd off (process-wide) so that the direct paths see 3x3 stride-1
// geometries too; returns the previous setting.
bool set_conv_winograd(bool on);
// Tests and benches: turns off transforming every filter once up front (each band then
// transforms its blocks' filters itself; the same values); returns the previous setting.
bool set_winograd_filters_once(bool on);
// Tests: Winograd on every geometry winograd_takes (process-wide), so that small maps exercise
// it; returns the previous setting.
bool set_winograd_any_size(bool on);

}  // namespace pg::ops
