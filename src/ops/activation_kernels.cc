// float32 array versions of the activation kernels (see activation_kernels.h): blocks of 256
// values through a stack buffer, the vec_math call in the middle, the rest the scalar kernels'
// operations in their order (plain loops, vectorized by the compiler at -O3).
#include "ops/activation_kernels.h"

#include <algorithm>

#include "ops/vec_math.h"

namespace pg::ops {

namespace {

constexpr int64_t kBlock = 256;

}  // namespace

void sigmoid_fast(const float* x, float* y, int64_t n) {
    float e[kBlock];
    for (int64_t b = 0; b < n; b += kBlock) {
        const int64_t m = std::min(kBlock, n - b);
        const float* xb = x + b;
        for (int64_t i = 0; i < m; ++i) e[i] = -std::fabs(xb[i]);  // -x for x >= 0, else x
        vec_exp(e, e, m);
        for (int64_t i = 0; i < m; ++i) {  // in double: only e's error remains, then 1 rounding
            const double ed = e[i];
            y[b + i] = static_cast<float>((xb[i] >= 0 ? 1.0 : ed) / (1.0 + ed));
        }
    }
}

void gelu_fast(const float* x, float* y, int64_t n) {
    const auto s = static_cast<float>(std::numbers::sqrt2);
    float t[kBlock];
    for (int64_t b = 0; b < n; b += kBlock) {
        const int64_t m = std::min(kBlock, n - b);
        const float* xb = x + b;
        for (int64_t i = 0; i < m; ++i) t[i] = xb[i] / s;
        vec_erf(t, t, m);
        for (int64_t i = 0; i < m; ++i) y[b + i] = 0.5f * xb[i] * (1.0f + t[i]);
    }
}

void gelu_tanh_fast(const float* x, float* y, int64_t n) {
    const auto k = static_cast<float>(std::sqrt(2.0 / std::numbers::pi));
    float t[kBlock];
    for (int64_t b = 0; b < n; b += kBlock) {
        const int64_t m = std::min(kBlock, n - b);
        const float* xb = x + b;
        for (int64_t i = 0; i < m; ++i) t[i] = k * (xb[i] + 0.044715f * xb[i] * xb[i] * xb[i]);
        vec_tanh(t, t, m);
        for (int64_t i = 0; i < m; ++i) y[b + i] = 0.5f * xb[i] * (1.0f + t[i]);
    }
}

}  // namespace pg::ops
