// Pools on blocked tensors (nchwc.h): each output pixel's taps in visit_window's order (the
// per-axis ranges of pool_window.h), 16 channels per vector, with the plain pools' comparisons
// and divisions. Work: (image, block, output row) units, one contiguous range per thread, in the
// order of the Conv's split before the pool (for_rows). The outputs are streamed around the
// caches (MOVNTPS) when y is 64-byte aligned, as the depthwise Conv's: the pool steps of
// SqueezeNet, Inception-v1 / v2 and DenseNet-121 ran 0.55-0.86 of their time, the models
// 0.986-0.997 (kernel_ab pool_stream).
#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>

#include "base/error.h"
#include "base/thread_pool.h"
#include "ops/gemm_epilogue_avx512.h"
#include "ops/gemm_kernels.h"
#include "ops/nchwc.h"
#include "ops/nchwc_groups.h"
#include "ops/pool_window.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define PG_NCHWC_POOL_AVX512 1
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace pg::ops {

namespace {
std::atomic<bool> g_pool_parts{true};
std::atomic<bool> g_pool_stream{true};  // set_nchwc_pool_stream_stores
}  // namespace

bool set_nchwc_pool_parts(bool on) {
    return g_pool_parts.exchange(on);
}

bool set_nchwc_pool_stream_stores(bool on) {
    return g_pool_stream.exchange(on);
}

#ifdef PG_NCHWC_POOL_AVX512
namespace {

constexpr int64_t kB = kNchwcBlock;

// Runs fn(plane block index, output row) over the pool; rows are Window rows (axes 0 and 1).
// One contiguous range of units per thread (run_parts), ordered as the blocked Conv before the
// pool most likely split its output (nchwc_conv_split): by block, else by row across
// the blocks, so that a thread reads mostly what it wrote (SqueezeNet's and Inception-v2's max
// pools after Convs of 64-128 channels: 0.72-0.93 of claimed chunks, kernel_ab pool_parts).
// `stream`: fn streams its stores around the caches, so each part ends with an SFENCE.
template <typename F>
void for_rows(const Window& g, int64_t n, int64_t cb, ThreadPool* pool, bool stream, F&& fn) {
    const int64_t rows = g.out[0] * g.out[1], blocks = n * cb;
    ThreadPool* const team = blocks * g.out_size() > 1024 ? pool : nullptr;
    const auto fence = [stream] {
        if (stream) _mm_sfence();
    };
    if (!g_pool_parts.load(std::memory_order_relaxed)) {
        run_parallel(team, blocks * rows, [&](int64_t b, int64_t e) {
            for (int64_t u = b; u < e; ++u) fn(u / rows, u % rows);
            fence();
        });
        return;
    }
    const int threads = team ? team->num_threads() : 1;
    if (nchwc_conv_split(n, cb, g.in_size(), threads).by_groups) {
        run_parts(team, blocks * rows, [&](int64_t b, int64_t e) {
            for (int64_t u = b; u < e; ++u) fn(u / rows, u % rows);
            fence();
        });
        return;
    }
    run_parts(team, blocks * rows, [&](int64_t b, int64_t e) {  // (image, row, block)
        for (int64_t u = b; u < e; ++u) {
            const int64_t image = u / (rows * cb), in = u % (rows * cb);
            fn(image * cb + in % cb, in / cb);
        }
        fence();
    });
}

// The taps of a window per axis (AxisTaps), visited as visit_window does: kd, kh, kw ascending,
// those inside the input only.
struct Taps {
    AxisTaps a[3];
    explicit Taps(const Window& g) : a{axis_taps(g, 0), axis_taps(g, 1), axis_taps(g, 2)} {}
};

// An average pool's sum over `div` taps (NaN for none, as the plain pool).
__attribute__((target("avx512f"), always_inline)) inline __m512 average(__m512 sum, int64_t div) {
    return div > 0 ? _mm512_div_ps(sum, _mm512_set1_ps(static_cast<float>(div)))
                   : _mm512_set1_ps(std::numeric_limits<float>::quiet_NaN());
}

// Four outputs ow..ow+3 of row (od, oh) whose windows are whole along the width: the same
// taps in the same order as one at a time, as four independent chains.
template <bool kMax>
__attribute__((target("avx512f"))) void pool_four(const Window& g, const Taps& t, const float* x,
                                                  float* y, int64_t od, int64_t oh, int64_t ow,
                                                  bool include_pad, bool stream) {
    const AxisTaps &d = t.a[0], &h = t.a[1], &w = t.a[2];
    __m512 acc[4];
    for (int q = 0; q < 4; ++q)
        acc[q] =
            kMax ? _mm512_set1_ps(-std::numeric_limits<float>::infinity()) : _mm512_setzero_ps();
    bool first = true;
    for (int64_t kd = d.lo[od]; kd < d.hi[od]; ++kd) {
        const int64_t id = d.start[od] + kd * g.dil[0];
        for (int64_t kh = h.lo[oh]; kh < h.hi[oh]; ++kh) {
            const float* xr = x + (id * g.in[1] + h.start[oh] + kh * g.dil[1]) * g.in[2] * kB;
            for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
                for (int q = 0; q < 4; ++q) {
                    const __m512 v = _mm512_loadu_ps(xr + (w.start[ow + q] + kw * g.dil[2]) * kB);
                    acc[q] = !kMax   ? _mm512_add_ps(acc[q], v)
                             : first ? v
                                     : _mm512_max_ps(v, acc[q]);
                }
                first = false;
            }
        }
    }
    const int64_t count = (d.hi[od] - d.lo[od]) * (h.hi[oh] - h.lo[oh]) * g.kernel[2];
    for (int q = 0; q < 4; ++q) {
        if (!kMax) {
            const int64_t div =
                include_pad ? d.padded[od] * h.padded[oh] * w.padded[ow + q] : count;
            acc[q] = average(acc[q], div);
        }
        store_zmm(y + ((od * g.out[1] + oh) * g.out[2] + ow + q) * kB, acc[q], stream);
    }
}

// Output row `row` (od, oh) of one block plane: max (the first tap, then x > best ? x : best;
// no tap: -inf) or average (sum in order, then / the count, or the padded count; NaN for 0).
__attribute__((target("avx512f"))) void pool_row(const Window& g, const Taps& t, const float* x,
                                                 float* y, int64_t row, bool max, bool include_pad,
                                                 bool stream) {
    const int64_t od = row / g.out[1], oh = row % g.out[1];
    const AxisTaps &d = t.a[0], &h = t.a[1], &w = t.a[2];
    const auto whole = [&](int64_t ow) { return w.lo[ow] == 0 && w.hi[ow] == g.kernel[2]; };
    for (int64_t ow = 0; ow < g.out[2]; ++ow) {
        if (ow + 4 <= g.out[2] && whole(ow) && whole(ow + 3)) {  // whole windows are contiguous
            (max ? pool_four<true> : pool_four<false>)(g, t, x, y, od, oh, ow, include_pad, stream);
            ow += 3;
            continue;
        }
        __m512 acc =
            max ? _mm512_set1_ps(-std::numeric_limits<float>::infinity()) : _mm512_setzero_ps();
        int64_t count = 0;
        for (int64_t kd = d.lo[od]; kd < d.hi[od]; ++kd) {
            const int64_t id = d.start[od] + kd * g.dil[0];
            for (int64_t kh = h.lo[oh]; kh < h.hi[oh]; ++kh) {
                const float* xr = x + (id * g.in[1] + h.start[oh] + kh * g.dil[1]) * g.in[2] * kB;
                for (int64_t kw = w.lo[ow]; kw < w.hi[ow]; ++kw) {
                    const __m512 v = _mm512_loadu_ps(xr + (w.start[ow] + kw * g.dil[2]) * kB);
                    acc = !max ? _mm512_add_ps(acc, v) : count == 0 ? v : _mm512_max_ps(v, acc);
                    ++count;
                }
            }
        }
        if (!max) {
            const int64_t div = include_pad ? d.padded[od] * h.padded[oh] * w.padded[ow] : count;
            acc = average(acc, div);
        }
        store_zmm(y + (row * g.out[2] + ow) * kB, acc, stream);
    }
}

__attribute__((target("avx512f"))) void global_block(const float* x, int64_t plane, float* y,
                                                     bool max) {
    __m512 acc = _mm512_set1_ps(max ? -std::numeric_limits<float>::infinity() : 0.0f);
    for (int64_t i = 0; i < plane; ++i) {
        const __m512 v = _mm512_loadu_ps(x + i * kB);
        acc = max ? _mm512_max_ps(v, acc) : _mm512_add_ps(acc, v);  // std::max(acc, v), acc + v
    }
    if (!max) acc = _mm512_div_ps(acc, _mm512_set1_ps(static_cast<float>(plane)));
    _mm512_storeu_ps(y, acc);
}

void require() {
    if (!nchwc_available())
        throw Error(ErrorKind::kInternal, "blocked pools: not available on this CPU");
}

// Whether the pool streams its outputs (streamable y).
bool streams(const float* y) {
    return g_pool_stream.load(std::memory_order_relaxed) && streamable(y);
}

}  // namespace

void max_pool_nchwc(const Window& g, int64_t n, int64_t cb, const float* x, float* y,
                    ThreadPool* pool) {
    require();
    const Taps t(g);
    const bool stream = streams(y);
    for_rows(g, n, cb, pool, stream, [&](int64_t blk, int64_t row) {
        pool_row(g, t, x + blk * g.in_size() * kB, y + blk * g.out_size() * kB, row, true, false,
                 stream);
    });
}

void avg_pool_nchwc(const Window& g, int64_t n, int64_t cb, const float* x, float* y,
                    bool include_pad, ThreadPool* pool) {
    require();
    const Taps t(g);
    const bool stream = streams(y);
    for_rows(g, n, cb, pool, stream, [&](int64_t blk, int64_t row) {
        pool_row(g, t, x + blk * g.in_size() * kB, y + blk * g.out_size() * kB, row, false,
                 include_pad, stream);
    });
}

void global_pool_nchwc(int64_t n, int64_t cb, int64_t plane, const float* x, float* y, bool max,
                       ThreadPool* pool) {
    require();
    (g_pool_parts.load(std::memory_order_relaxed) ? run_parts : run_parallel)(
        n * cb * plane > (1 << 15) ? pool : nullptr, n * cb, [&](int64_t b, int64_t e) {
            for (int64_t blk = b; blk < e; ++blk)
                global_block(x + blk * plane * kB, plane, y + blk * kB, max);
        });
}

#else

void max_pool_nchwc(const Window&, int64_t, int64_t, const float*, float*, ThreadPool*) {
    throw Error(ErrorKind::kInternal, "blocked pools: not built for this CPU");
}
void avg_pool_nchwc(const Window&, int64_t, int64_t, const float*, float*, bool, ThreadPool*) {
    throw Error(ErrorKind::kInternal, "blocked pools: not built for this CPU");
}
void global_pool_nchwc(int64_t, int64_t, int64_t, const float*, float*, bool, ThreadPool*) {
    throw Error(ErrorKind::kInternal, "blocked pools: not built for this CPU");
}

#endif

}  // namespace pg::ops
