// Pools on blocked tensors (nchwc.h): each output pixel's taps in visit_window's order
// (pool_window.h), 16 channels per vector, with the plain pools' comparisons and divisions.
// Work: (image, block, output row) units over the pool.
#include <cmath>
#include <limits>
#include <vector>

#include "base/error.h"
#include "ops/gemm_kernels.h"
#include "ops/nchwc.h"
#include "ops/pool_window.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define PG_NCHWC_POOL_AVX512 1
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace pg::ops {

#ifdef PG_NCHWC_POOL_AVX512
namespace {

constexpr int64_t kB = kNchwcBlock;

// Runs fn(plane block index, output row, a tap buffer) over the pool; rows are Window rows (axes 0
// and 1).
template <typename F>
void for_rows(const Window& g, int64_t blocks, ThreadPool* pool, F&& fn) {
    const int64_t rows = g.out[0] * g.out[1];
    run_parallel(blocks * g.out_size() > 1024 ? pool : nullptr, blocks * rows,
                 [&](int64_t b, int64_t e) {
                     std::vector<int64_t> taps;
                     for (int64_t u = b; u < e; ++u) fn(u / rows, u % rows, taps);
                 });
}

// The taps of output o inside the input (visit_window's order) into `taps`; returns the number
// inside the padded input.
int64_t window_taps(const Window& g, int64_t o, std::vector<int64_t>& taps) {
    taps.clear();
    return visit_window(g, o, [&](int64_t i) { taps.push_back(i); });
}

__attribute__((target("avx512f"))) void max_row(const Window& g, const float* x, float* y,
                                                int64_t row, std::vector<int64_t>& taps) {
    for (int64_t o = row * g.out[2]; o < (row + 1) * g.out[2]; ++o) {
        window_taps(g, o, taps);
        // The first tap, then x > best ? x : best; no tap: -inf (max_pool's start).
        __m512 best = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
        for (size_t t = 0; t < taps.size(); ++t) {
            const __m512 v = _mm512_loadu_ps(x + taps[t] * kB);
            best = t == 0 ? v : _mm512_max_ps(v, best);
        }
        _mm512_storeu_ps(y + o * kB, best);
    }
}

__attribute__((target("avx512f"))) void avg_row(const Window& g, const float* x, float* y,
                                                int64_t row, bool include_pad,
                                                std::vector<int64_t>& taps) {
    for (int64_t o = row * g.out[2]; o < (row + 1) * g.out[2]; ++o) {
        const int64_t padded = window_taps(g, o, taps);
        __m512 sum = _mm512_setzero_ps();
        for (const int64_t i : taps) sum = _mm512_add_ps(sum, _mm512_loadu_ps(x + i * kB));
        const int64_t div = include_pad ? padded : static_cast<int64_t>(taps.size());
        _mm512_storeu_ps(y + o * kB,
                         div > 0 ? _mm512_div_ps(sum, _mm512_set1_ps(static_cast<float>(div)))
                                 : _mm512_set1_ps(std::numeric_limits<float>::quiet_NaN()));
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

}  // namespace

void max_pool_nchwc(const Window& g, int64_t n, int64_t cb, const float* x, float* y,
                    ThreadPool* pool) {
    require();
    for_rows(g, n * cb, pool, [&](int64_t blk, int64_t row, std::vector<int64_t>& taps) {
        max_row(g, x + blk * g.in_size() * kB, y + blk * g.out_size() * kB, row, taps);
    });
}

void avg_pool_nchwc(const Window& g, int64_t n, int64_t cb, const float* x, float* y,
                    bool include_pad, ThreadPool* pool) {
    require();
    for_rows(g, n * cb, pool, [&](int64_t blk, int64_t row, std::vector<int64_t>& taps) {
        avg_row(g, x + blk * g.in_size() * kB, y + blk * g.out_size() * kB, row, include_pad, taps);
    });
}

void global_pool_nchwc(int64_t n, int64_t cb, int64_t plane, const float* x, float* y, bool max,
                       ThreadPool* pool) {
    require();
    run_parallel(n * cb * plane > (1 << 15) ? pool : nullptr, n * cb, [&](int64_t b, int64_t e) {
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
