// Softmax-like row kernels (see softmax_kernels.h).
#include "ops/softmax_kernels.h"

#include <cmath>
#include <vector>

#include "ops/vec_math.h"

namespace pg::ops {

template <typename T>
void normalize(const T* src, T* dst, int64_t n, int64_t stride, Norm kind) {
    int64_t arg = 0;
    for (int64_t j = 1; j < n; ++j)
        if (src[j * stride] > src[arg * stride]) arg = j;
    if (kind == Norm::kHardmax) {
        for (int64_t j = 0; j < n; ++j) dst[j * stride] = j == arg ? T(1) : T(0);
        return;
    }
    const T m = n > 0 ? src[arg * stride] : T(0);
    double sum = 0;
    if (kind == Norm::kSoftmax) {  // each exp once, kept for the division (the same values)
        thread_local std::vector<double> e;
        e.resize(static_cast<size_t>(n));
        for (int64_t j = 0; j < n; ++j)
            sum += e[static_cast<size_t>(j)] = std::exp(static_cast<double>(src[j * stride] - m));
        for (int64_t j = 0; j < n; ++j)
            dst[j * stride] = static_cast<T>(e[static_cast<size_t>(j)] / sum);
        return;
    }
    for (int64_t j = 0; j < n; ++j) sum += std::exp(static_cast<double>(src[j * stride] - m));
    for (int64_t j = 0; j < n; ++j) {
        const T d = src[j * stride] - m;
        dst[j * stride] = static_cast<T>(d - static_cast<T>(std::log(sum)));
    }
}

template void normalize<float>(const float*, float*, int64_t, int64_t, Norm);
template void normalize<double>(const double*, double*, int64_t, int64_t, Norm);

void softmax_row_fast(const float* src, float* dst, int64_t n, bool log) {
    if (n <= 0) return;
    const float m = vec_max(src, n);
    const double sum = vec_exp_sub_sum(src, m, dst, n);
    if (log)
        vec_sub_sub(src, m, static_cast<float>(std::log(sum)), dst, n);
    else
        vec_scale(dst, static_cast<float>(1.0 / sum), n);
}

void softmax_row_scaled(const float* src, float s, bool divide, float* dst, int64_t n) {
    if (n <= 0) return;
    const float m = vec_max_scaled(src, s, divide, n);
    const double sum = vec_exp_scaled_sub_sum(src, s, divide, m, dst, n);
    vec_scale(dst, static_cast<float>(1.0 / sum), n);
}

}  // namespace pg::ops
