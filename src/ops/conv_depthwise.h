// Internal to the depthwise convolution fast path (conv_depthwise.cc): the AVX-512 kernels for
// 3x3 planes with column stride 1 or 2 (conv_depthwise_avx512.cc). It reads the padded copy the
// plane path builds (`cols` floats per row, dilation 1), up to kDepthwiseSlack floats past the
// copy's end, which the caller must allocate.
#pragma once

#include <cstdint>

#include "ops/conv_kernels.h"

namespace pg::ops {

inline constexpr int64_t kDepthwiseSlack = 64;

// True when this build and CPU have AVX-512F.
bool depthwise_avx512_available();
// Output plane yc (g.out[1] x g.out[2]) = bias b + the 3x3 taps wk over the padded copy buf
// (column stride 1 or 2), then `epilogue` (may be nullptr) as channel c's GemmEpilogue::apply,
// vector by vector before the stores. Returns whether it applied the epilogue (not one with a
// col_bias, which the caller applies).
bool depthwise_3x3_avx512(const Window& g, const float* buf, int64_t cols, const float* wk,
                          float b, float* yc, const GemmEpilogue* epilogue, int64_t c);

}  // namespace pg::ops
