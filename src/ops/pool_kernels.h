// Pooling kernels over (image, channel) planes with a Window (conv_kernels.h). Plain loops; the
// planes are split over the thread pool (nullptr = single-threaded).
#pragma once

#include <cstdint>
#include <vector>

#include "ops/conv_kernels.h"
#include "tensor/tensor.h"

namespace pg::ops {

// Max over the window taps inside the input; `indices` (may be nullptr) receives the flat index
// of the maximum in X (row-major, or column-major spatial axes when `col_major`).
template <typename T>
void max_pool(const Window& g, int64_t planes, const T* x, T* y, int64_t* indices, bool col_major,
              ThreadPool* pool);
// Average over the taps inside the input; with `include_pad` the divisor counts every tap inside
// the padded input (taps past the end padding in ceil mode are never counted).
template <typename T>
void avg_pool(const Window& g, int64_t planes, const T* x, T* y, bool include_pad,
              ThreadPool* pool);
// Fast paths with the same results as max_pool (without indices) and avg_pool: the taps inside
// the input are precomputed per output row and column instead of being searched per element.
// Diffed against them in tests/unit/ops_pool_test.cc.
// float32 2-D max pools with dilation 1 go through SeparableMax (pool_max_separable.h), planes
// holding a NaN through the exact loops; set_separable_max_pool (tests, benches) turns that off
// and returns the previous setting.
template <typename T>
void max_pool_fast(const Window& g, int64_t planes, const T* x, T* y, ThreadPool* pool);
bool set_separable_max_pool(bool on);
template <typename T>
void avg_pool_fast(const Window& g, int64_t planes, const T* x, T* y, bool include_pad,
                   ThreadPool* pool);
// (sum |x|^p)^(1/p) over the taps inside the input.
template <typename T>
void lp_pool(const Window& g, int64_t planes, const T* x, T* y, double p, ThreadPool* pool);
// Reduces whole planes: kind 0 = max, 1 = mean, 2 = Lp norm with `p`.
template <typename T>
void global_pool_planes(const T* x, T* y, int64_t planes, int64_t plane_size, int kind, double p);
// MaxUnpool's default output shape: (in - 1) * stride + kernel - pads per spatial axis.
std::vector<int64_t> unpooled_dims(const WindowAttrs& wa, const std::vector<int64_t>& x_dims);
// MaxRoiPool on X (N, C, H, W) with rois (R, 5) = (batch, x1, y1, x2, y2).
template <typename T>
void max_roi_pool(const Tensor& x, const T* rois, int64_t num_rois,
                  const std::vector<int64_t>& pooled, double scale, T* y);

}  // namespace pg::ops
