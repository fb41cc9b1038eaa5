// Pooling kernels (see pool_kernels.h).
#include "ops/pool_kernels.h"
#include "base/aligned.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "ops/gemm_kernels.h"
#include "ops/kernel.h"
#include "ops/pool_max_separable.h"
#include "ops/pool_window.h"
#include "ops/vec8.h"

namespace pg::ops {

namespace {

std::atomic<bool> g_separable_max{true};

// Calls f(spatial index) for each tap of output position o that lies inside the input and
// returns the number of taps inside the padded input.
template <typename F>
int64_t visit_window(const Window& g, int64_t o, F&& f) {
    const int64_t pos[3] = {o / (g.out[1] * g.out[2]), o / g.out[2] % g.out[1], o % g.out[2]};
    int64_t start[3], padded = 1;
    int64_t lo[3], hi[3];  // tap ranges inside the input
    for (int a = 0; a < 3; ++a) {
        start[a] = pos[a] * g.stride[a] - g.pad_begin[a];
        int64_t plo = 0, phi = 0;  // taps before the padded input's end
        taps_between(start[a], g.dil[a], g.kernel[a], start[a], g.in[a] + g.pad_end[a], &plo, &phi);
        padded *= phi;
        taps_between(start[a], g.dil[a], g.kernel[a], 0, g.in[a], &lo[a], &hi[a]);
    }
    for (int64_t kd = lo[0]; kd < hi[0]; ++kd) {
        const int64_t id = start[0] + kd * g.dil[0];
        for (int64_t kh = lo[1]; kh < hi[1]; ++kh) {
            const int64_t ih = start[1] + kh * g.dil[1];
            for (int64_t kw = lo[2]; kw < hi[2]; ++kw)
                f((id * g.in[1] + ih) * g.in[2] + start[2] + kw * g.dil[2]);
        }
    }
    return padded;
}

// Runs fn(plane) for each plane on the pool.
template <typename F>
void for_planes(int64_t planes, ThreadPool* pool, F&& fn) {
    run_affine(pool, planes, 1, [&](int64_t b, int64_t e) {
        for (int64_t p = b; p < e; ++p) fn(p);
    });
}

// A spatial row-major index as a column-major one (the spatial axes reversed).
int64_t to_col_major(const Window& g, int64_t i) {
    const int64_t d = i / (g.in[1] * g.in[2]), h = i / g.in[2] % g.in[1], w = i % g.in[2];
    if (g.nd == 1) return w;
    if (g.nd == 2) return h + w * g.in[1];
    return d + g.in[0] * (h + g.in[1] * w);
}

// Output columns [lo, hi) whose input column ow * stride + off lies inside the row.
void inside_columns(const Window& g, int64_t off, int64_t* lo, int64_t* hi) {
    const int64_t s = g.stride[2];
    *lo = std::min(g.out[2], off >= 0 ? 0 : (-off + s - 1) / s);
    *hi =
        std::max(*lo, std::min(g.out[2], g.in[2] - 1 - off < 0 ? 0 : (g.in[2] - 1 - off) / s + 1));
}

// One output row (od, oh) of a plane, a whole row at a time: init(ow, first tap or nullptr),
// then for every tap, run(lo, hi, row, off) visits the output columns [lo, hi) whose input
// row[ow * stride + off] is inside the input row, in visit_window's order per element.
template <typename T, typename Init, typename Run>
void pool_row(const Window& g, const AxisTaps t[3], const T* xp, int64_t od, int64_t oh,
              Init&& init, Run&& run) {
    const int64_t d0 = t[0].lo[od], d1 = t[0].hi[od], h0 = t[1].lo[oh], h1 = t[1].hi[oh];
    int64_t k0 = 0, k1 = 0;  // the taps kw that some output column sees inside the row
    taps_between(-g.pad_begin[2], g.dil[2], g.kernel[2], -(g.out[2] - 1) * g.stride[2], g.in[2],
                 &k0, &k1);
    for (int64_t ow = 0; ow < g.out[2]; ++ow) {
        const bool empty = d0 == d1 || h0 == h1 || t[2].lo[ow] == t[2].hi[ow];
        const int64_t id = t[0].start[od] + d0 * g.dil[0], ih = t[1].start[oh] + h0 * g.dil[1];
        init(ow,
             empty ? nullptr
                   : xp + (id * g.in[1] + ih) * g.in[2] + t[2].start[ow] + t[2].lo[ow] * g.dil[2]);
    }
    for (int64_t kd = d0; kd < d1; ++kd)
        for (int64_t kh = h0; kh < h1; ++kh) {
            const int64_t id = t[0].start[od] + kd * g.dil[0], ih = t[1].start[oh] + kh * g.dil[1];
            const T* row = xp + (id * g.in[1] + ih) * g.in[2];
            for (int64_t kw = k0; kw < k1; ++kw) {
                const int64_t off = kw * g.dil[2] - g.pad_begin[2];
                int64_t lo, hi;
                inside_columns(g, off, &lo, &hi);
                run(lo, hi, row, off);
            }
        }
}

// The element-wise step of a run over y[lo, hi) with inputs row[ow * s + off].
template <typename T, typename Step>
void scalar_run(T* y, int64_t lo, int64_t hi, const T* row, int64_t off, int64_t s, Step step) {
    if (s == 1)
        for (int64_t ow = lo; ow < hi; ++ow) y[ow] = step(y[ow], row[ow + off]);
    else
        for (int64_t ow = lo; ow < hi; ++ow) y[ow] = step(y[ow], row[ow * s + off]);
}

// float32 runs eight outputs at a time for strides 1 and 2 (the same element-wise operation, so
// the same values); kMax: y = x > y ? x : y, else y = y + x. Reads stay inside the row of
// `width` floats.
template <bool kMax>
inline __attribute__((always_inline)) void f32_run_body(float* y, int64_t lo, int64_t hi,
                                                        const float* row, int64_t off, int64_t s,
                                                        int64_t width) {
    int64_t ow = lo;
    if (s <= 2)
        for (; ow + 8 <= hi && (ow + 8) * s + off <= width; ow += 8) {
            V8 v, a, c;
            const float* p = row + ow * s + off;
            if (s == 1) {
                __builtin_memcpy(&v, p, sizeof v);
            } else {
                __builtin_memcpy(&a, p, sizeof a);
                __builtin_memcpy(&c, p + 8, sizeof c);
                v = PG_SHUFFLE8(a, c, 0, 2, 4, 6, 8, 10, 12, 14);
            }
            V8 cur;
            __builtin_memcpy(&cur, y + ow, sizeof cur);
            if constexpr (kMax)
                cur = v > cur ? v : cur;
            else
                cur = cur + v;
            __builtin_memcpy(y + ow, &cur, sizeof cur);
        }
    if constexpr (kMax)
        scalar_run(y, ow, hi, row, off, s, [](float c, float v) { return v > c ? v : c; });
    else
        scalar_run(y, ow, hi, row, off, s, [](float c, float v) { return c + v; });
}

using F32Run = void (*)(float*, int64_t, int64_t, const float*, int64_t, int64_t, int64_t);

template <bool kMax>
void f32_run_base(float* y, int64_t lo, int64_t hi, const float* row, int64_t off, int64_t s,
                  int64_t width) {
    f32_run_body<kMax>(y, lo, hi, row, off, s, width);
}

#if defined(__x86_64__) && defined(__GNUC__)
template <bool kMax>
__attribute__((target("avx2"))) void f32_run_avx2(float* y, int64_t lo, int64_t hi,
                                                  const float* row, int64_t off, int64_t s,
                                                  int64_t width) {
    f32_run_body<kMax>(y, lo, hi, row, off, s, width);
}
#endif

template <bool kMax>
F32Run f32_run() {
    static const F32Run fn = [] {
#if defined(__x86_64__) && defined(__GNUC__)
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx2")) return &f32_run_avx2<kMax>;
#endif
        return &f32_run_base<kMax>;
    }();
    return fn;
}

// A run of max (kMax) or sum steps for T: the vectorized float32 one, else scalar.
template <bool kMax, typename T>
void pool_run(const Window& g, T* y, int64_t lo, int64_t hi, const T* row, int64_t off) {
    const int64_t s = g.stride[2];
    if constexpr (std::is_same_v<T, float>) {
        f32_run<kMax>()(y, lo, hi, row, off, s, g.in[2]);
    } else if constexpr (kMax) {
        scalar_run(y, lo, hi, row, off, s, [](T c, T v) { return v > c ? v : c; });
    } else {
        scalar_run(y, lo, hi, row, off, s, [](T c, T v) { return static_cast<T>(c + v); });
    }
}

// Output (oh, ow) of a 2-D window (no depth axis) from the precomputed taps, in visit_window's
// order: the first tap inside the input, then every greater one (max_pool's rule), or the sum
// divided as avg_pool divides it.
float border_max(const Window& g, const AxisTaps t[3], const float* xp, int64_t oh, int64_t ow) {
    float best = -std::numeric_limits<float>::infinity();
    bool first = true;
    for (int64_t kh = t[1].lo[oh]; kh < t[1].hi[oh]; ++kh) {
        const float* row = xp + (t[1].start[oh] + kh * g.dil[1]) * g.in[2] + t[2].start[ow];
        for (int64_t kw = t[2].lo[ow]; kw < t[2].hi[ow]; ++kw) {
            const float v = row[kw * g.dil[2]];
            if (first || v > best) best = v;
            first = false;
        }
    }
    return best;
}

float border_avg(const Window& g, const AxisTaps t[3], const float* xp, int64_t oh, int64_t ow,
                 bool include_pad) {
    float sum = 0.0f;
    for (int64_t kh = t[1].lo[oh]; kh < t[1].hi[oh]; ++kh) {
        const float* row = xp + (t[1].start[oh] + kh * g.dil[1]) * g.in[2] + t[2].start[ow];
        for (int64_t kw = t[2].lo[ow]; kw < t[2].hi[ow]; ++kw) sum += row[kw * g.dil[2]];
    }
    const int64_t div = include_pad ? t[1].padded[oh] * t[2].padded[ow]
                                    : (t[1].hi[oh] - t[1].lo[oh]) * (t[2].hi[ow] - t[2].lo[ow]);
    return div > 0 ? sum / static_cast<float>(div) : std::numeric_limits<float>::quiet_NaN();
}

// float32 2-D max pools with 3x3 windows, dilation 1, column stride 1 or 2: the output rows
// whose three input rows are inside the input take all nine taps at once, eight outputs at a time
// (tap (0, 0) first, then v > cur ? v : cur in visit_window's order: the same values, NaN first
// taps included); the other columns of those rows go through visit_window.
bool is_max3x3(const Window& g) {
    return g.in[0] == 1 && g.kernel[0] == 1 && g.out[0] == 1 && g.kernel[1] == 3 &&
           g.kernel[2] == 3 && g.dil[1] == 1 && g.dil[2] == 1 && g.stride[2] <= 2;
}

// Output columns [lo, hi) of row r0 (the window's top input row; rows r0 + width, r0 + 2 width
// below it), whose nine taps read inside the rows: eight at a time while the vector loads stay
// inside the row, then one at a time. Returns hi.
// Eight floats from p, S apart.
template <int S>
inline __attribute__((always_inline)) void load_strided(V8& v, const float* p) {
    if constexpr (S == 1) {
        __builtin_memcpy(&v, p, sizeof v);
    } else {
        V8 a, c;  // p[0, 8) and p[7, 15): nothing past p[14] is read
        __builtin_memcpy(&a, p, sizeof a);
        __builtin_memcpy(&c, p + 7, sizeof c);
        v = PG_SHUFFLE8(a, c, 0, 2, 4, 6, 9, 11, 13, 15);
    }
}

template <int S>
inline __attribute__((always_inline)) int64_t max3x3_block(const float* r0, int64_t width,
                                                           int64_t off, int64_t lo, int64_t hi,
                                                           float* yr) {
    int64_t ow = lo;
    for (; ow + 8 <= hi && (ow + 8) * S + off + 2 <= width; ow += 8) {
        const float* p = r0 + ow * S + off;
        V8 cur, v;
        load_strided<S>(cur, p);
        for (int k = 1; k < 9; ++k) {
            load_strided<S>(v, p + (k / 3) * width + k % 3);
            cur = v > cur ? v : cur;
        }
        __builtin_memcpy(yr + ow, &cur, sizeof cur);
    }
    for (; ow < hi; ++ow) {  // the rest of the interior, one at a time
        const float* p = r0 + ow * S + off;
        float cur = p[0];
        for (int k = 1; k < 9; ++k) {
            const float v = p[(k / 3) * width + k % 3];
            cur = v > cur ? v : cur;
        }
        yr[ow] = cur;
    }
    return ow;
}

using Max3Fn = int64_t (*)(const float*, int64_t, int64_t, int64_t, int64_t, float*);

template <int S>
int64_t max3x3_base(const float* r0, int64_t width, int64_t off, int64_t lo, int64_t hi,
                    float* yr) {
    return max3x3_block<S>(r0, width, off, lo, hi, yr);
}

#if defined(__x86_64__) && defined(__GNUC__)
template <int S>
__attribute__((target("avx2"))) int64_t max3x3_avx2(const float* r0, int64_t width, int64_t off,
                                                    int64_t lo, int64_t hi, float* yr) {
    return max3x3_block<S>(r0, width, off, lo, hi, yr);
}
#endif

Max3Fn max3x3_fn(int64_t stride) {
    static const std::array<Max3Fn, 2> fns = [] {
#if defined(__x86_64__) && defined(__GNUC__)
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx2"))
            return std::array<Max3Fn, 2>{&max3x3_avx2<1>, &max3x3_avx2<2>};
#endif
        return std::array<Max3Fn, 2>{&max3x3_base<1>, &max3x3_base<2>};
    }();
    return fns[stride - 1];
}

// One output row oh of a plane whose window rows are all inside the input (see is_max3x3).
void max3x3_row(const Window& g, const AxisTaps t[3], const float* xp, int64_t oh, Max3Fn fn,
                float* yr) {
    const int64_t off = -g.pad_begin[2], ih = oh * g.stride[1] - g.pad_begin[1];
    int64_t lo, hi, lo2, hi2;
    inside_columns(g, off, &lo, &hi);
    inside_columns(g, off + 2, &lo2, &hi2);
    lo = std::max(lo, lo2), hi = std::max(lo, std::min(hi, hi2));
    const int64_t done = fn(xp + ih * g.in[2], g.in[2], off, lo, hi, yr);
    for (int64_t ow = 0; ow < g.out[2]; ++ow) {
        if (ow == lo) ow = std::max(ow, done);
        if (ow >= g.out[2]) break;
        yr[ow] = border_max(g, t, xp, oh, ow);
    }
}

// float32 average pools without a depth axis: in each output row with a window row inside the
// input, the columns whose taps all lie inside the row take every tap at once, summed in
// visit_window's order (0, then the taps row by row: the same sums as avg_pool) and divided as
// avg_pool divides them (the taps inside, or with count_include_pad the rows inside the padded
// input times the kernel width), eight outputs at a time for column strides 1 and 2 (S = 0: any
// stride, one at a time); the other columns through border_avg.
bool is_avg2d(const Window& g) {
    return g.in[0] == 1 && g.kernel[0] == 1 && g.out[0] == 1;
}

// The rows taken by one output row: `rows` input rows from r0 (dil[1] apart) and the divisor of
// its interior columns.
struct Avg2dRows {
    const float* r0;
    int64_t rows;
    float div;
};

// The sums of the taps of eight outputs from p (S = 1 or 2), in avg_pool's order.
template <int S>
inline __attribute__((always_inline)) void avg2d_sum8(const Window& g, const float* p, int64_t rows,
                                                      V8& cur) {
    const int64_t rstep = g.dil[1] * g.in[2], kw = g.kernel[2], dw = g.dil[2];
    V8 v;
    cur = V8{};
    for (int64_t a = 0; a < rows; ++a)
        for (int64_t b = 0; b < kw; ++b) {
            load_strided<S>(v, p + a * rstep + b * dw);
            cur = cur + v;
        }
}

// Interior columns [lo, hi) of one output row; returns the first column not written.
template <int S>
inline __attribute__((always_inline)) int64_t avg2d_block(const Window& g, const Avg2dRows& r,
                                                          int64_t off, int64_t lo, int64_t hi,
                                                          float* yr) {
    const int64_t width = g.in[2], kw = g.kernel[2], dw = g.dil[2];
    const int64_t rstep = g.dil[1] * width, s = S == 0 ? g.stride[2] : S;
    int64_t ow = lo;
    if constexpr (S != 0) {
        const V8 vdiv = V8{} + r.div;
        // Blocks of eight while the last tap read, p[7 * S + (kw - 1) * dw], is inside the row;
        // the last block is moved back to end at hi (its outputs written twice, the same values).
        // Two blocks at a time when there are two (independent sums in flight).
        auto fits = [&](int64_t o) {
            return o >= lo && o * S + 7 * S + off + (kw - 1) * dw < width;
        };
        while (ow < hi) {
            const int64_t o = std::min(ow, hi - 8), o2 = std::min(o + 8, hi - 8);
            if (!fits(o)) break;
            if (o2 > o && fits(o2)) {
                const float *p = r.r0 + o * S + off, *p2 = r.r0 + o2 * S + off;
                V8 c = {}, c2 = {}, v, v2;
                for (int64_t a = 0; a < r.rows; ++a)
                    for (int64_t b = 0; b < kw; ++b) {
                        load_strided<S>(v, p + a * rstep + b * dw);
                        load_strided<S>(v2, p2 + a * rstep + b * dw);
                        c = c + v, c2 = c2 + v2;
                    }
                c = c / vdiv, c2 = c2 / vdiv;
                __builtin_memcpy(yr + o, &c, sizeof c);
                __builtin_memcpy(yr + o2, &c2, sizeof c2);
                ow = o2 + 8;
            } else {
                V8 c;
                avg2d_sum8<S>(g, r.r0 + o * S + off, r.rows, c);
                c = c / vdiv;
                __builtin_memcpy(yr + o, &c, sizeof c);
                ow = o + 8;
            }
        }
    }
    for (; ow < hi; ++ow) {
        const float* p = r.r0 + ow * s + off;
        float cur = 0.0f;
        for (int64_t a = 0; a < r.rows; ++a)
            for (int64_t b = 0; b < kw; ++b) cur += p[a * rstep + b * dw];
        yr[ow] = cur / r.div;
    }
    return ow;
}

using Avg2dFn = int64_t (*)(const Window&, const Avg2dRows&, int64_t, int64_t, int64_t, float*);

template <int S>
int64_t avg2d_base(const Window& g, const Avg2dRows& r, int64_t off, int64_t lo, int64_t hi,
                   float* yr) {
    return avg2d_block<S>(g, r, off, lo, hi, yr);
}

#if defined(__x86_64__) && defined(__GNUC__)
template <int S>
__attribute__((target("avx2"))) int64_t avg2d_avx2(const Window& g, const Avg2dRows& r, int64_t off,
                                                   int64_t lo, int64_t hi, float* yr) {
    return avg2d_block<S>(g, r, off, lo, hi, yr);
}
#endif

Avg2dFn avg2d_fn(int64_t stride) {
    static const std::array<Avg2dFn, 3> fns = [] {
#if defined(__x86_64__) && defined(__GNUC__)
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx2"))
            return std::array<Avg2dFn, 3>{&avg2d_base<0>, &avg2d_avx2<1>, &avg2d_avx2<2>};
#endif
        return std::array<Avg2dFn, 3>{&avg2d_base<0>, &avg2d_base<1>, &avg2d_base<2>};
    }();
    return fns[stride <= 2 ? stride : 0];
}

// The output columns [lo, hi) whose taps all lie inside the input row.
void avg2d_columns(const Window& g, int64_t* lo, int64_t* hi) {
    const int64_t off = -g.pad_begin[2], last = off + (g.kernel[2] - 1) * g.dil[2];
    int64_t lo2, hi2;
    inside_columns(g, off, lo, hi);
    inside_columns(g, last, &lo2, &hi2);
    *lo = std::max(*lo, lo2), *hi = std::max(*lo, std::min(*hi, hi2));
}

// One output row oh of a plane with at least one window row inside the input (see is_avg2d):
// the interior columns [lo, hi) through fn, the others through border_avg.
void avg2d_row(const Window& g, const AxisTaps t[3], const float* xp, int64_t oh, int64_t lo,
               int64_t hi, bool include_pad, Avg2dFn fn, float* yr) {
    const int64_t rows = t[1].hi[oh] - t[1].lo[oh];
    const Avg2dRows r{xp + (t[1].start[oh] + t[1].lo[oh] * g.dil[1]) * g.in[2], rows,
                      static_cast<float>((include_pad ? t[1].padded[oh] : rows) * g.kernel[2])};
    const int64_t done = fn(g, r, -g.pad_begin[2], lo, hi, yr);
    for (int64_t ow = 0; ow < lo; ++ow) yr[ow] = border_avg(g, t, xp, oh, ow, include_pad);
    for (int64_t ow = done; ow < g.out[2]; ++ow) yr[ow] = border_avg(g, t, xp, oh, ow, include_pad);
}

// float32 average pools without a depth axis, column stride 1 or 2, through a zero-padded copy
// of each plane: every output sums its whole window in avg_pool's order with the padding's taps
// adding +0 (a sum that starts at +0 is never -0, and s + 0 == s otherwise, so the sums are
// avg_pool's), eight outputs at a time, then is divided by its own divisor from a map shared by
// all planes (windows with no tap inside get avg_pool's NaN).
struct AvgPadded {
    int64_t rows = 0, cols = 0, ow8 = 0;
    std::vector<float> div;      // [out rows][ow8], 1 past the last column
    std::vector<int64_t> empty;  // outputs whose divisor is 0
};

bool avg_padded_plan(const Window& g, const AxisTaps t[3], bool include_pad, AvgPadded* a) {
    if (!is_avg2d(g) || g.stride[2] > 2 || g.pad_begin[1] < 0 || g.pad_begin[2] < 0) return false;
    a->ow8 = (g.out[2] + 7) / 8 * 8;
    a->rows = (g.out[1] - 1) * g.stride[1] + (g.kernel[1] - 1) * g.dil[1] + 1;
    a->cols = (a->ow8 - 1) * g.stride[2] + (g.kernel[2] - 1) * g.dil[2] + 1;
    constexpr int64_t kMax = int64_t{1} << 20;
    if (a->rows > kMax || a->cols > kMax || a->rows * a->cols > kMax) return false;
    a->div.assign(static_cast<size_t>(g.out[1] * a->ow8), 1.0f);
    for (int64_t oh = 0; oh < g.out[1]; ++oh)
        for (int64_t ow = 0; ow < g.out[2]; ++ow) {
            const int64_t div = include_pad
                                    ? t[1].padded[oh] * t[2].padded[ow]
                                    : (t[1].hi[oh] - t[1].lo[oh]) * (t[2].hi[ow] - t[2].lo[ow]);
            a->div[static_cast<size_t>(oh * a->ow8 + ow)] = static_cast<float>(div);
            if (div <= 0) a->empty.push_back(oh * g.out[2] + ow);
        }
    return true;
}

// Copies plane xp into buf (zeros around it, the input at the pads' offset).
void fill_padded(const Window& g, const AvgPadded& a, const float* xp, float* buf) {
    std::fill_n(buf, a.rows * a.cols, 0.0f);
    const int64_t n = std::min(g.in[2], a.cols - g.pad_begin[2]);
    for (int64_t r = 0; r < g.in[1] && r + g.pad_begin[1] < a.rows; ++r)
        if (n > 0)
            std::copy_n(xp + r * g.in[2], n, buf + (r + g.pad_begin[1]) * a.cols + g.pad_begin[2]);
}

// Output row blocks [j, j + 8 * kBlocks) of one row: kBlocks independent sums in flight.
template <int S, int kBlocks>
inline __attribute__((always_inline)) void avg_padded_blocks(const Window& g, const AvgPadded& a,
                                                             const float* r0, const float* dv,
                                                             int64_t j, float* yr) {
    const int64_t kh = g.kernel[1], kw = g.kernel[2], rstep = g.dil[1] * a.cols, dw = g.dil[2];
    V8 cur[kBlocks] = {}, v, d;
    for (int64_t r = 0; r < kh; ++r)
        for (int64_t c = 0; c < kw; ++c)
            for (int k = 0; k < kBlocks; ++k) {
                load_strided<S>(v, r0 + (j + 8 * k) * S + r * rstep + c * dw);
                cur[k] = cur[k] + v;
            }
    for (int k = 0; k < kBlocks; ++k) {
        const int64_t jk = j + 8 * k;
        __builtin_memcpy(&d, dv + jk, sizeof d);
        cur[k] = cur[k] / d;
        __builtin_memcpy(yr + jk, &cur[k],
                         static_cast<size_t>(std::min<int64_t>(8, g.out[2] - jk)) * sizeof(float));
    }
}

template <int S>
inline __attribute__((always_inline)) void avg_padded_body(const Window& g, const AvgPadded& a,
                                                           const float* buf, float* yc) {
    for (int64_t oh = 0; oh < g.out[1]; ++oh) {
        const float* r0 = buf + oh * g.stride[1] * a.cols;
        const float* dv = a.div.data() + oh * a.ow8;
        float* yr = yc + oh * g.out[2];
        int64_t j = 0;
        for (; j + 16 <= a.ow8; j += 16) avg_padded_blocks<S, 2>(g, a, r0, dv, j, yr);
        if (j < a.ow8) avg_padded_blocks<S, 1>(g, a, r0, dv, j, yr);
    }
}

using AvgPaddedFn = void (*)(const Window&, const AvgPadded&, const float*, float*);

template <int S>
void avg_padded_base(const Window& g, const AvgPadded& a, const float* buf, float* yc) {
    avg_padded_body<S>(g, a, buf, yc);
}

#if defined(__x86_64__) && defined(__GNUC__)
template <int S>
__attribute__((target("avx2"))) void avg_padded_avx2(const Window& g, const AvgPadded& a,
                                                     const float* buf, float* yc) {
    avg_padded_body<S>(g, a, buf, yc);
}
#endif

AvgPaddedFn avg_padded_fn(int64_t stride) {
    static const std::array<AvgPaddedFn, 2> fns = [] {
#if defined(__x86_64__) && defined(__GNUC__)
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx2"))
            return std::array<AvgPaddedFn, 2>{&avg_padded_avx2<1>, &avg_padded_avx2<2>};
#endif
        return std::array<AvgPaddedFn, 2>{&avg_padded_base<1>, &avg_padded_base<2>};
    }();
    return fns[stride - 1];
}

void avg_pool_padded(const Window& g, const AvgPadded& a, int64_t planes, const float* x, float* y,
                     ThreadPool* pool) {
    const AvgPaddedFn fn = avg_padded_fn(g.stride[2]);
    run_affine(pool, planes, 1, [&](int64_t b, int64_t e) {
        const AlignedArray<float> buf = aligned_zeros<float>(static_cast<size_t>(a.rows * a.cols));
        for (int64_t p = b; p < e; ++p) {
            fill_padded(g, a, x + p * g.in_size(), buf.get());
            float* yc = y + p * g.out_size();
            fn(g, a, buf.get(), yc);
            for (int64_t o : a.empty) yc[o] = std::numeric_limits<float>::quiet_NaN();
        }
    });
}

}  // namespace

template <typename T>
void max_pool_fast(const Window& g, int64_t planes, const T* x, T* y, ThreadPool* pool) {
    const AxisTaps t[3] = {axis_taps(g, 0), axis_taps(g, 1), axis_taps(g, 2)};
    bool fast3 = false;
    if constexpr (std::is_same_v<T, float>) fast3 = is_max3x3(g);
    const Max3Fn fn3 = fast3 ? max3x3_fn(g.stride[2]) : nullptr;
    auto exact = [&](int64_t p) {
        const T* xp = x + p * g.in_size();
        for (int64_t od = 0; od < g.out[0]; ++od)
            for (int64_t oh = 0; oh < g.out[1]; ++oh) {
                T* yr = y + p * g.out_size() + (od * g.out[1] + oh) * g.out[2];
                if constexpr (std::is_same_v<T, float>)
                    if (fast3 && t[1].lo[oh] == 0 && t[1].hi[oh] == 3) {
                        max3x3_row(g, t, xp, oh, fn3, yr);
                        continue;
                    }
                // The first tap, then every greater one (a NaN first tap stays, as in max_pool).
                pool_row<T>(
                    g, t, xp, od, oh,
                    [&](int64_t ow, const T* first) {
                        yr[ow] = first ? *first : -std::numeric_limits<T>::infinity();
                    },
                    [&](int64_t lo, int64_t hi, const T* row, int64_t off) {
                        pool_run<true>(g, yr, lo, hi, row, off);
                    });
            }
    };
    if constexpr (std::is_same_v<T, float>)
        if (g_separable_max.load(std::memory_order_relaxed) && SeparableMax::fits(g)) {
            run_affine(pool, planes, 1, [&](int64_t b, int64_t e) {
                SeparableMax sep(g);
                for (int64_t p = b; p < e; ++p)
                    if (!sep.plane(x + p * g.in_size(), y + p * g.out_size())) exact(p);
            });
            return;
        }
    for_planes(planes, pool, exact);
}

bool set_separable_max_pool(bool on) {
    return g_separable_max.exchange(on);
}

template <typename T>
void avg_pool_fast(const Window& g, int64_t planes, const T* x, T* y, bool include_pad,
                   ThreadPool* pool) {
    const AxisTaps t[3] = {axis_taps(g, 0), axis_taps(g, 1), axis_taps(g, 2)};
    bool fast2d = false;
    if constexpr (std::is_same_v<T, float>) {
        AvgPadded a;
        if (avg_padded_plan(g, t, include_pad, &a))
            return avg_pool_padded(g, a, planes, x, y, pool);
        fast2d = is_avg2d(g);
    }
    const Avg2dFn fn2d = fast2d ? avg2d_fn(g.stride[2]) : nullptr;
    int64_t lo2d = 0, hi2d = 0;
    if (fast2d) avg2d_columns(g, &lo2d, &hi2d);
    for_planes(planes, pool, [&](int64_t p) {
        const T* xp = x + p * g.in_size();
        for (int64_t od = 0; od < g.out[0]; ++od)
            for (int64_t oh = 0; oh < g.out[1]; ++oh) {
                T* yr = y + p * g.out_size() + (od * g.out[1] + oh) * g.out[2];
                if constexpr (std::is_same_v<T, float>)
                    if (fast2d && t[1].lo[oh] < t[1].hi[oh]) {
                        avg2d_row(g, t, xp, oh, lo2d, hi2d, include_pad, fn2d, yr);
                        continue;
                    }
                pool_row<T>(
                    g, t, xp, od, oh, [&](int64_t ow, const T*) { yr[ow] = T(0); },
                    [&](int64_t lo, int64_t hi, const T* row, int64_t off) {
                        pool_run<false>(g, yr, lo, hi, row, off);
                    });
                const int64_t inner = (t[0].hi[od] - t[0].lo[od]) * (t[1].hi[oh] - t[1].lo[oh]);
                for (int64_t ow = 0; ow < g.out[2]; ++ow) {
                    const int64_t div = include_pad
                                            ? t[0].padded[od] * t[1].padded[oh] * t[2].padded[ow]
                                            : inner * (t[2].hi[ow] - t[2].lo[ow]);
                    yr[ow] = div > 0 ? yr[ow] / static_cast<T>(div)
                                     : std::numeric_limits<T>::quiet_NaN();
                }
            }
    });
}

template <typename T>
void max_pool(const Window& g, int64_t planes, const T* x, T* y, int64_t* indices, bool col_major,
              ThreadPool* pool) {
    for_planes(planes, pool, [&](int64_t p) {
        const T* xp = x + p * g.in_size();
        for (int64_t o = 0; o < g.out_size(); ++o) {
            T best = std::numeric_limits<T>::lowest();
            if constexpr (std::numeric_limits<T>::has_infinity)
                best = -std::numeric_limits<T>::infinity();
            int64_t arg = -1;
            visit_window(g, o, [&](int64_t i) {
                if (arg < 0 || xp[i] > best) best = xp[i], arg = i;
            });
            y[p * g.out_size() + o] = best;
            if (indices)
                indices[p * g.out_size() + o] =
                    p * g.in_size() + (col_major ? to_col_major(g, arg) : arg);
        }
    });
}

template <typename T>
void avg_pool(const Window& g, int64_t planes, const T* x, T* y, bool include_pad,
              ThreadPool* pool) {
    for_planes(planes, pool, [&](int64_t p) {
        const T* xp = x + p * g.in_size();
        for (int64_t o = 0; o < g.out_size(); ++o) {
            T sum = T(0);
            int64_t count = 0;
            const int64_t padded = visit_window(g, o, [&](int64_t i) { sum += xp[i], ++count; });
            const int64_t div = include_pad ? padded : count;
            y[p * g.out_size() + o] =
                div > 0 ? sum / static_cast<T>(div) : std::numeric_limits<T>::quiet_NaN();
        }
    });
}

template <typename T>
void lp_pool(const Window& g, int64_t planes, const T* x, T* y, double pw, ThreadPool* pool) {
    for_planes(planes, pool, [&](int64_t p) {
        const T* xp = x + p * g.in_size();
        for (int64_t o = 0; o < g.out_size(); ++o) {
            T sum = T(0);
            visit_window(g, o,
                         [&](int64_t i) { sum += static_cast<T>(std::pow(std::fabs(xp[i]), pw)); });
            y[p * g.out_size() + o] = static_cast<T>(std::pow(sum, 1.0 / pw));
        }
    });
}

template <typename T>
void global_pool_planes(const T* x, T* y, int64_t planes, int64_t n, int kind, double pw) {
    int64_t p = 0;
    // Max and average: eight planes at a time, each still one chain in order (eight independent
    // chains fill the adder's pipeline; one chain waits out each add's latency).
    constexpr int kWays = 8;
    for (; kind != 2 && p + kWays <= planes; p += kWays) {
        T acc[kWays];
        for (int k = 0; k < kWays; ++k)
            acc[k] = kind == 0 ? -std::numeric_limits<T>::infinity() : T(0);
        const T* xp = x + p * n;
        for (int64_t i = 0; i < n; ++i)
            for (int k = 0; k < kWays; ++k)
                acc[k] = kind == 0 ? std::max(acc[k], xp[k * n + i]) : acc[k] + xp[k * n + i];
        for (int k = 0; k < kWays; ++k) y[p + k] = kind == 0 ? acc[k] : acc[k] / static_cast<T>(n);
    }
    for (; p < planes; ++p) {
        const T* xp = x + p * n;
        T acc = kind == 0 ? -std::numeric_limits<T>::infinity() : T(0);
        for (int64_t i = 0; i < n; ++i) {
            if (kind == 0)
                acc = std::max(acc, xp[i]);
            else if (kind == 1)
                acc += xp[i];
            else
                acc += static_cast<T>(std::pow(std::fabs(xp[i]), pw));
        }
        y[p] = kind == 0   ? acc
               : kind == 1 ? acc / static_cast<T>(n)
                           : static_cast<T>(std::pow(acc, 1.0 / pw));
    }
}

std::vector<int64_t> unpooled_dims(const WindowAttrs& wa, const std::vector<int64_t>& x_dims) {
    const size_t nd = x_dims.size() - 2;
    if (wa.kernel_shape.size() != nd)
        fail("MaxUnpool: kernel_shape is required, one per spatial axis");
    if ((!wa.strides.empty() && wa.strides.size() != nd) ||
        (!wa.pads.empty() && wa.pads.size() != 2 * nd))
        fail("MaxUnpool: strides need one value per spatial axis and pads two");
    std::vector<int64_t> out(x_dims.begin(), x_dims.begin() + 2);
    for (size_t i = 0; i < nd; ++i) {
        const int64_t s = wa.strides.empty() ? 1 : wa.strides[i];
        if (s < 1) fail("MaxUnpool: strides must be positive");
        const int64_t pb = wa.pads.empty() ? 0 : wa.pads[i],
                      pe = wa.pads.empty() ? 0 : wa.pads[i + nd];
        int64_t d = 0;
        if (__builtin_mul_overflow(x_dims[i + 2] - 1, s, &d) ||
            __builtin_add_overflow(d, wa.kernel_shape[i], &d) ||
            __builtin_sub_overflow(d, pb, &d) || __builtin_sub_overflow(d, pe, &d))
            fail("MaxUnpool: the output size overflows int64");
        out.push_back(d);
    }
    return out;
}

template <typename T>
void max_roi_pool(const Tensor& x, const T* rois, int64_t num_rois,
                  const std::vector<int64_t>& pooled, double scale, T* y) {
    const int64_t n = x.dims()[0], c = x.dims()[1], h = x.dims()[2], w = x.dims()[3];
    const T* px = x.data<T>();
    for (int64_t r = 0; r < num_rois; ++r) {
        const T* roi = rois + r * 5;
        for (int k = 0; k < 5; ++k)  // past 2^52 (or NaN) the int64 casts below overflow
            if (!(std::fabs(static_cast<double>(roi[k]) * (k ? scale : 1.0)) < 4503599627370496.0))
                fail("MaxRoiPool: roi " + std::to_string(r) + " holds a non-finite or huge value");
        const auto b = static_cast<int64_t>(roi[0]);
        if (b < 0 || b >= n) fail("MaxRoiPool: roi batch index out of range");
        const auto x1 = static_cast<int64_t>(std::round(roi[1] * scale)),
                   y1 = static_cast<int64_t>(std::round(roi[2] * scale));
        const auto x2 = static_cast<int64_t>(std::round(roi[3] * scale)),
                   y2 = static_cast<int64_t>(std::round(roi[4] * scale));
        const double bin_h =
            static_cast<double>(std::max<int64_t>(y2 - y1 + 1, 1)) / static_cast<double>(pooled[0]);
        const double bin_w =
            static_cast<double>(std::max<int64_t>(x2 - x1 + 1, 1)) / static_cast<double>(pooled[1]);
        for (int64_t ch = 0; ch < c; ++ch) {
            const T* plane = px + (b * c + ch) * h * w;
            for (int64_t ph = 0; ph < pooled[0]; ++ph)
                for (int64_t pw = 0; pw < pooled[1]; ++pw) {
                    const int64_t hs = std::clamp<int64_t>(
                        static_cast<int64_t>(std::floor(ph * bin_h)) + y1, 0, h);
                    const int64_t he = std::clamp<int64_t>(
                        static_cast<int64_t>(std::ceil((ph + 1) * bin_h)) + y1, 0, h);
                    const int64_t ws = std::clamp<int64_t>(
                        static_cast<int64_t>(std::floor(pw * bin_w)) + x1, 0, w);
                    const int64_t we = std::clamp<int64_t>(
                        static_cast<int64_t>(std::ceil((pw + 1) * bin_w)) + x1, 0, w);
                    T best = he <= hs || we <= ws ? T(0) : -std::numeric_limits<T>::infinity();
                    for (int64_t i = hs; i < he; ++i)
                        for (int64_t j = ws; j < we; ++j) best = std::max(best, plane[i * w + j]);
                    y[((r * c + ch) * pooled[0] + ph) * pooled[1] + pw] = best;
                }
        }
    }
}

#define PG_POOL_FLOAT(T)                                                                         \
    template void avg_pool<T>(const Window&, int64_t, const T*, T*, bool, ThreadPool*);          \
    template void lp_pool<T>(const Window&, int64_t, const T*, T*, double, ThreadPool*);         \
    template void global_pool_planes<T>(const T*, T*, int64_t, int64_t, int, double);            \
    template void max_roi_pool<T>(const Tensor&, const T*, int64_t, const std::vector<int64_t>&, \
                                  double, T*);
PG_POOL_FLOAT(float)
template void max_pool_fast<float>(const Window&, int64_t, const float*, float*, ThreadPool*);
template void avg_pool_fast<float>(const Window&, int64_t, const float*, float*, bool, ThreadPool*);
PG_POOL_FLOAT(double)
#undef PG_POOL_FLOAT
#define PG_MAX_POOL(T) \
    template void max_pool<T>(const Window&, int64_t, const T*, T*, int64_t*, bool, ThreadPool*);
PG_MAX_POOL(float)
PG_MAX_POOL(double)
PG_MAX_POOL(int8_t)
PG_MAX_POOL(int16_t)
PG_MAX_POOL(int32_t)
PG_MAX_POOL(int64_t)
PG_MAX_POOL(uint8_t)
PG_MAX_POOL(uint16_t)
PG_MAX_POOL(uint32_t)
PG_MAX_POOL(uint64_t)
#undef PG_MAX_POOL

}  // namespace pg::ops
