// gemm_dot (gemm_direct.h) with AVX-512F: a product with few useful columns (a 7x7 or 13x13
// convolution map) computed with the vector lanes over k instead of over columns. The useful
// columns of op(B) are first copied into rows of a transposed buffer (bt: column u's k values
// contiguous, zero-padded to a multiple of 16); then each tile of 4 rows of A x 5 columns keeps
// 20 accumulators of 16 partial sums over p mod 16, reduced at the end of k (four at a time). No
// lane is spent on a column the column map drops or on a ragged last vector, which is what a
// 49-column plane costs gemm_direct (64 lanes for 49 columns). The sums are in a different order
// from the plain kernels' (within the numeric contract, not bit for bit); alpha, beta and the
// epilogue are the plain operations (the file is built with -ffp-contract=off and the epilogue is
// GemmEpilogue::apply on the finished rows). Tests: tests/unit/ops_gemm_dot_test.cc.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "base/aligned.h"
#include "base/thread_pool.h"
#include "ops/gemm_direct.h"
#include "ops/kernel.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define PG_DOT_AVX512 1
// GCC 12's AVX-512 shuffle intrinsics start from _mm512_undefined_*() values, which
// -Wuninitialized flags inside the headers.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace pg::ops {

namespace {

// k values per pass: the transposed columns of one pass (<= 256 KiB) stay in the L2 cache
// while every row of A goes by.
int64_t chunk_of(int64_t k, int64_t nu) {
    const int64_t kc = std::max<int64_t>(256, (int64_t{64} << 10) / std::max<int64_t>(nu, 1));
    return kc >= k ? k : kc / 16 * 16;
}

// Lanes gemm_direct spends on the product's columns: 32-column tiles, a last tile of <= 16
// columns taking one vector.
int64_t direct_lanes(int64_t n) {
    const int64_t full = n / 32 * 32, rest = n - full;
    return full + (rest == 0 ? 0 : rest <= 16 ? 16 : 32);
}

}  // namespace

bool gemm_dot_pays(const DirectGemm& g) {
    if (!gemm_direct_available() || g.k < 256 || g.m < 4 || g.n <= 0) return false;
    int64_t useful = g.n;
    if (g.row_pitch) {
        const int64_t rows = (g.n - 1) / g.row_pitch + 1, last = g.n - (rows - 1) * g.row_pitch;
        useful = (rows - 1) * g.row_len + std::min(last, g.row_len);
    }
    if (useful > 256) return false;
    // Per useful column the dot products cost about 1 + 8 / m (the transposed copy, against
    // m / 16 multiply-adds per copied value) + 52 / kc (13 operations to reduce 4 sums of
    // kc / 16 lanes, once per pass of kc values) of what a full lane of gemm_direct costs; taken
    // with a 10 % margin (fitted on ResNet / DenseNet / SqueezeNet layers at 7x7 to 14x14: 1x1
    // gain 6-30 %, 3x3 at 7x7 13 %, 3x3 at 13x13 and 14x14 none).
    const double kc = static_cast<double>(chunk_of(g.k, useful));
    const double dot =
        static_cast<double>(useful) * (1.0 + 8.0 / static_cast<double>(g.m) + 52.0 / kc);
    return dot < 0.9 * static_cast<double>(direct_lanes(g.n));
}

#ifdef PG_DOT_AVX512
namespace {

constexpr int kRows = 4, kCols = 5;
constexpr int64_t kBlock = 64;    // k values per block of the transposed copy
constexpr int64_t kAheadA = 128;  // A prefetched this many floats ahead

#define PG_AVX512 __attribute__((target("avx512f")))

// bt row u = op(B) column src[u] over p, zero past k (ldt >= k, a multiple of 16).
void transpose_columns(const DirectGemm& g, const DirectColumns& c, float* bt, int64_t ldt,
                       ThreadPool* pool) {
    const int64_t nu = static_cast<int64_t>(c.src.size()), blocks = (ldt + kBlock - 1) / kBlock;
    run_parallel(pool, blocks, [&](int64_t b, int64_t e) {
        for (int64_t blk = b; blk < e; ++blk) {
            const int64_t p0 = blk * kBlock, p1 = std::min(ldt, p0 + kBlock),
                          pk = std::min(p1, std::max(p0, g.k));
            for (int64_t u = 0; u < nu; ++u) {
                float* row = bt + u * ldt;
                const int64_t j = c.src[static_cast<size_t>(u)];
                for (int64_t p = p0; p < pk; ++p) row[p] = g.b[g.b_off[p] + j];
                std::fill(row + pk, row + p1, 0.0f);
            }
        }
    });
}

// out[0..3] = the sums of the 16 lanes of a, b, c and d: pairs of lanes added within each
// 128-bit block (unpack), then the four blocks (13 operations for four sums).
PG_AVX512 inline void lane_sums4(__m512 a, __m512 b, __m512 c, __m512 d, float* out) {
    const __m512 ab = _mm512_add_ps(_mm512_unpacklo_ps(a, b), _mm512_unpackhi_ps(a, b));
    const __m512 cd = _mm512_add_ps(_mm512_unpacklo_ps(c, d), _mm512_unpackhi_ps(c, d));
    const __m512d abd = _mm512_castps_pd(ab), cdd = _mm512_castps_pd(cd);
    __m512 x = _mm512_add_ps(_mm512_castpd_ps(_mm512_unpacklo_pd(abd, cdd)),
                             _mm512_castpd_ps(_mm512_unpackhi_pd(abd, cdd)));
    x = _mm512_add_ps(x, _mm512_shuffle_f32x4(x, x, 0x4E));
    x = _mm512_add_ps(x, _mm512_shuffle_f32x4(x, x, 0xB1));
    _mm_storeu_ps(out, _mm512_castps512_ps128(x));
}

#define PG_C(X) X(0) X(1) X(2) X(3) X(4)
#define PG_DECL_R(r)                                                                               \
    const float* a##r = a + std::min(r, mr - 1) * lda;                                             \
    __m512 c##r##0 = _mm512_setzero_ps(), c##r##1 = c##r##0, c##r##2 = c##r##0, c##r##3 = c##r##0, \
           c##r##4 = c##r##0;
#define PG_DECL_B(u) const float* b##u = bt + std::min(u, nc - 1) * ldt;
#define PG_FMA_ROW(r)                                                                  \
    {                                                                                  \
        const __m512 w =                                                               \
            kTail ? _mm512_maskz_loadu_ps(tail, a##r + p) : _mm512_loadu_ps(a##r + p); \
        c##r##0 = _mm512_fmadd_ps(w, v0, c##r##0);                                     \
        c##r##1 = _mm512_fmadd_ps(w, v1, c##r##1);                                     \
        c##r##2 = _mm512_fmadd_ps(w, v2, c##r##2);                                     \
        c##r##3 = _mm512_fmadd_ps(w, v3, c##r##3);                                     \
        c##r##4 = _mm512_fmadd_ps(w, v4, c##r##4);                                     \
    }
#define PG_STEP                                                                  \
    {                                                                            \
        const __m512 v0 = _mm512_loadu_ps(b0 + p), v1 = _mm512_loadu_ps(b1 + p), \
                     v2 = _mm512_loadu_ps(b2 + p), v3 = _mm512_loadu_ps(b3 + p), \
                     v4 = _mm512_loadu_ps(b4 + p);                               \
        PG_FMA_ROW(0) PG_FMA_ROW(1) PG_FMA_ROW(2) PG_FMA_ROW(3)                  \
    }
#define PG_SUM_U(u) lane_sums4(c0##u, c1##u, c2##u, c3##u, s[u]);

// s[u][r] = sum over p < k of A row r x bt row u, for mr <= 4 rows and nc <= 5 columns (the
// others repeat the last row / column and are not read).
PG_AVX512 __attribute__((noinline)) void dot_tile(const float* a, int64_t lda, int mr,
                                                  const float* bt, int64_t ldt, int nc, int64_t k,
                                                  float s[kCols][kRows]) {
    PG_DECL_R(0)
    PG_DECL_R(1) PG_DECL_R(2) PG_DECL_R(3) PG_C(PG_DECL_B) const int64_t full = k / 16 * 16;
    const __mmask16 tail = static_cast<__mmask16>((1u << (k - full)) - 1);
    int64_t p = 0;
    {
        constexpr bool kTail = false;
        for (; p < full; p += 16) {
            // A's rows come from memory once per pass (the columns are in L2): 8 lines ahead.
            _mm_prefetch(reinterpret_cast<const char*>(a0 + p + kAheadA), _MM_HINT_T0);
            _mm_prefetch(reinterpret_cast<const char*>(a1 + p + kAheadA), _MM_HINT_T0);
            _mm_prefetch(reinterpret_cast<const char*>(a2 + p + kAheadA), _MM_HINT_T0);
            _mm_prefetch(reinterpret_cast<const char*>(a3 + p + kAheadA), _MM_HINT_T0);
            PG_STEP
        }
    }
    if (p < k) {
        constexpr bool kTail = true;
        PG_STEP
    }
    PG_C(PG_SUM_U)
}

#undef PG_C
#undef PG_DECL_R
#undef PG_DECL_B
#undef PG_FMA_ROW
#undef PG_STEP
#undef PG_SUM_U

// One gemm_dot: the product, its useful columns, their transposed copy and the sums so far.
struct DotJob {
    const DirectGemm& g;
    const DirectColumns& c;
    const float* bt;
    int64_t ldt, nu;
    float* part;  // m x nu: the sums over the k chunks done so far
};

// part rows [i0, i1) over every useful column: the sums over p in [p0, p0 + kc), assigned for
// the first chunk and added after.
void dot_rows(const DotJob& j, int64_t p0, int64_t kc, int64_t i0, int64_t i1) {
    float s[kCols][kRows];
    for (int64_t i = i0; i < i1; i += kRows) {
        const int mr = static_cast<int>(std::min<int64_t>(kRows, i1 - i));
        for (int64_t u = 0; u < j.nu; u += kCols) {
            const int nc = static_cast<int>(std::min<int64_t>(kCols, j.nu - u));
            dot_tile(j.g.a + i * j.g.lda + p0, j.g.lda, mr, j.bt + u * j.ldt + p0, j.ldt, nc, kc,
                     s);
            for (int r = 0; r < mr; ++r)
                for (int q = 0; q < nc; ++q) {
                    float& sum = j.part[(i + r) * j.nu + u + q];
                    sum = p0 == 0 ? s[q][r] : sum + s[q][r];
                }
        }
    }
}

}  // namespace

void gemm_dot(const DirectGemm& g, ThreadPool* pool) {
    if (!gemm_direct_available()) fail("gemm_dot: not available on this CPU");
    if (g.m <= 0 || g.n <= 0) return;
    const DirectColumns c = direct_columns(g);
    const int64_t nu = static_cast<int64_t>(c.src.size());
    int64_t ldt = (std::max<int64_t>(g.k, 1) + 15) / 16 * 16;
    if (ldt % 1024 == 0) ldt += 16;  // rows 4 KiB apart would share cache sets
    AlignedArray<float> bt = aligned_array<float>(static_cast<size_t>(ldt * nu));
    AlignedArray<float> part = aligned_array<float>(static_cast<size_t>(g.m * nu));
    transpose_columns(g, c, bt.get(), ldt, pool);
    const DotJob job{g, c, bt.get(), ldt, nu, part.get()};
    const int threads = pool ? pool->num_threads() : 1;
    const int64_t tiles = (g.m + kRows - 1) / kRows;
    const int64_t tasks = std::min<int64_t>(tiles, threads > 1 ? 4 * threads : 1);
    const int64_t kc = chunk_of(g.k, nu);
    for (int64_t p0 = 0; p0 < std::max<int64_t>(g.k, 1); p0 += kc) {
        const int64_t len = std::min(kc, g.k - p0);
        run_parallel(pool, tasks, [&](int64_t b, int64_t e) {
            for (int64_t t = b; t < e; ++t)
                dot_rows(job, p0, len, std::min(g.m, tiles * t / tasks * kRows),
                         std::min(g.m, tiles * (t + 1) / tasks * kRows));
        });
    }
    run_parallel(pool, g.m, [&](int64_t b, int64_t e) {
        finish_direct_rows(g, c, part.get() + b * nu, nu, 1, b, e);
    });
}

#else

void gemm_dot(const DirectGemm&, ThreadPool*) {
    fail("gemm_dot: not built for this CPU");
}

#endif

}  // namespace pg::ops
