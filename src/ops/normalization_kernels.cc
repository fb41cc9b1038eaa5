// Normalization kernels (see normalization_kernels.h).
#include "ops/normalization_kernels.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "base/float16.h"
#include "ops/dispatch.h"
#include "ops/gemm_kernels.h"
#include "ops/vec_math.h"

namespace pg::ops {

namespace {

// Mean and 1 / sqrt(variance + eps) of n values at stride 1 (two passes in double).
template <typename T>
std::pair<double, double> moments(const T* x, int64_t n, double eps) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(x[i]);
    const double mean = n > 0 ? sum / static_cast<double>(n) : 0.0;
    double sq = 0.0;
    for (int64_t i = 0; i < n; ++i)
        sq += (static_cast<double>(x[i]) - mean) * (static_cast<double>(x[i]) - mean);
    const double var = n > 0 ? sq / static_cast<double>(n) : 0.0;
    return {mean, 1.0 / std::sqrt(var + eps)};
}

int64_t spatial_size(const Tensor& x, int64_t from) {
    int64_t s = 1;
    for (int64_t i = from; i < x.rank(); ++i) s *= x.dims()[i];
    return s;
}

}  // namespace

template <typename T>
void batch_norm(const Tensor& x, const T* scale, const T* bias, const T* mean, const T* var,
                double eps, T* y) {
    const int64_t n = x.dims()[0], c = x.dims()[1], s = spatial_size(x, 2);
    const T* px = x.data<T>();
    for (int64_t b = 0; b < n; ++b)
        for (int64_t ch = 0; ch < c; ++ch) {
            const T k = static_cast<T>(scale[ch] / std::sqrt(static_cast<double>(var[ch]) + eps));
            const int64_t off = (b * c + ch) * s;
            for (int64_t i = 0; i < s; ++i)
                y[off + i] = static_cast<T>((px[off + i] - mean[ch]) * k + bias[ch]);
        }
}

void batch_norm_fast(const Tensor& x, const float* scale, const float* bias, const float* mean,
                     const float* var, double eps, float* y, ThreadPool* pool, bool relu,
                     const float* post_mul, const float* post_add) {
    const int64_t c = x.dims()[1], s = spatial_size(x, 2);
    const float* px = x.data<float>();
    const int64_t planes = x.dims()[0] * c;
    ThreadPool* team = planes > 1 && planes * s > (1 << 15) ? pool : nullptr;
    run_affine(team, planes, 1, [&](int64_t b, int64_t e) {
        for (int64_t p = b; p < e; ++p) {
            const int64_t ch = p % c;
            const auto k =
                static_cast<float>(scale[ch] / std::sqrt(static_cast<double>(var[ch]) + eps));
            const float m = mean[ch], bb = bias[ch];
            const float* xp = px + p * s;
            float* yp = y + p * s;
            if (post_mul || post_add) {
                const float pm = post_mul ? post_mul[ch] : 1.0f;
                const float pa = post_add ? post_add[ch] : 0.0f;
                for (int64_t i = 0; i < s; ++i) {
                    float v = (xp[i] - m) * k + bb;
                    if (post_mul) v = v * pm;
                    if (post_add) v = v + pa;
                    yp[i] = relu && v < 0.0f ? 0.0f : v;
                }
            } else if (relu)
                for (int64_t i = 0; i < s; ++i) {
                    const float v = (xp[i] - m) * k + bb;
                    yp[i] = v < 0.0f ? 0.0f : v;
                }
            else
                for (int64_t i = 0; i < s; ++i) yp[i] = (xp[i] - m) * k + bb;
        }
    });
}

void lrn_fast(const Tensor& x, const LrnParams& p, float* y, ThreadPool* pool) {
    const int64_t c = x.dims()[1], s = spatial_size(x, 2), planes = x.dims()[0] * c;
    const int64_t before = (p.size - 1) / 2, after = p.size - 1 - before;
    const float* px = x.data<float>();
    const auto bias = static_cast<float>(p.bias);
    const auto scale = static_cast<float>(p.alpha / static_cast<double>(p.size));
    const auto beta = static_cast<float>(p.beta);
    run_affine(planes > 1 && planes * s > (1 << 14) ? pool : nullptr, planes, 1,
                 [&](int64_t b, int64_t e) {
                     std::vector<float> sq(static_cast<size_t>(s));
                     for (int64_t pl = b; pl < e; ++pl) {
                         const int64_t n = pl / c, ch = pl % c;
                         std::fill(sq.begin(), sq.end(), 0.0f);
                         for (int64_t k = std::max<int64_t>(0, ch - before);
                              k <= std::min(c - 1, ch + after); ++k) {
                             const float* xk = px + (n * c + k) * s;
                             for (int64_t i = 0; i < s; ++i) sq[i] += xk[i] * xk[i];
                         }
                         const float* xp = px + pl * s;
                         float* yp = y + pl * s;
                         if (p.beta == 0.75) {
                             for (int64_t i = 0; i < s; ++i) {
                                 const float r = std::sqrt(bias + scale * sq[i]);
                                 yp[i] = xp[i] / (r * std::sqrt(r));
                             }
                         } else {
                             for (int64_t i = 0; i < s; ++i)
                                 yp[i] = xp[i] / std::pow(bias + scale * sq[i], beta);
                         }
                     }
                 });
}

template <typename T>
void group_norm(const Tensor& x, int64_t groups, const T* scale, const T* bias, bool per_channel,
                double eps, T* y, ThreadPool* pool) {
    const int64_t n = x.dims()[0], c = x.dims()[1], s = spatial_size(x, 2), cg = c / groups;
    const T* px = x.data<T>();
    run_affine(pool, n * groups, 1, [&](int64_t b, int64_t e) {
        for (int64_t blk = b; blk < e; ++blk) {
            const int64_t g = blk % groups, off = blk * cg * s;
            const auto [mean, inv] = moments(px + off, cg * s, eps);
            for (int64_t ch = 0; ch < cg; ++ch) {
                const int64_t pi = per_channel ? g * cg + ch : g;
                for (int64_t i = 0; i < s; ++i) {
                    const int64_t k = off + ch * s + i;
                    y[k] = static_cast<T>((static_cast<double>(px[k]) - mean) * inv * scale[pi] +
                                          bias[pi]);
                }
            }
        }
    });
}

template <typename T>
void layer_norm(const T* x, int64_t inner, const std::vector<double>& scale,
                const std::vector<double>& bias, double eps, T* y, T* mean, T* inv_std,
                int64_t rows) {
    for (int64_t r = 0; r < rows; ++r) {
        const auto [m, inv] = moments(x + r * inner, inner, eps);
        mean[r] = static_cast<T>(m), inv_std[r] = static_cast<T>(inv);
        for (int64_t i = 0; i < inner; ++i)
            y[r * inner + i] = static_cast<T>(
                (static_cast<double>(x[r * inner + i]) - m) * inv * scale[i] + bias[i]);
    }
}

void layer_norm_fast(const float* x, int64_t inner, const std::vector<double>& scale,
                     const std::vector<double>& bias, double eps, float* y, float* mean,
                     float* inv_std, int64_t rows, ThreadPool* pool) {
    const auto n = static_cast<double>(inner);
    auto body = [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
            const float* xr = x + r * inner;
            const double m = inner > 0 ? vec_sum_f64(xr, inner) / n : 0.0;
            const double var = inner > 0 ? vec_sum_sq_dev_f64(xr, m, inner) / n : 0.0;
            const double inv = 1.0 / std::sqrt(var + eps);
            mean[r] = static_cast<float>(m), inv_std[r] = static_cast<float>(inv);
            vec_norm_affine(xr, m, inv, scale.data(), bias.data(), y + r * inner, inner);
        }
    };
    run_affine(rows > 1 && rows * inner > (1 << 14) ? pool : nullptr, rows, 1, body);
}

template <typename T>
void lrn(const Tensor& x, const LrnParams& p, T* y) {
    const int64_t n = x.dims()[0], c = x.dims()[1], s = spatial_size(x, 2);
    const int64_t before = (p.size - 1) / 2, after = p.size - 1 - before;
    const T* px = x.data<T>();
    for (int64_t b = 0; b < n; ++b)
        for (int64_t ch = 0; ch < c; ++ch)
            for (int64_t i = 0; i < s; ++i) {
                double sq = 0.0;
                for (int64_t k = std::max<int64_t>(0, ch - before);
                     k <= std::min(c - 1, ch + after); ++k) {
                    const double v = px[(b * c + k) * s + i];
                    sq += v * v;
                }
                const int64_t o = (b * c + ch) * s + i;
                y[o] = static_cast<T>(
                    px[o] / std::pow(p.bias + p.alpha / static_cast<double>(p.size) * sq, p.beta));
            }
}

template <typename T>
void lp_normalize(const Tensor& x, int64_t axis, int64_t p, T* y) {
    const int64_t len = x.dims()[axis], inner = spatial_size(x, axis + 1);
    const int64_t outer = len * inner == 0 ? 0 : static_cast<int64_t>(x.numel()) / (len * inner);
    const T* px = x.data<T>();
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
            const int64_t base = o * len * inner + i;
            double norm = 0.0;
            for (int64_t k = 0; k < len; ++k) {
                const double v = px[base + k * inner];
                norm += p == 1 ? std::fabs(v) : v * v;
            }
            if (p == 2) norm = std::sqrt(norm);
            for (int64_t k = 0; k < len; ++k)
                y[base + k * inner] =
                    norm == 0.0 ? T(0) : static_cast<T>(px[base + k * inner] / norm);
        }
}

template <typename T>
void mean_variance_normalize(const Tensor& x, const std::vector<bool>& reduced, T* y) {
    // Group elements by their index on the kept axes; mean and E[x^2] per group.
    const auto& d = x.dims();
    std::vector<int64_t> key(x.numel());
    int64_t groups = 1;
    {
        std::vector<int64_t> kstride(d.size(), 0);
        for (size_t a = d.size(); a-- > 0;)
            if (!reduced[a]) kstride[a] = groups, groups *= d[a];
        for (uint64_t i = 0; i < x.numel(); ++i) {
            uint64_t rem = i;
            int64_t k = 0;
            for (size_t a = d.size(); a-- > 0;) {
                k += static_cast<int64_t>(rem % static_cast<uint64_t>(d[a])) * kstride[a];
                rem /= static_cast<uint64_t>(d[a]);
            }
            key[i] = k;
        }
    }
    std::vector<double> sum(groups, 0.0), sq(groups, 0.0), cnt(groups, 0.0);
    const T* px = x.data<T>();
    for (uint64_t i = 0; i < x.numel(); ++i)
        sum[key[i]] += px[i], sq[key[i]] += double(px[i]) * px[i], cnt[key[i]] += 1;
    for (uint64_t i = 0; i < x.numel(); ++i) {
        const double mean = sum[key[i]] / cnt[key[i]];
        const double var = std::max(0.0, sq[key[i]] / cnt[key[i]] - mean * mean);
        y[i] = static_cast<T>((px[i] - mean) / (std::sqrt(var) + 1e-9));
    }
}

Tensor ones_like(DataType dtype, const std::vector<int64_t>& dims) {
    Tensor t = Tensor::zeros(dtype, dims);
    uint8_t* p = t.mutable_bytes();
    if (dtype == DataType::kBool) {
        std::memset(p, 1, t.numel());
    } else if (dtype == DataType::kFloat16 || dtype == DataType::kBFloat16) {
        const uint16_t one = dtype == DataType::kFloat16 ? 0x3C00 : 0x3F80;
        for (uint64_t i = 0; i < t.numel(); ++i) std::memcpy(p + 2 * i, &one, 2);
    } else {
        dispatch_numeric(dtype, "Dropout", [&]<typename T>() {
            for (uint64_t i = 0; i < t.numel(); ++i) reinterpret_cast<T*>(p)[i] = T(1);
        });
    }
    return t;
}

#define PG_NORM(T)                                                                             \
    template void batch_norm<T>(const Tensor&, const T*, const T*, const T*, const T*, double, \
                                T*);                                                           \
    template void group_norm<T>(const Tensor&, int64_t, const T*, const T*, bool, double, T*,  \
                                ThreadPool*);                                                  \
    template void layer_norm<T>(const T*, int64_t, const std::vector<double>&,                 \
                                const std::vector<double>&, double, T*, T*, T*, int64_t);      \
    template void lrn<T>(const Tensor&, const LrnParams&, T*);                                 \
    template void lp_normalize<T>(const Tensor&, int64_t, int64_t, T*);                        \
    template void mean_variance_normalize<T>(const Tensor&, const std::vector<bool>&, T*);
PG_NORM(float)
PG_NORM(double)
#undef PG_NORM

}  // namespace pg::ops
