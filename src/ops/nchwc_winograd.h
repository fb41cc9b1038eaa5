// Winograd F(2x2, 3x3) on the blocked layout (nchwc.h): a 3x3, stride-1 Conv whose input and
// output are blocked. Each 4x4 input patch of a 2x2 output tile is transformed (B^T d B) with
// whole-vector adds over a block's 16 channels, the 16 transformed positions are 16 products
// over the input channels (as 1x1 Convs over the tiles), and each product's 4x4 result goes back
// to a 2x2 output block (A^T m A), where the epilogue runs. 16 multiplications per 4 outputs
// instead of 36. The transforms are conv_winograd's (conv_winograd_tx.h): factors 0, +-1 and 1/2
// in the same order, so the rounding is a few ulps of the direct sum's (numeric contract, not
// bit for bit: tests/unit/ops_nchwc_winograd_test.cc diffs it against conv_reference).
//
// The blocked regions run it (nchwc_kernels.h); conv_fast runs it on plain tensors too, with a
// reorder in and out (the per-node runs of a hook: layer-wise comparison, --emu).
//
// Work: units of (output group, band of tile rows), one contiguous range per thread, by group,
// so that a thread transforms a group's filters once (G g G^T, into its own scratch) and keeps
// them in L2 for every band; a band's input is transformed 64 channels at a time, and the
// products' sums wait in a band-sized scratch between those slices.
#pragma once

#include "ops/conv_kernels.h"
#include "ops/gemm_kernels.h"

namespace pg {
class ThreadPool;
}

namespace pg::ops {

// A Conv conv_nchwc_winograd runs: conv_nchwc_fits with a blocked input, 3x3 window, stride 1,
// dilation 1, pads of 0 to 2, an output at most 4096 wide (the scratch grows with the width).
bool nchwc_winograd_takes(const ConvShape& s);
// Whether the blocked path runs it through Winograd: nchwc_winograd_takes, the switch on, and a
// shape where it measured faster than conv_nchwc (see the rule in nchwc_winograd_avx512.cc).
bool nchwc_winograd_pays(const ConvShape& s);
// conv_nchwc's arguments and layouts, a blocked x; requires nchwc_winograd_takes (kInternal).
void conv_nchwc_winograd(const ConvShape& s, const float* x, const float* w, const float* bias,
                         const GemmEpilogue* epilogue, float* y, ThreadPool* pool);
// Tests and benches: turns the blocked Winograd off (process-wide), so that nchwc_winograd_pays
// is false; returns the previous setting.
bool set_nchwc_winograd(bool on);
// Tests and benches: the filter transform reads 16 input channels' taps through 16 x 16
// transposes (on, the default) or one gather per tap (off); the same values. Returns the
// previous setting.
bool set_nchwc_winograd_transposed_filters(bool on);
// Tests and benches: the input transform fetches the next input block's lines under each tile
// into L1 (on, the default; inputs of at most 2 MiB an image) or leaves them to the hardware
// (off); the same values. Returns the previous setting.
bool set_nchwc_winograd_input_prefetch(bool on);
// Tests and benches: the output transform asks for the output lines two tiles ahead for writing
// (PREFETCHW) and for their residual's lines (on, the default), or leaves them to the stores
// and loads (off); the same values. Returns the previous setting.
bool set_nchwc_winograd_output_prefetch(bool on);
// Tests and benches: the output transform streams its stores around the caches (MOVNTPS: on, the
// default, when y is 64-byte aligned; then without the output prefetch) or stores through them
// (off); the same values. Returns the previous setting.
bool set_nchwc_winograd_stream_stores(bool on);

}  // namespace pg::ops
