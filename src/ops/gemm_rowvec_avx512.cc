// gemm_rowvec (gemm_direct.h) with AVX-512F: the vector lanes over rows of C, for products with
// few useful columns. Per block of 64 rows of A (four vectors), k is taken 64 values at a time:
// the block's 64 x 64 piece of A is copied transposed (16 x 16 register transposes) into an
// L1-resident buffer, then every tile of 6 useful columns adds the piece's products to its 24
// accumulators (4 row vectors x 6 columns, each column's B values broadcast from where they
// lie). Each element is a chain of fused multiply-adds over p in order starting from zero, as
// in gemm_direct, and the finished sums leave through 16 x 16 transposes with alpha, beta and
// the epilogue applied as gemm_direct applies them, so the bits are gemm_direct's. Built with
// -ffp-contract=off. Tests: tests/unit/ops_gemm_rowvec_test.cc.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>

#include "base/aligned.h"
#include "base/thread_pool.h"
#include "ops/gemm_direct.h"
#include "ops/gemm_epilogue_avx512.h"
#include "ops/kernel.h"
#include "ops/pack_rows_avx512.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define PG_ROWVEC_AVX512 1
// GCC 12's AVX-512 shuffle intrinsics start from _mm512_undefined_*() values, which
// -Wuninitialized flags inside the headers.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace pg::ops {

namespace {

std::atomic<bool> g_enabled{true};

// Measured against gemm_direct / gemm_dot (warm and cold data, 1 and 2 threads) on convolution
// and transformer shapes: with long sums (k >= 512) gemm_rowvec takes 0.56-0.89 of the time on
// 7x7 maps and 0.72-0.96 up to 28x28 (784 columns); with k = 256 to 320 it takes 0.75-0.97 on
// 7x7 to 14x14 maps (up to 256 columns) with at least 256 rows (four blocks: two threads need
// not split the columns, which copies A twice), but 1.07-1.4 with 64 to 192 rows and 1.15 on
// 28x28 (784 columns); with k <= 192, 1.1-2.0 on two threads. Since buffers are cache-line
// aligned and gemm_direct's 12-row tile addresses A from four pointers (session 10, 2 threads,
// rowvec / direct), long sums still gain up to about 200 columns (128 x 512 x 196 0.91, 96 x 1024
// x 196 0.875, 160 x 832 x 49 0.82, 256 x 1024 x 196 0.70) and, with 256 rows or more, up to 512
// (256 x 1024 x 392 0.97, x 512 0.89), but lose beyond (128 x 512 x 256 1.19, x 784 1.18;
// 256 x 1024 x 640 1.06; 512 x 512 x 784 1.11; 256 x 2304 x 784 1.46).
constexpr int64_t kLongSums = 512, kLongColumns = 224, kLongManyRows = 256, kLongManyColumns = 512;
constexpr int64_t kMidSums = 256, kMidRows = 256, kMidColumns = 256;

}  // namespace

bool set_gemm_rowvec(bool on) {
    return g_enabled.exchange(on);
}

bool gemm_rowvec_pays(const DirectGemm& g) {
    if (!gemm_direct_available() || !g_enabled.load(std::memory_order_relaxed)) return false;
    if (g.m < 64 || g.n <= 0) return false;
    int64_t useful = g.n;
    if (g.row_pitch) {
        const int64_t rows = (g.n - 1) / g.row_pitch + 1, last = g.n - (rows - 1) * g.row_pitch;
        useful = (rows - 1) * g.row_len + std::min(last, g.row_len);
    }
    if (g.k >= kLongSums) return useful <= (g.m >= kLongManyRows ? kLongManyColumns : kLongColumns);
    return g.k >= kMidSums && g.m >= kMidRows && useful <= kMidColumns;
}

#ifdef PG_ROWVEC_AVX512
namespace {

constexpr int64_t kBlockRows = kPackRows;  // rows of C per block: four vectors
constexpr int64_t kChunk = 64;             // values of k per transposed piece (16 KiB)
constexpr int kCols = 6;                   // useful columns per tile

#define PG_AVX512 __attribute__((target("avx512f")))

// acc[u * 64 + lane] (+)= the piece's products for NP useful columns (cols: their B columns) and
// MB row vectors; `first`: the accumulators start from zero.
template <int MB, int NP>
PG_AVX512 __attribute__((noinline)) void tile(const float* ap, int64_t kc, const float* b,
                                              const int64_t* off, const int64_t* cols, float* acc,
                                              bool first) {
    __m512 c[MB][NP];
    _Pragma("GCC unroll 8") for (int j = 0; j < NP; ++j)
        _Pragma("GCC unroll 4") for (int i = 0; i < MB; ++i) c[i][j] =
            first ? _mm512_setzero_ps() : _mm512_loadu_ps(acc + j * kBlockRows + 16 * i);
    const float* col[NP];
    _Pragma("GCC unroll 8") for (int j = 0; j < NP; ++j) col[j] = b + cols[j];
    for (int64_t p = 0; p < kc; ++p) {
        const int64_t o = off[p];
        __m512 w[MB];
        _Pragma("GCC unroll 4") for (int i = 0; i < MB; ++i) w[i] =
            _mm512_loadu_ps(ap + p * kBlockRows + 16 * i);
        _Pragma("GCC unroll 8") for (int j = 0; j < NP; ++j) {
            const __m512 x = _mm512_set1_ps(col[j][o]);
            _Pragma("GCC unroll 4") for (int i = 0; i < MB; ++i) c[i][j] =
                _mm512_fmadd_ps(w[i], x, c[i][j]);
        }
    }
    _Pragma("GCC unroll 8") for (int j = 0; j < NP; ++j)
        _Pragma("GCC unroll 4") for (int i = 0; i < MB; ++i)
            _mm512_storeu_ps(acc + j * kBlockRows + 16 * i, c[i][j]);
}

using TileFn = void (*)(const float*, int64_t, const float*, const int64_t*, const int64_t*, float*,
                        bool);

template <int MB>
constexpr TileFn kTiles[kCols + 1] = {nullptr,     tile<MB, 1>, tile<MB, 2>, tile<MB, 3>,
                                      tile<MB, 4>, tile<MB, 5>, tile<MB, 6>};

TileFn tile_fn(int64_t vecs, int64_t np) {
    switch (vecs) {
        case 1:
            return kTiles<1>[np];
        case 2:
            return kTiles<2>[np];
        case 3:
            return kTiles<3>[np];
        default:
            return kTiles<4>[np];
    }
}

// Row i of C at `out` (w <= 16 adjacent columns, lanes `m`) from its sums v: alpha, beta, the
// epilogue (GemmEpilogue::apply's operations) and the store.
PG_AVX512 inline void finish_lanes(const DirectGemm& g, __m512 v, float* out, __mmask16 m,
                                   int64_t i) {
    if (g.alpha != 1.0f) v = _mm512_mul_ps(_mm512_set1_ps(g.alpha), v);
    if (g.beta != 0.0f) {
        const __m512 old = _mm512_maskz_loadu_ps(m, out);
        v = g.beta == 1.0f ? _mm512_add_ps(old, v)
                           : _mm512_add_ps(_mm512_mul_ps(_mm512_set1_ps(g.beta), old), v);
    }
    if (const GemmEpilogue* ep = g.epilogue) {
        if (ep->col_bias)  // as apply: the run's columns from its first one's, unwrapped
            v = _mm512_add_ps(
                v, _mm512_maskz_loadu_ps(m, ep->col_bias + (out - ep->col_origin) % ep->col_ldc));
        v = epilogue_rows_zmm(v, *ep, i);
        if (ep->res)
            v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, ep->res + (out - ep->res_origin)));
        v = epilogue_clamp_zmm(v, *ep);
    }
    _mm512_mask_storeu_ps(out, m, v);
}

// Rows [i0, i0 + rows) x useful columns [u0, u1) of C from the block's sums (acc: column u0
// first, 64 lanes each): each run of adjacent C columns 16 at a time, transposed in registers.
PG_AVX512 void finish_block(const DirectGemm& g, const DirectColumns& c, const float* acc,
                            int64_t i0, int64_t rows, int64_t u0, int64_t u1) {
    const int64_t* dst = c.dst.data();
    for (int64_t u = u0; u < u1;) {
        int64_t e = u + 1;
        while (e < u1 && e - u < 16 && dst[e] == dst[e - 1] + 1) ++e;
        const int w = static_cast<int>(e - u);
        const __mmask16 m = static_cast<__mmask16>((1u << w) - 1);
        for (int64_t r0 = 0; r0 < rows; r0 += 16) {
            __m512 t[16];
            transpose16(acc + (u - u0) * kBlockRows + r0, kBlockRows, w - 1, t);
            const int nr = static_cast<int>(std::min<int64_t>(16, rows - r0));
            for (int r = 0; r < nr; ++r) {
                const int64_t i = i0 + r0 + r;
                finish_lanes(g, t[r], g.c + i * g.ldc + dst[u], m, i);
            }
        }
        u = e;
    }
}

// Rows [i0, i0 + rows) x useful columns [u0, u1) of C: the block's pieces, then its finished
// values (acc: the sums of column u0 first).
void run_block(const DirectGemm& g, const DirectColumns& c, int64_t i0, int64_t rows, int64_t u0,
               int64_t u1, float* ap, float* acc) {
    const int64_t vecs = (rows + 15) / 16;
    if (g.k <= 0) std::fill_n(acc, (u1 - u0) * kBlockRows, 0.0f);  // an empty sum
    for (int64_t p0 = 0; p0 < g.k; p0 += kChunk) {
        const int64_t kc = std::min(kChunk, g.k - p0);
        pack_rows_transposed(g.a + i0 * g.lda, g.lda, rows, p0, kc, g.k, ap);
        for (int64_t u = u0; u < u1; u += kCols) {
            const int64_t np = std::min<int64_t>(kCols, u1 - u);
            tile_fn(vecs, np)(ap, kc, g.b, g.b_off + p0, c.src.data() + u,
                              acc + (u - u0) * kBlockRows, p0 == 0);
        }
    }
    finish_block(g, c, acc, i0, rows, u0, u1);
}

}  // namespace

void gemm_rowvec(const DirectGemm& g, ThreadPool* pool) {
    if (!gemm_direct_available()) fail("gemm_rowvec: not available on this CPU");
    if (g.m <= 0 || g.n <= 0) return;
    const DirectColumns c = direct_columns(g);
    const int64_t nu = static_cast<int64_t>(c.src.size());
    const int64_t blocks = (g.m + kBlockRows - 1) / kBlockRows;
    // Fewer blocks than two per thread: the columns are split too (each part copies its
    // block's A again), in whole tiles.
    const int threads = pool ? pool->num_threads() : 1;
    const int64_t tiles = (nu + kCols - 1) / kCols;
    const int64_t parts = std::clamp<int64_t>((2 * threads + blocks - 1) / blocks, 1, tiles);
    run_parallel(pool, blocks * parts, [&](int64_t b, int64_t e) {
        const AlignedArray<float> ap =
            aligned_array<float>(static_cast<size_t>(kChunk * kBlockRows));
        const AlignedArray<float> acc = aligned_array<float>(static_cast<size_t>(nu * kBlockRows));
        for (int64_t t = b; t < e; ++t) {
            const int64_t i0 = t / parts * kBlockRows, part = t % parts;
            const int64_t u0 = std::min(nu, tiles * part / parts * kCols),
                          u1 = std::min(nu, tiles * (part + 1) / parts * kCols);
            if (u0 < u1)
                run_block(g, c, i0, std::min(kBlockRows, g.m - i0), u0, u1, ap.get(), acc.get());
        }
    });
}

#else

void gemm_rowvec(const DirectGemm&, ThreadPool*) {
    fail("gemm_rowvec: not built for this CPU");
}

#endif

}  // namespace pg::ops
