// Softmax, LogSoftmax and Hardmax row kernels. `normalize` is the plain reference (exp and sums
// in double, any stride); softmax_row_fast is the float32 fast path for contiguous rows
// (vectorized float32 exp from vec_math, sum in double), diffed against normalize in
// tests/unit/ops_vec_fastpath_test.cc. activation.cc picks between them.
#pragma once

#include <cstdint>

namespace pg::ops {

enum class Norm { kSoftmax, kLogSoftmax, kHardmax };

// Normalizes `n` elements spaced `stride` apart starting at src / dst (the plain kernel).
template <typename T>
void normalize(const T* src, T* dst, int64_t n, int64_t stride, Norm kind);

// Softmax (or LogSoftmax when `log`) of the n contiguous floats at src into dst: max, then
// e = exp(x - max) in float32 (at most 2 ulp) with the sum of the e accumulated in double, then
// e * float(1 / sum), or (x - max) - float(log(sum)). A row with a NaN, or with +inf, or of all
// -inf gives NaN everywhere, as normalize does. Within a few float32 ulps of normalize, and the
// same bits on every ISA (vec_exp_sub_sum's fixed lanes).
void softmax_row_fast(const float* src, float* dst, int64_t n, bool log);
// softmax_row_fast (Softmax) of the row src[i] * s, or src[i] / s when `divide`, each rounded to
// float: the same bits, without the scaled row being written anywhere (attention's scores times
// 1 / sqrt(d): a scaled copy read back at once stalled on its own stores, 3-4 times the max).
void softmax_row_scaled(const float* src, float s, bool divide, float* dst, int64_t n);

}  // namespace pg::ops
