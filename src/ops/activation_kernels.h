// Pointwise activation kernels with a float32 fast path: the plain scalar functions (the
// reference for every float type) and array versions for float32 built on vec_math, which
// tests/unit/ops_vec_fastpath_test.cc diffs against the scalar ones. To add one: the scalar
// function here, the array version in activation_kernels.cc with the same operations except the
// vec_math call, a diff test with a stated tolerance, and the switch in activation.cc.
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>

namespace pg::ops {

// 1 / (1 + exp(-x)) for x >= 0, exp(x) / (1 + exp(x)) below (no overflow either way).
template <typename T>
T sigmoid(T x) {
    if (x >= 0) return T(1) / (T(1) + std::exp(-x));
    const T e = std::exp(x);
    return e / (T(1) + e);
}

// Gelu without approximation: 0.5 x (1 + erf(x / sqrt 2)) (for x << 0, 1 + erf cancels: the
// absolute error stays ~2^-24 |x|, the relative one grows, in float32 as in gelu_fast).
template <typename T>
T gelu_erf(T x) {
    return T(0.5) * x * (T(1) + std::erf(x / static_cast<T>(std::numbers::sqrt2)));
}

// Gelu with approximate = "tanh": 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
template <typename T>
T gelu_tanh(T x) {
    const T k = static_cast<T>(std::sqrt(2.0 / std::numbers::pi));
    return T(0.5) * x * (T(1) + std::tanh(k * (x + T(0.044715) * x * x * x)));
}

// y[i] = sigmoid(x[i]) with vec_exp for the exponential and the division in double: within 1.5
// ulp of the correctly rounded value (1.48 over all 2^32 inputs; sigmoid<float> itself reaches
// 2.33), so within 4 ulp of sigmoid.
void sigmoid_fast(const float* x, float* y, int64_t n);
// y[i] = gelu_erf(x[i]) with vec_erf for erf: within 2 ulp of gelu_erf plus 2^-22 |x[i]| (the two
// erfs differ by up to 3 ulp of erf, which 1 + erf keeps absolutely).
void gelu_fast(const float* x, float* y, int64_t n);
// y[i] = gelu_tanh(x[i]) with vec_tanh for tanh: the same bound as gelu_fast.
void gelu_tanh_fast(const float* x, float* y, int64_t n);

}  // namespace pg::ops
