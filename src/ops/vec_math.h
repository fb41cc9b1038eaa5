// Float32 array math for the fast paths of the elementwise, softmax and normalization kernels:
// exp, erf and tanh over arrays (below 1 ulp from the correctly rounded result over the whole
// float range: 0.94 ulp for exp, 0.69 for erf, 0.96 for tanh, measured on all 2^32 inputs
// against double precision;
// overflow to inf, underflow through the subnormals to 0, NaN propagated, -0 kept;
// tests/unit/ops_vec_math_test.cc asserts 1 ulp on every 97th bit pattern), the softmax row
// pieces and LayerNormalization's double-accumulated moments.
// exp, erf and tanh have three implementations chosen at run time from what the CPU has: AVX-512F,
// AVX2+FMA and a portable scalar one; all three do the same IEEE operations in the same order,
// so their results are bit-identical (a test checks that too). The moment and affine helpers
// are plain loops compiled for each ISA (target_clones) with a fixed summation order.
// To add a function: write the per-vector core once per ISA next to exp / erf in vec_math.cc,
// a scalar twin with the same operations, and extend the bit-identity and ulp tests.
#pragma once

#include <cstdint>

namespace pg::ops {

enum class VecIsa { kScalar, kAvx2, kAvx512 };
// Whether this CPU can run the `isa` implementation.
bool vec_isa_available(VecIsa isa);
// Tests: makes every thread use `isa` (the scalar one when unavailable) until vec_reset_isa;
// returns the ISA in use before.
VecIsa vec_force_isa(VecIsa isa);
// Goes back to the best ISA the CPU has.
void vec_reset_isa();
// The ISA in use now.
VecIsa vec_current_isa();

// y[i] = exp(x[i]); x and y may be the same array.
void vec_exp(const float* x, float* y, int64_t n);
// y[i] = erf(x[i]); x and y may be the same array.
void vec_erf(const float* x, float* y, int64_t n);
// y[i] = tanh(x[i]); x and y may be the same array.
void vec_tanh(const float* x, float* y, int64_t n);
// The largest of x[0..n) (n >= 1); with a NaN in x the result is unspecified (NaN or not).
float vec_max(const float* x, int64_t n);
// y[i] = exp(x[i] - shift) (the difference rounded to float first) and returns the sum of the
// y[i] accumulated in double: 16 lanes (element i in lane i % 16) combined in a fixed order, the
// same on every ISA.
double vec_exp_sub_sum(const float* x, float shift, float* y, int64_t n);
// vec_max and vec_exp_sub_sum of the values x[i] * s (x[i] / s when `divide`), each rounded to
// float, without writing them out (attention's scaled scores): the same results, bit for bit, as
// the two functions on an array holding those values.
float vec_max_scaled(const float* x, float s, bool divide, int64_t n);
double vec_exp_scaled_sub_sum(const float* x, float s, bool divide, float shift, float* y,
                              int64_t n);
// y[i] *= s.
void vec_scale(float* y, float s, int64_t n);
// y[i] = (x[i] - shift) - sub, both subtractions in float (LogSoftmax's last step).
void vec_sub_sub(const float* x, float shift, float sub, float* y, int64_t n);

// The sum of x[0..n) in double (16 interleaved partial sums, a fixed order for every ISA).
double vec_sum_f64(const float* x, int64_t n);
// The sum of (x[i] - mean)^2 in double (same order as vec_sum_f64).
double vec_sum_sq_dev_f64(const float* x, double mean, int64_t n);
// y[i] = float(((double(x[i]) - mean) * inv) * scale[i] + bias[i]) with every double operation
// rounded separately (no fused multiply-add): layer_norm's per-element arithmetic.
void vec_norm_affine(const float* x, double mean, double inv, const double* scale,
                     const double* bias, float* y, int64_t n);

}  // namespace pg::ops
