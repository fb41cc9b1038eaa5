// Normalization kernels (plain loops). Statistics accumulate in double (see normalization.cc).
#pragma once

#include <cstdint>
#include <vector>

#include "tensor/tensor.h"

namespace pg {
class ThreadPool;
}

namespace pg::ops {

// y = scale[c] * (x - mean[c]) / sqrt(var[c] + eps) + bias[c], channels on axis 1.
template <typename T>
void batch_norm(const Tensor& x, const T* scale, const T* bias, const T* mean, const T* var,
                double eps, T* y);
// Normalizes X (N, C, ...) over (C / groups channels x spatial) blocks, then applies scale and
// bias per channel (`per_channel`) or per group. InstanceNormalization = groups == C.
template <typename T>
void group_norm(const Tensor& x, int64_t groups, const T* scale, const T* bias, bool per_channel,
                double eps, T* y, ThreadPool* pool);
// Normalizes each of `rows` = numel / inner blocks of x; scale and bias are dense (inner) vectors.
template <typename T>
void layer_norm(const T* x, int64_t inner, const std::vector<double>& scale,
                const std::vector<double>& bias, double eps, T* y, T* mean, T* inv_std,
                int64_t rows);

// float32 fast path of layer_norm, diffed against it in tests/unit/ops_vec_fastpath_test.cc: the
// same double arithmetic per element (vec_math's moments with 16 interleaved partial sums, then
// ((x - mean) * inv) * scale + bias unfused), rows split over the pool; equal to layer_norm but
// for the summation order of the moments (differences of at most 1 float32 ulp).
void layer_norm_fast(const float* x, int64_t inner, const std::vector<double>& scale,
                     const std::vector<double>& bias, double eps, float* y, float* mean,
                     float* inv_std, int64_t rows, ThreadPool* pool);

struct LrnParams {
    double alpha, beta, bias;
    int64_t size;
};
// y = x / (bias + alpha / size * sum of squares over the channel window) ^ beta.
template <typename T>
void lrn(const Tensor& x, const LrnParams& p, T* y);
// float32 fast paths, diffed against batch_norm / lrn in tests/unit/ops_fastpath_test.cc:
// batch_norm_fast gives batch_norm's values (same arithmetic, planes split over the pool);
// lrn_fast sums the channel window in float32 over whole planes (beta = 0.75 through square
// roots), within a few float32 ulps of lrn.
// `post_mul` / `post_add` (one per channel): each value is then multiplied by / added to its
// channel's, and with `relu` goes through Relu's arithmetic (v < 0 ? 0 : v), as a
// BatchNormalization -> Mul -> Add -> Relu chain fused at plan time.
void batch_norm_fast(const Tensor& x, const float* scale, const float* bias, const float* mean,
                     const float* var, double eps, float* y, ThreadPool* pool, bool relu = false,
                     const float* post_mul = nullptr, const float* post_add = nullptr);
void lrn_fast(const Tensor& x, const LrnParams& p, float* y, ThreadPool* pool);
// y = x / ||x||_p along `axis` (p = 1 or 2; 0 where the norm is 0, as ONNX's tests expect).
template <typename T>
void lp_normalize(const Tensor& x, int64_t axis, int64_t p, T* y);
// y = (x - mean) / (std + 1e-9) over the axes flagged in `reduced` (ONNX's function body).
template <typename T>
void mean_variance_normalize(const Tensor& x, const std::vector<bool>& reduced, T* y);
// A tensor of ones (true for bool).
Tensor ones_like(DataType dtype, const std::vector<int64_t>& dims);

}  // namespace pg::ops
