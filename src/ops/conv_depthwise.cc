// The float32 depthwise convolution fast path (one input channel per group). 2-D planes with
// column stride 1 or 2 are copied into a zero-padded buffer and computed eight outputs at a time
// without bounds checks (3x3 kernels with dilation 1 through a loop with the taps fixed at
// compile time). Otherwise, for each output
// row, the columns whose every kernel tap reads inside the input are computed eight at a time
// in registers (bias, then the taps in the reference's order, one store per output); border
// columns take a scalar loop with bounds checks. Stride 1 loads contiguous input, stride 2
// loads sixteen floats and keeps the even ones, other strides stay scalar. Compiled for the
// x86-64 baseline and for AVX2+FMA, chosen at run time; 3x3 planes take AVX-512 kernels where
// the CPU has it (conv_depthwise_avx512.cc). Diffed against conv_reference in
// tests/unit/ops_conv_test.cc.
#include <algorithm>
#include <vector>

#include "base/aligned.h"
#include "ops/conv_depthwise.h"
#include "ops/conv_kernels.h"
#include "ops/gemm_kernels.h"
#include "ops/vec8.h"

namespace pg::ops {

namespace {

// The kernel rows of one output row that read inside the input (kd, kh not in the padding).
struct RowTaps {
    std::vector<const float*> src;  // input row per kernel row
    std::vector<const float*> w;    // the kernel row's kw_n weights
};

// Column offsets of each kernel column (kw * dil - pad) and the output columns [lo, hi) where
// every kernel column reads inside the input row.
struct ColumnPlan {
    std::vector<int64_t> off;
    int64_t lo = 0, hi = 0;
};

ColumnPlan column_plan(const Window& g) {
    ColumnPlan p;
    const int64_t s = g.stride[2];
    p.lo = 0, p.hi = g.out[2];
    for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
        const int64_t o = kw * g.dil[2] - g.pad_begin[2];
        p.off.push_back(o);
        const int64_t first = o >= 0 ? 0 : (-o + s - 1) / s;
        const int64_t end = g.in[2] - 1 - o < 0 ? 0 : (g.in[2] - 1 - o) / s + 1;
        p.lo = std::max(p.lo, first), p.hi = std::min(p.hi, end);
    }
    p.lo = std::min(p.lo, g.out[2]);
    p.hi = std::clamp(p.hi, p.lo, g.out[2]);
    return p;
}

// One output column j with bounds checks on the input column.
inline float column_checked(const Window& g, const RowTaps& t, const ColumnPlan& cp, float b,
                            int64_t j) {
    float acc = b;
    const int64_t s = g.stride[2], kw_n = g.kernel[2];
    for (size_t r = 0; r < t.src.size(); ++r)
        for (int64_t kw = 0; kw < kw_n; ++kw) {
            const int64_t iw = j * s + cp.off[static_cast<size_t>(kw)];
            if (iw >= 0 && iw < g.in[2]) acc += t.src[r][iw] * t.w[r][kw];
        }
    return acc;
}

// acc += w * eight input columns starting at p, `s` apart (s is 1 or 2).
inline __attribute__((always_inline)) void add8(V8& acc, const float* p, int64_t s, float w) {
    V8 v;
    if (s == 1) {
        __builtin_memcpy(&v, p, sizeof v);
    } else {
        V8 a, b;
        __builtin_memcpy(&a, p, sizeof a);
        __builtin_memcpy(&b, p + 8, sizeof b);
        v = PG_SHUFFLE8(a, b, 0, 2, 4, 6, 8, 10, 12, 14);
    }
    acc += v * w;
}

inline __attribute__((always_inline)) void row_body(const Window& g, const RowTaps& t,
                                                    const ColumnPlan& cp, float b, float* yr) {
    const int64_t s = g.stride[2], kw_n = g.kernel[2], ow = g.out[2];
    int64_t j = 0;
    for (; j < cp.lo; ++j) yr[j] = column_checked(g, t, cp, b, j);
    // Vector blocks: the last float a block reads, (j + 7) * s + off + (s - 1), must lie in the
    // row.
    const int64_t last_off = cp.off.empty() ? 0 : cp.off.back();
    if (s <= 2)
        for (; j + 8 <= cp.hi && (j + 7) * s + last_off + (s - 1) < g.in[2]; j += 8) {
            V8 acc = V8{} + b;
            for (size_t r = 0; r < t.src.size(); ++r) {
                const float* src = t.src[r] + j * s;
                const float* w = t.w[r];
                for (int64_t kw = 0; kw < kw_n; ++kw)
                    add8(acc, src + cp.off[static_cast<size_t>(kw)], s, w[kw]);
            }
            __builtin_memcpy(yr + j, &acc, sizeof acc);
        }
    for (; j < cp.hi; ++j) {  // interior, unchecked
        float acc = b;
        for (size_t r = 0; r < t.src.size(); ++r)
            for (int64_t kw = 0; kw < kw_n; ++kw)
                acc += t.src[r][j * s + cp.off[static_cast<size_t>(kw)]] * t.w[r][kw];
        yr[j] = acc;
    }
    for (; j < ow; ++j) yr[j] = column_checked(g, t, cp, b, j);
}

using RowFn = void (*)(const Window&, const RowTaps&, const ColumnPlan&, float, float*);

void row_base(const Window& g, const RowTaps& t, const ColumnPlan& cp, float b, float* yr) {
    row_body(g, t, cp, b, yr);
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2,fma"))) void row_avx2(const Window& g, const RowTaps& t,
                                                  const ColumnPlan& cp, float b, float* yr) {
    row_body(g, t, cp, b, yr);
}
#endif

RowFn row_fn() {
    static const RowFn fn = [] {
#if defined(__x86_64__) && defined(__GNUC__)
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return row_avx2;
#endif
        return row_base;
    }();
    return fn;
}

// The zero-padded copy of a 2-D plane the padded path reads: every tap of every vector block
// (output columns rounded up to 8) lands inside it.
struct PaddedPlane {
    int64_t rows = 0, cols = 0;
};

PaddedPlane padded_plane(const Window& g) {
    const int64_t ow8 = (g.out[2] + 7) / 8 * 8;
    return {(g.out[1] - 1) * g.stride[1] + (g.kernel[1] - 1) * g.dil[1] + 1,
            (ow8 - 1) * g.stride[2] + (g.kernel[2] - 1) * g.dil[2] + g.stride[2] + 1};
}

// 3x3 kernels, dilation 1, column stride 1 or 2: the common depthwise shape, with the taps
// known at compile time (the weights stay in registers).
inline bool is_3x3(const Window& g) {
    return g.kernel[1] == 3 && g.kernel[2] == 3 && g.dil[1] == 1 && g.dil[2] == 1 &&
           g.stride[2] <= 2;
}

// The padded plane `buf` (`cols` wide) of a 3x3 window with column stride S: the same sums, in
// the same order, as plane_padded_body's generic loop.
template <int S>
inline __attribute__((always_inline)) void rows_3x3(const Window& g, const float* buf, int64_t cols,
                                                    const float* wk, float b, float* yc) {
    float w[9];
    for (int i = 0; i < 9; ++i) w[i] = wk[i];
    for (int64_t oh = 0; oh < g.out[1]; ++oh) {
        const float* r0 = buf + oh * g.stride[1] * cols;
        const float* r1 = r0 + cols;
        const float* r2 = r1 + cols;
        float* yr = yc + oh * g.out[2];
        for (int64_t j = 0; j < g.out[2]; j += 8) {
            V8 acc = V8{} + b;
            const int64_t o = j * S;
            add8(acc, r0 + o, S, w[0]), add8(acc, r0 + o + 1, S, w[1]);
            add8(acc, r0 + o + 2, S, w[2]), add8(acc, r1 + o, S, w[3]);
            add8(acc, r1 + o + 1, S, w[4]), add8(acc, r1 + o + 2, S, w[5]);
            add8(acc, r2 + o, S, w[6]), add8(acc, r2 + o + 1, S, w[7]);
            add8(acc, r2 + o + 2, S, w[8]);
            __builtin_memcpy(
                yr + j, &acc,
                static_cast<size_t>(std::min<int64_t>(8, g.out[2] - j)) * sizeof(float));
        }
    }
}

// The zero-padded copy of plane xc (padded_plane's size) in buf, which starts zeroed: only the
// cells under the input are written, the same ones for every plane of a window, so the padding
// stays zero from one plane to the next without being cleared.
void fill_padded(const Window& g, const float* xc, float* buf) {
    const PaddedPlane pp = padded_plane(g);
    for (int64_t r = 0; r < g.in[1]; ++r) {
        const int64_t pr = r + g.pad_begin[1];
        if (pr < 0 || pr >= pp.rows) continue;
        const int64_t n = std::min(g.in[2], pp.cols - g.pad_begin[2]);
        std::copy_n(xc + r * g.in[2], std::max<int64_t>(n, 0), buf + pr * pp.cols + g.pad_begin[2]);
    }
}

// A 2-D plane through its padded copy `buf`: no bounds checks, eight outputs at a time (a row's
// last block is stored in part). Padding taps add w * 0, so the sums are the reference's up to
// the sign of a zero (and NaN where a weight is infinite).
inline __attribute__((always_inline)) void plane_padded_body(const Window& g, const float* xc,
                                                             const float* wk, float b, float* yc,
                                                             float* buf) {
    const PaddedPlane pp = padded_plane(g);
    fill_padded(g, xc, buf);
    const int64_t s = g.stride[2], kh_n = g.kernel[1], kw_n = g.kernel[2];
    if (is_3x3(g)) {
        if (s == 1) return rows_3x3<1>(g, buf, pp.cols, wk, b, yc);
        return rows_3x3<2>(g, buf, pp.cols, wk, b, yc);
    }
    for (int64_t oh = 0; oh < g.out[1]; ++oh) {
        float* yr = yc + oh * g.out[2];
        for (int64_t j = 0; j < g.out[2]; j += 8) {
            V8 acc = V8{} + b;
            for (int64_t kh = 0; kh < kh_n; ++kh) {
                const float* src = buf + (oh * g.stride[1] + kh * g.dil[1]) * pp.cols + j * s;
                for (int64_t kw = 0; kw < kw_n; ++kw)
                    add8(acc, src + kw * g.dil[2], s, wk[kh * kw_n + kw]);
            }
            __builtin_memcpy(
                yr + j, &acc,
                static_cast<size_t>(std::min<int64_t>(8, g.out[2] - j)) * sizeof(float));
        }
    }
}

// One plane through its padded copy; returns whether it applied `ep` (channel c's epilogue, may
// be nullptr), which is otherwise left to the caller.
using PlaneFn = bool (*)(const Window&, const float*, const float*, float, float*, float*,
                         const GemmEpilogue* ep, int64_t c);

bool plane_padded_base(const Window& g, const float* xc, const float* wk, float b, float* yc,
                       float* buf, const GemmEpilogue*, int64_t) {
    plane_padded_body(g, xc, wk, b, yc, buf);
    return false;
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2,fma"))) bool plane_padded_avx2(const Window& g, const float* xc,
                                                           const float* wk, float b, float* yc,
                                                           float* buf, const GemmEpilogue*,
                                                           int64_t) {
    plane_padded_body(g, xc, wk, b, yc, buf);
    return false;
}
#endif

#if defined(__x86_64__) && defined(__GNUC__)
// 3x3 planes take the AVX-512 kernels (the epilogue applied before each store), the others the
// AVX2 path.
bool plane_padded_avx512(const Window& g, const float* xc, const float* wk, float b, float* yc,
                         float* buf, const GemmEpilogue* ep, int64_t c) {
    if (!is_3x3(g)) return plane_padded_avx2(g, xc, wk, b, yc, buf, ep, c);
    fill_padded(g, xc, buf);
    return depthwise_3x3_avx512(g, buf, padded_plane(g).cols, wk, b, yc, ep, c);
}
#endif

PlaneFn plane_padded_fn() {
    static const PlaneFn fn = [] {
#if defined(__x86_64__) && defined(__GNUC__)
        __builtin_cpu_init();
        if (depthwise_avx512_available() && __builtin_cpu_supports("avx2") &&
            __builtin_cpu_supports("fma"))
            return plane_padded_avx512;
        if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
            return plane_padded_avx2;
#endif
        return plane_padded_base;
    }();
    return fn;
}

// The padded path covers 2-D windows with column stride 1 or 2 whose padded copy stays small.
bool use_padded(const Window& g) {
    const PaddedPlane pp = padded_plane(g);
    return g.in[0] == 1 && g.kernel[0] == 1 && g.out[0] == 1 && g.stride[2] <= 2 &&
           g.pad_begin[1] >= 0 && g.pad_begin[2] >= 0 && pp.rows * pp.cols <= (int64_t{1} << 20);
}

// One plane: channel c's input xc, weights wk (kernel_size floats), bias b, output yc.
void depthwise_plane(const Window& g, const ColumnPlan& cp, RowFn row, const float* xc,
                     const float* wk, float b, float* yc) {
    RowTaps t;
    for (int64_t od = 0; od < g.out[0]; ++od)
        for (int64_t oh = 0; oh < g.out[1]; ++oh) {
            t.src.clear(), t.w.clear();
            for (int64_t kd = 0; kd < g.kernel[0]; ++kd)
                for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
                    const int64_t id = od * g.stride[0] - g.pad_begin[0] + kd * g.dil[0];
                    const int64_t ih = oh * g.stride[1] - g.pad_begin[1] + kh * g.dil[1];
                    if (id < 0 || id >= g.in[0] || ih < 0 || ih >= g.in[1]) continue;
                    t.src.push_back(xc + (id * g.in[1] + ih) * g.in[2]);
                    t.w.push_back(wk + (kd * g.kernel[1] + kh) * g.kernel[2]);
                }
            row(g, t, cp, b, yc + (od * g.out[1] + oh) * g.out[2]);
        }
}

}  // namespace

void depthwise_fast(const ConvShape& s, const float* x, const float* w, const float* bias, float* y,
                    ThreadPool* pool, const GemmEpilogue* epilogue) {
    const int64_t ks = s.w.kernel_size(), in = s.w.in_size(), os = s.w.out_size();
    const ColumnPlan cp = column_plan(s.w);
    const RowFn row = row_fn();
    const bool split = s.n * s.c > 1 && s.n * s.c * os * ks > (1 << 14);
    const bool padded = use_padded(s.w);
    const PaddedPlane pp = padded_plane(s.w);
    const PlaneFn plane = plane_padded_fn();
    run_affine(split ? pool : nullptr, s.n * s.c, 1, [&](int64_t b, int64_t e) {
        // Zeroed here once: fill_padded writes only the cells under the input.
        const AlignedArray<float> buf = aligned_zeros<float>(
            padded ? static_cast<size_t>(pp.rows * pp.cols + kDepthwiseSlack) : 0);
        for (int64_t p = b; p < e; ++p) {
            const int64_t c = p % s.c;
            bool applied = false;
            if (padded)
                applied = plane(s.w, x + p * in, w + c * ks, bias ? bias[c] : 0.0f, y + p * os,
                                buf.get(), epilogue, c);
            else
                depthwise_plane(s.w, cp, row, x + p * in, w + c * ks, bias ? bias[c] : 0.0f,
                                y + p * os);
            if (epilogue && !applied) epilogue->apply(c, y + p * os, os);
        }
    });
}

}  // namespace pg::ops
