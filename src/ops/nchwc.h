// The blocked channel layout ("NCHWc16") and its float32 kernels. A blocked tensor holds an
// (N, C, spatial...) value whose C is a multiple of 16 as dims (N, C / 16, spatial..., 16): the
// 16 channels of one block at one pixel are adjacent, so a vector holds them and a Conv's
// weights for 16 output channels are one vector too. The runtime keeps chains of Convs, pools
// and Concats in this layout (runtime/fuse_nchwc.cc), converting only where a value enters or
// leaves the chain; nothing outside the runtime's fused steps ever sees a blocked tensor.
//
// Numeric contract: conv_nchwc sums each output over p = (input channel, kh, kw) in ONNX's
// weight order from zero with fused multiply-adds (as gemm_direct; the taps in the padding are
// skipped, which differs from adding zeros only in the sign of a zero sum and for infinite or
// NaN weights), then applies the epilogue with GemmEpilogue::apply's operations; the
// pools visit their taps in the plain kernels' order with their comparisons and divisions. So
// the values are conv_fast's (up to a zero's sign) wherever conv_fast takes gemm_direct, the pools'
// the plain ones'. Tests: tests/unit/ops_nchwc_test.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ops/conv_kernels.h"
#include "ops/gemm_kernels.h"

namespace pg {
class ThreadPool;
}

namespace pg::ops {

constexpr int64_t kNchwcBlock = 16;

// This build and CPU run the blocked kernels (AVX-512F; not turned off by gemm_force_isa).
bool nchwc_available();

// (N, C, spatial...) -> (N, C / 16, spatial..., 16); C must be a multiple of 16 (kInternal).
std::vector<int64_t> nchwc_dims(const std::vector<int64_t>& nchw);
// The inverse: (N, Cb, spatial..., 16) -> (N, Cb * 16, spatial...).
std::vector<int64_t> nchw_dims(const std::vector<int64_t>& blocked);

// Copies n images of c channels x `plane` pixels between the two layouts, elements of `elem`
// bytes (any type); to_nchwc's c must be a multiple of 16. from_nchwc takes any c > 0: x holds
// ceil(c / 16) blocks an image, and the last block's lanes from c on are not copied.
void to_nchwc(const void* x, int64_t n, int64_t c, int64_t plane, size_t elem, void* y,
              ThreadPool* pool);
void from_nchwc(const void* x, int64_t n, int64_t c, int64_t plane, size_t elem, void* y,
                ThreadPool* pool);

// A float32 Conv conv_nchwc runs: 1-D or 2-D, one group, m a multiple of 16, pads >= 0, and c a
// multiple of 16 unless the input is plain.
bool conv_nchwc_fits(const ConvShape& s, bool plain_input = false);
// y (blocked, (n, m / 16, out..., 16)) = Conv of x (blocked, or plain (n, c, in...) when
// `plain_input`: a region's first Conv, or a stem with 3 channels) by w (ONNX's (m, c,
// kernel...)) plus bias (may be nullptr), then `epilogue` (may be nullptr; per output channel as
// GemmEpilogue's rows; its residual blocked like y, res_origin = y). Each output is one chain
// of fused multiply-adds from zero over the taps inside the input: in (c / 16, kh, kw, c % 16)
// order for a blocked x, (c, kh, kw) for a plain one. Requires nchwc_available() and
// conv_nchwc_fits (kInternal otherwise).
void conv_nchwc(const ConvShape& s, const float* x, const float* w, const float* bias,
                const GemmEpilogue* epilogue, float* y, ThreadPool* pool, bool plain_input = false);

// A Conv conv_nchwc_plain_out runs: conv_nchwc_fits but for the output channels, any count m > 0.
bool conv_nchwc_plain_out_fits(const ConvShape& s, bool plain_input = false);
// conv_nchwc's sums and epilogue (no residual) into a plain y (n, m, out...), m any count (a
// classifier's 1000 channels, which the blocked layout cannot hold): the outputs go through a
// scratch of ceil(m / 16) blocks an image, the last block's channels past m computed from zero
// weights and dropped, then into y. Each of the m channels has conv_nchwc's value. Requires
// conv_nchwc_plain_out_fits and no residual (kInternal otherwise).
void conv_nchwc_plain_out(const ConvShape& s, const float* x, const float* w, const float* bias,
                          const GemmEpilogue* epilogue, float* y, ThreadPool* pool,
                          bool plain_input = false);

// conv_nchwc_plain_out's Conv (blocked x, no residual) followed by a GlobalAveragePool: each of
// the m channels' average over the output map into `averages` (n, m), the map itself kept only
// group by group in a blocked scratch (SqueezeNet's classifier). The values are
// global_pool_nchwc's (so global_pool_planes') on conv_nchwc_plain_out's outputs. Requires
// conv_nchwc_plain_out_fits(s) and no residual (kInternal otherwise).
void conv_nchwc_global_average(const ConvShape& s, const float* x, const float* w,
                               const float* bias, const GemmEpilogue* epilogue, float* averages,
                               ThreadPool* pool);

// Tests and benches: conv_nchwc packs weights into a buffer each thread keeps from call to call
// (on, the default) or into one allocated per call (off); the same values. Returns the previous
// setting.
bool set_nchwc_thread_pack_buffer(bool on);

// Tests and benches: conv_nchwc fetches the next tile's input lines (the last tile of a slice:
// the first tile's lines of the next slice; in a residual epilogue also the next tile's residual)
// into L1 while a tile of 1, 9 or 25 taps runs (on, the default), or leaves them to the hardware
// (off); the same values. Returns the previous setting.
bool set_nchwc_input_prefetch(bool on);
// Tests and benches: a tile of the first slice (which writes its output lines without reading
// them) first asks for the next tile's output lines for writing (PREFETCHW: on, the default),
// so that taking them from the other core's cache overlaps this tile's work; off: the stores
// take them. The same values. Returns the previous setting.
bool set_nchwc_output_prefetch(bool on);
// Tests and benches: on maps of at most 48 tiles a segment (about 14 x 14 and less), conv_nchwc
// packs all of a group's weights before its first slice where they take at most 256 KiB (on, the
// default), or each slice's before that slice (off); the same values. Returns the previous
// setting.
bool set_nchwc_group_pack(bool on);
// Tests and benches: the weight packs of conv_nchwc and gemm_rowvec and the blocked Winograd
// Conv's filter transform fetch each 16 x 16 block's rows four lines ahead of its transpose (on,
// the default), or leave it to the hardware (off); the same values. Returns the previous setting.
bool set_pack_prefetch_ahead(bool on);
// Tests and benches: conv_nchwc_plain_out copies each group of output channels into the plain y
// as soon as its thread has finished it, where threads run whole groups (on, the default), or
// all of them after the Conv (off); the same values. Returns the previous setting.
bool set_nchwc_unblock_groups(bool on);

// A depthwise float32 Conv depthwise_nchwc runs: 1-D or 2-D, group == c == m, c a multiple of
// 16, pads >= 0.
bool depthwise_nchwc_fits(const ConvShape& s);
// conv_nchwc's contract for a depthwise Conv (blocked x and y): each output a chain of fused
// multiply-adds over the window's taps inside the input, in order from zero.
void depthwise_nchwc(const ConvShape& s, const float* x, const float* w, const float* bias,
                     const GemmEpilogue* epilogue, float* y, ThreadPool* pool);
// Tests and benches: depthwise_nchwc's 3x3 windows ask for the next eight outputs' lines for
// writing (PREFETCHW: on, the default) or leave them to the stores (off); the same values.
// Returns the previous setting.
bool set_depthwise_nchwc_output_prefetch(bool on);
// Tests and benches: depthwise_nchwc writes its outputs around the caches (MOVNTPS: on, the
// default, when y is 64-byte aligned) or through them (off); the same values. Returns the previous
// setting.
bool set_depthwise_nchwc_stream_stores(bool on);
// Tests and benches: after a Conv that split its output by pixels (nchwc_conv_split), each of
// depthwise_nchwc's threads takes a band of output rows (on, the default) or a range of blocks
// (off); the same values. Returns the previous setting.
bool set_depthwise_nchwc_row_bands(bool on);
// Tests and benches: depthwise_nchwc computes whole rows of 3x3 windows at once, their first and
// last outputs with the taps inside (on, the default), or the outputs that lack a tap one at a
// time (off); the same values. Returns the previous setting.
bool set_depthwise_nchwc_edges(bool on);

// Pools on blocked float32 tensors of n images x cb channel blocks (Window: conv_kernels.h),
// with max_pool's / avg_pool's values (pool_kernels.h; max_pool without indices).
void max_pool_nchwc(const Window& g, int64_t n, int64_t cb, const float* x, float* y,
                    ThreadPool* pool);
void avg_pool_nchwc(const Window& g, int64_t n, int64_t cb, const float* x, float* y,
                    bool include_pad, ThreadPool* pool);
// Tests and benches: the pools split their work as the blocked Conv before them most likely
// split its output, one contiguous range per thread (on, the default), or in claimed chunks by
// block (off); returns the previous setting.
bool set_nchwc_pool_parts(bool on);
// Tests and benches: the blocked max / average pools stream their outputs around the caches
// (MOVNTPS: on, the default, when y is 64-byte aligned) or store them through them (off); the
// same values. Returns the previous setting.
bool set_nchwc_pool_stream_stores(bool on);
// Tests and benches: conv_nchwc split by groups into a multiple of the threads splits the blocks
// between the threads first, then each thread's into its groups (on, the default), or the
// blocks into the groups directly (off: ten blocks in four groups 3, 3 | 2, 2); returns the
// previous setting.
bool set_nchwc_balanced_groups(bool on);
// GlobalMaxPool (max) / GlobalAveragePool over `plane` pixels, as global_pool_planes; y is
// (n, cb, 1..., 16).
void global_pool_nchwc(int64_t n, int64_t cb, int64_t plane, const float* x, float* y, bool max,
                       ThreadPool* pool);

// BatchNormalization's inference factors (C values each; post_mul / post_add may be nullptr) and
// the ops fused after it (norm_fused.h).
struct BlockedNorm {
    const float *scale = nullptr, *bias = nullptr, *mean = nullptr, *var = nullptr;
    double epsilon = 1e-5;
    const float *post_mul = nullptr, *post_add = nullptr;
    bool relu = false;
};
// batch_norm_fast's values (normalization_kernels.h, the same operations in the same order) on
// a blocked float32 x of n images x cb channel blocks x `plane` pixels, into y (same layout).
void batch_norm_nchwc(const BlockedNorm& a, int64_t n, int64_t cb, int64_t plane, const float* x,
                      float* y, ThreadPool* pool);

}  // namespace pg::ops
