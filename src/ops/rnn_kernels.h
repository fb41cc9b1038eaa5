// float32 building blocks of the recurrent ops' fast path (ops/rnn.cc): the per-step recurrent
// product (a row-major matrix times a vector, added into the gate sums) and the Sigmoid / Tanh
// gate activations over a vector, in place. Each has an AVX2+FMA version, chosen at run time when
// the CPU has it, and a portable one; the product also an AVX-512F one.
// tests/unit/ops_rnn_kernels_test.cc diffs each against the float64 definitions on random shapes
// and values; rnn_limit_isa lets it reach the lesser ones on any CPU. To add an activation, add a
// function here and diff it the same way.
#pragma once

#include <cstdint>

namespace pg::ops {

// out[r] += sum_k m[r * cols + k] * v[k] for r < rows, accumulated in float32. A row's value does
// not depend on `rows` or on where the row range starts, so splitting rows between threads gives
// the same results.
void matvec_add_f32(const float* m, const float* v, int64_t rows, int64_t cols, float* out);
// matvec_add_f32 for nv vectors at once: out[j * ldo + r] += sum_k m[r * cols + k] * vs[j * ldv
// + k], each value exactly as matvec_add_f32 gives it (the input products of every step from the
// same weight rows while they are in cache).
void matvecs_add_f32(const float* m, int64_t rows, int64_t cols, const float* vs, int64_t nv,
                     int64_t ldv, float* out, int64_t ldo);

// x[i] = 1 / (1 + exp(-x[i])), within a few float32 ulp (NaN stays NaN).
void sigmoid_f32(float* x, int64_t n);

// x[i] = tanh(x[i]), within a few float32 ulp (NaN stays NaN).
void tanh_f32(float* x, int64_t n);

// The instruction sets of the versions above, in order.
enum class RnnIsa { kPortable, kAvx2, kAvx512 };
// Tests: makes the functions above use the best version the CPU has up to `isa` (kAvx512: the
// best it has), process-wide; returns the previous limit.
RnnIsa rnn_limit_isa(RnnIsa isa);

}  // namespace pg::ops
