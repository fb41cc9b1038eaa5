// Convolution and pooling geometry plus the convolution kernels. Every window is handled as 3-D:
// 1-D and 2-D ops get leading spatial axes of size 1 (more than 3 spatial axes is kUnsupported).
// conv_reference / conv_transpose_reference are the plain oracles; conv_fast (float32: 3x3
// stride-1 layers on large maps through Winograd F(2x2, 3x3), conv_winograd.h; with AVX-512,
// conv_direct over stride-phase planes through gemm_direct / gemm_rowvec / gemm_dot; otherwise GEMM
// with the im2col panels packed straight from the image, or from a zero-padded copy for stride-1
// 2-D convolutions with few output channels; depthwise through conv_depthwise.cc) is diffed
// against conv_reference in tests/unit/ops_conv_test.cc, ops_conv_winograd_test.cc and
// ops_gemm_dot_test.cc (gemm_rowvec's Convs against an fma chain: ops_gemm_rowvec_test.cc).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ops/attrs.h"
#include "ops/gemm_kernels.h"
#include "tensor/tensor.h"

namespace pg {
class ThreadPool;
}

namespace pg::ops {

// A sliding window over up to 3 spatial axes (axis 0 = outermost, padded with size 1).
struct Window {
    int nd = 0;  // spatial rank of the op (1..3)
    int64_t in[3] = {1, 1, 1}, kernel[3] = {1, 1, 1}, out[3] = {1, 1, 1};
    int64_t stride[3] = {1, 1, 1}, dil[3] = {1, 1, 1}, pad_begin[3] = {}, pad_end[3] = {};
    int64_t in_size() const { return in[0] * in[1] * in[2]; }
    int64_t out_size() const { return out[0] * out[1] * out[2]; }
    int64_t kernel_size() const { return kernel[0] * kernel[1] * kernel[2]; }
};

// Window extents, strides and pads (each) beyond this are refused (kInvalidInput): sums of a few
// of them, as the kernels' index arithmetic takes, then stay inside int64.
constexpr int64_t kWindowBound = int64_t{1} << 60;
// a * b + c, refused (kInvalidInput naming `op`) where that overflows int64.
int64_t window_arith(int64_t a, int64_t b, int64_t c, const char* op);
// Refuses a window value beyond +-kWindowBound.
void check_window_bound(int64_t v, const char* op);

// The window attributes shared by Conv and the pooling ops, read with ONNX defaults.
struct WindowAttrs {
    std::string auto_pad = "NOTSET";
    std::vector<int64_t> kernel_shape, strides, dilations, pads;
    bool ceil_mode = false;
};
WindowAttrs read_window_attrs(const Attrs& a);

// The window for spatial input dims `in` and kernel dims `kernel` (from kernel_shape or the
// weights), output size by ONNX's rules (floor, or ceil_mode with the last window starting
// inside the input or its begin padding). `check_output`: fail when an output size is < 1
// (ConvTranspose passes false and computes its own output size).
Window make_window(const WindowAttrs& a, const std::vector<int64_t>& in,
                   const std::vector<int64_t>& kernel, const char* op, bool check_output = true);

// Conv / ConvTranspose shape: batch n, input channels c, output channels m, groups.
struct ConvShape {
    int64_t n = 1, c = 1, m = 1, group = 1;
    Window w;  // for ConvTranspose, w.in is the input (small) and w.out the output (large) size
};

// Conv's attributes, read with ONNX defaults (conv.cc).
struct ConvAttrs {
    WindowAttrs window;
    int64_t group = 1;
};
ConvAttrs read_conv_attrs(const Attrs& a);
// The shape of Conv(x, w, b) (b may be nullptr); kInvalidInput when channels, group, bias or
// window do not fit. x and w must have rank >= 3 and the same rank.
ConvShape conv_shape(const ConvAttrs& a, const Tensor& x, const Tensor& w, const Tensor* b);
// Conv's output dims for `s`: (n, m, spatial out...).
std::vector<int64_t> conv_output_dims(const ConvShape& s);
// One input and one output channel per group (conv_fast's depthwise kernel).
inline bool is_depthwise(const ConvShape& s) {
    return s.group > 1 && s.group == s.c && s.group == s.m;
}

// y[n, m, out] = bias[m] + sum over (c in group, kernel) of x * w. bias may be nullptr.
template <typename T>
void conv_reference(const ConvShape& s, const T* x, const T* w, const T* bias, T* y);
// float32 fast path over the pool: one GEMM per (image, group) (conv_direct, else
// gemm_fast_packed), depthwise directly; where nchwc_winograd_pays (3x3, stride 1, channels in
// blocks, maps of 13 x 13 and more) and no residual or shuffle is fused, x is reordered into
// blocks for conv_nchwc_winograd and y back. `epilogue` (rows = output channels) post-processes
// each output channel as it is finished (fused BatchNormalization, per-channel Mul / Add, residual,
// Relu / Clip); nullptr = none. `shuffle` > 1 writes the channels shuffled as ShuffleNet's
// Reshape (n, shuffle, m / shuffle, spatial) -> Transpose (0, 2, 1, ...) -> Reshape would leave
// them: channel o goes to (o % (m / shuffle)) * shuffle + o / (m / shuffle) (requires m %
// shuffle == 0, no residual in the epilogue and not depthwise; kInternal otherwise).
void conv_fast(const ConvShape& s, const float* x, const float* w, const float* bias, float* y,
               ThreadPool* pool, const GemmEpilogue* epilogue = nullptr, int64_t shuffle = 1);
// float32 depthwise Conv (group == c == m) over the pool (conv_depthwise.cc).
void depthwise_fast(const ConvShape& s, const float* x, const float* w, const float* bias, float* y,
                    ThreadPool* pool, const GemmEpilogue* epilogue = nullptr);
// Tests and benches: depthwise_fast's AVX-512 3x3 planes apply the fused epilogue to each vector
// before its store (on, the default) or leave it to a pass over the finished plane (off); the
// same values. Returns the previous setting.
bool set_depthwise_plane_epilogue(bool on);
// Tests and benches: conv_fast runs a depthwise Conv on a narrow map (16 output columns or
// fewer) through the blocked kernel with its input and output reordered (on, the default, with
// AVX-512), or depthwise_fast (off); the blocked kernel sums each output's taps in order, the
// plain one through a padded copy (values within float32 rounding). Returns the previous setting.
bool set_blocked_depthwise(bool on);
// One (image, group) of a 2-D float32 Conv as a GEMM over a padded, stride-phase-split copy of
// its input without im2col (conv_direct.cc; a.a: the group's weights, a.c: y_g, a.epilogue:
// the bias and anything fused). Returns false, doing nothing, when gemm_direct is unavailable or
// the geometry does not fit (3-D, negative pads, narrow rows).
bool conv_direct(const Window& g, const float* xg, int64_t cg, const GemmArgs<float>& a,
                 ThreadPool* pool);
// ConvTranspose: w is (c, m / group, kernel...); every input scatters into the output.
template <typename T>
void conv_transpose_reference(const ConvShape& s, const T* x, const T* w, const T* bias, T* y);

}  // namespace pg::ops
