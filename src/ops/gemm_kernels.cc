// The float32 fast GEMM: op(A) is read in place when row-major, else packed once into row
// panels of kMr (12); op(B) is packed block by block (kKc x nc) into column panels of kNr (16).
// A micro-kernel keeps a tile of C in registers: 12 x 32 over two panels with AVX-512F
// (gemm_micro_avx512.cc), or two 6 x 16 halves compiled for the x86-64 baseline and for
// AVX2+FMA (a panel's last eight-or-fewer columns take a half-width variant), chosen at run time
// (gemm_force_isa for tests). C is stored on the first k-slice when beta is 0, so it is never
// cleared first. Work is split over column blocks (each task packs its own B) or, when there are
// too few columns to share, over row panels reading one op(B) that all threads packed together
// first. m == 1 is a plain matrix-vector loop (op(B) streamed once, unpacked).
#include "ops/gemm_kernels.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <vector>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "base/aligned.h"
#include "base/thread_pool.h"
#include "ops/gemm_direct.h"
#include "ops/gemm_micro.h"

namespace pg::ops {

void gemm_reference(const GemmArgs<float>& g) {
    gemm_plain(g);
}

namespace {

// GemmEpilogue::apply on n values; N > 0: n == N, known to the compiler (whole-tile rows).
template <int N>
inline __attribute__((always_inline)) void apply_row(const GemmEpilogue& e, int64_t i, float* row,
                                                     int64_t n) {
    if constexpr (N > 0) n = N;
    if (e.col_bias) {
        const float* cb = e.col_bias + (row - e.col_origin) % e.col_ldc;
        for (int64_t j = 0; j < n; ++j) row[j] = row[j] + cb[j];
    }
    if (e.bias) {
        const float b = e.bias[i];
        for (int64_t j = 0; j < n; ++j) row[j] = row[j] + b;
    }
    if (e.sub) {
        const float m = e.sub[i], k = e.mul[i], b = e.add[i];
        for (int64_t j = 0; j < n; ++j) row[j] = (row[j] - m) * k + b;
    }
    if (e.scale) {
        const float k = e.scale[i];
        for (int64_t j = 0; j < n; ++j) row[j] = row[j] * k;
    }
    if (e.shift) {
        const float b = e.shift[i];
        for (int64_t j = 0; j < n; ++j) row[j] = row[j] + b;
    }
    if (e.res) {
        const float* r = e.res + (row - e.res_origin);
        for (int64_t j = 0; j < n; ++j) row[j] = row[j] + r[j];
    }
    if (e.clamp) {
        const float lo = e.lo, hi = e.hi;  // locals: row cannot alias them, so this vectorizes
        for (int64_t j = 0; j < n; ++j) {
            const float r = row[j] < lo ? lo : row[j];
            row[j] = r > hi ? hi : r;
        }
    }
}

}  // namespace

void GemmEpilogue::apply(int64_t i, float* row, int64_t n) const {
    apply_row<0>(*this, i, row, n);
}

namespace {

// The epilogue on a whole-width tile (mr rows of kGemmNr floats at c, row i0 first).
using TileFn = void (*)(const GemmEpilogue&, int64_t i0, float* c, int64_t ldc, int mr);

void tile_base(const GemmEpilogue& e, int64_t i0, float* c, int64_t ldc, int mr) {
    for (int i = 0; i < mr; ++i) apply_row<kGemmNr>(e, i0 + i, c + i * ldc, kGemmNr);
}

#if defined(__x86_64__) && defined(__GNUC__)
// AVX2 without FMA: the loads match the micro-kernel's 256-bit stores, and with no FMA in the
// instruction set the compiler cannot contract (c - m) * k + b, so the values stay the plain
// kernels'.
__attribute__((target("avx2"))) void tile_avx2(const GemmEpilogue& e, int64_t i0, float* c,
                                               int64_t ldc, int mr) {
    for (int i = 0; i < mr; ++i) apply_row<kGemmNr>(e, i0 + i, c + i * ldc, kGemmNr);
}
#endif

TileFn tile_fn() {
    static const TileFn fn = [] {
#if defined(__x86_64__) && defined(__GNUC__)
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx2")) return tile_avx2;
#endif
        return tile_base;
    }();
    return fn;
}

std::atomic<bool> g_affine_parts{true};  // set_affine_parts
std::atomic<bool> g_steal_tails{true};   // set_steal_tails
// run_parts: a thread's share runs in calls of 1 / kRangeChunks of it (a thread done early takes
// the back half of what another has left; ThreadPool::parallel_shares). Chunks of half the rest
// (fewer calls) were even without load; with a busy process beside the run they left a
// descheduled worker holding a quarter of the job: ResNet-50 0.934 with fixed chunks.
constexpr int64_t kRangeChunks = 8;

// fn over [0, n) in `parts` (<= the pool's threads) contiguous ranges, range t on pool thread t
// (ThreadPool::parallel_parts); empty ranges are skipped.
void split_in_parts(ThreadPool& pool, int64_t n, int64_t parts,
                    const std::function<void(int64_t, int64_t)>& fn) {
    pool.parallel_parts([&](int64_t t, int64_t) {
        const int64_t b = n * t / parts, e = n * (t + 1) / parts;
        if (t < parts && b < e) fn(b, e);
    });
}

}  // namespace

void run_parallel(ThreadPool* pool, int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
    if (n <= 0) return;
    if (!pool || pool->num_threads() <= 1 || n == 1) return fn(0, n);
    pool->parallel_for(n, 1, fn);
}

bool set_affine_parts(bool on) {
    return g_affine_parts.exchange(on);
}

bool set_steal_tails(bool on) {
    return g_steal_tails.exchange(on);
}

void run_affine(ThreadPool* pool, int64_t n, int64_t grain,
                const std::function<void(int64_t, int64_t)>& fn) {
    if (n <= 0) return;
    grain = std::max<int64_t>(1, grain);
    if (!pool || pool->num_threads() <= 1 || n <= grain) return fn(0, n);
    if (!g_affine_parts.load(std::memory_order_relaxed)) return pool->parallel_for(n, grain, fn);
    const int64_t parts = std::min<int64_t>(pool->num_threads(), n / grain);
    if (parts <= 1) return fn(0, n);
    split_in_parts(*pool, n, parts, fn);
}

void run_parts(ThreadPool* pool, int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
    if (n <= 0) return;
    if (!pool || pool->num_threads() <= 1 || n == 1) return fn(0, n);
    const int64_t threads = pool->num_threads();
    if (g_steal_tails.load(std::memory_order_relaxed))
        return pool->parallel_shares(n, n / (threads * kRangeChunks), 1, fn);
    split_in_parts(*pool, n, threads, fn);
}

namespace {

constexpr int kMr = kGemmMr, kNr = kGemmNr;
constexpr int kHalfMr = kMr / 2;                   // rows of the baseline / AVX2 register tile
constexpr int64_t kKc = 256, kMc = 96, kNc = 512;  // kMc % kMr == 0, kNc % (2 * kNr) == 0

// Eight floats; GCC lowers it to one AVX register or two SSE registers.
typedef float V8 __attribute__((vector_size(32)));

// C[mr x nr] = beta * C + alpha * A (kc x kHalfMr rows of a packed kMr panel, or read in place)
// * Bp (kc x kNr panel). kHalf: nr <= 8, only the first eight columns are computed (the same
// sums for them).
template <bool kDirect, bool kHalf>
inline __attribute__((always_inline)) void micro_body(int64_t kc, const float* ap, int64_t lda,
                                                      const float* bp, float* c, int64_t ldc,
                                                      int mr, int nr, float alpha, float beta) {
    V8 acc[kHalfMr][2] = {};
    const float* rows[kHalfMr];
    if constexpr (kDirect)
        for (int i = 0; i < kHalfMr; ++i) rows[i] = ap + std::min(i, mr - 1) * lda;
    for (int64_t p = 0; p < kc; ++p) {
        V8 b0, b1;
        __builtin_memcpy(&b0, bp + p * kNr, sizeof b0);
        if constexpr (!kHalf) __builtin_memcpy(&b1, bp + p * kNr + 8, sizeof b1);
        for (int i = 0; i < kHalfMr; ++i) {
            const float av = kDirect ? rows[i][p] : ap[p * kMr + i];
            acc[i][0] += av * b0;
            if constexpr (!kHalf) acc[i][1] += av * b1;
        }
    }
    mr = std::min(mr, kHalfMr);
    if (!kHalf && nr == kNr) {  // a full-width tile: whole-vector updates of C
        for (int i = 0; i < mr; ++i) {
            float* ci = c + i * ldc;
            V8 c0, c1;
            if (beta == 0.0f) {
                c0 = alpha * acc[i][0], c1 = alpha * acc[i][1];
            } else {
                __builtin_memcpy(&c0, ci, sizeof c0);
                __builtin_memcpy(&c1, ci + 8, sizeof c1);
                c0 = beta == 1.0f ? c0 + alpha * acc[i][0] : beta * c0 + alpha * acc[i][0];
                c1 = beta == 1.0f ? c1 + alpha * acc[i][1] : beta * c1 + alpha * acc[i][1];
            }
            __builtin_memcpy(ci, &c0, sizeof c0);
            __builtin_memcpy(ci + 8, &c1, sizeof c1);
        }
        return;
    }
    for (int i = 0; i < mr; ++i) {
        float row[kNr];
        __builtin_memcpy(row, &acc[i][0], sizeof row);
        float* ci = c + i * ldc;
        if (beta == 0.0f)
            for (int j = 0; j < nr; ++j) ci[j] = alpha * row[j];
        else if (beta == 1.0f)
            for (int j = 0; j < nr; ++j) ci[j] += alpha * row[j];
        else
            for (int j = 0; j < nr; ++j) ci[j] = beta * ci[j] + alpha * row[j];
    }
}

// The four variants of micro_body (A in place or packed, full or half width) on kHalfMr rows.
inline __attribute__((always_inline)) void micro_half(int64_t kc, const float* ap, int64_t lda,
                                                      const float* bp, float* c, int64_t ldc,
                                                      int mr, int nr, float alpha, float beta) {
    if (nr <= 8) {
        if (lda) return micro_body<true, true>(kc, ap, lda, bp, c, ldc, mr, nr, alpha, beta);
        return micro_body<false, true>(kc, ap, lda, bp, c, ldc, mr, nr, alpha, beta);
    }
    if (lda) return micro_body<true, false>(kc, ap, lda, bp, c, ldc, mr, nr, alpha, beta);
    micro_body<false, false>(kc, ap, lda, bp, c, ldc, mr, nr, alpha, beta);
}

// A kMr-row tile as two kHalfMr-row halves (one panel: bstride is not used).
inline __attribute__((always_inline)) void micro_any(int64_t kc, const float* ap, int64_t lda,
                                                     const float* bp, float* c, int64_t ldc, int mr,
                                                     int nr, float alpha, float beta) {
    micro_half(kc, ap, lda, bp, c, ldc, mr, nr, alpha, beta);
    if (mr > kHalfMr)
        micro_half(kc, lda ? ap + kHalfMr * lda : ap + kHalfMr, lda, bp, c + kHalfMr * ldc, ldc,
                   mr - kHalfMr, nr, alpha, beta);
}

void micro_base(int64_t kc, const float* ap, int64_t lda, const float* bp, int64_t, float* c,
                int64_t ldc, int mr, int nr, float alpha, float beta) {
    micro_any(kc, ap, lda, bp, c, ldc, mr, nr, alpha, beta);
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2,fma"))) void micro_avx2(int64_t kc, const float* ap, int64_t lda,
                                                    const float* bp, int64_t, float* c, int64_t ldc,
                                                    int mr, int nr, float alpha, float beta) {
    micro_any(kc, ap, lda, bp, c, ldc, mr, nr, alpha, beta);
}
#endif

bool cpu_has(GemmIsa isa) {
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    switch (isa) {
        case GemmIsa::kBaseline:
            return true;
        case GemmIsa::kAvx2:
            return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
        case GemmIsa::kAvx512:
            return gemm_micro_avx512().fn && __builtin_cpu_supports("avx512f");
    }
    return false;
#else
    return isa == GemmIsa::kBaseline;
#endif
}

GemmMicro micro_for(GemmIsa isa) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (isa == GemmIsa::kAvx512) return gemm_micro_avx512();
    if (isa == GemmIsa::kAvx2) return GemmMicro{micro_avx2, false, GemmIsa::kAvx2};
#endif
    return GemmMicro{micro_base, false, GemmIsa::kBaseline};
}

GemmMicro best_micro() {
    for (GemmIsa isa : {GemmIsa::kAvx512, GemmIsa::kAvx2})
        if (cpu_has(isa)) return micro_for(isa);
    return micro_for(GemmIsa::kBaseline);
}

std::atomic<int>& isa_override() {  // -1: the best the CPU has
    static std::atomic<int> v{-1};
    return v;
}

// Packs rows [p0, p0+kc) x columns [j0, j0+nc) of op(B) (a dense matrix) into kNr-wide panels.
void pack_b_dense(const GemmArgs<float>& g, int64_t p0, int64_t kc, int64_t j0, int64_t nc,
                  float* dst) {
    for (int64_t jp = 0; jp < nc; jp += kNr) {
        const int64_t w = std::min<int64_t>(kNr, nc - jp);
        for (int64_t p = 0; p < kc; ++p, dst += kNr) {
            const int64_t row = p0 + p, col0 = j0 + jp;
            if (!g.trans_b) {
                const float* src = g.b + row * g.ldb + col0;
                for (int64_t j = 0; j < w; ++j) dst[j] = src[j];
            } else {
                for (int64_t j = 0; j < w; ++j) dst[j] = g.b[(col0 + j) * g.ldb + row];
            }
            for (int64_t j = w; j < kNr; ++j) dst[j] = 0.0f;
        }
    }
}

// Packs rows [i0, i0+mc) x columns [p0, p0+kc) of op(A) into kMr-tall panels, zero-padded.
void pack_a(const GemmArgs<float>& g, int64_t i0, int64_t mc, int64_t p0, int64_t kc, float* dst) {
    for (int64_t ip = 0; ip < mc; ip += kMr, dst += kMr * kc) {
        const int64_t h = std::min<int64_t>(kMr, mc - ip);
        for (int64_t i = 0; i < kMr; ++i) {  // row by row: contiguous reads when A is row-major
            const int64_t row = i0 + ip + i;
            if (i >= h) {
                for (int64_t p = 0; p < kc; ++p) dst[p * kMr + i] = 0.0f;
            } else if (!g.trans_a) {
                const float* src = g.a + row * g.lda + p0;
                for (int64_t p = 0; p < kc; ++p) dst[p * kMr + i] = src[p];
            } else {
                for (int64_t p = 0; p < kc; ++p) dst[p * kMr + i] = g.a[(p0 + p) * g.lda + row];
            }
        }
    }
}

// C = beta * C (C not read when beta == 0).
void scale_c(const GemmArgs<float>& g) {
    if (g.beta == 1.0f) return;
    for (int64_t i = 0; i < g.m; ++i) {
        float* row = g.c + i * g.ldc;
        if (g.beta == 0.0f)
            std::fill(row, row + g.n, 0.0f);
        else
            for (int64_t j = 0; j < g.n; ++j) row[j] *= g.beta;
    }
}

// The whole of op(A), packed once: k-slice s (starting at p0) holds mpad x kc floats at
// mpad * p0, row panel ip of it at ip * kc. A row-major A (not transposed) is not packed: the
// micro-kernel reads its rows in place (direct, lda = the row stride).
struct PackedA {
    AlignedArray<float> data;  // not zero-filled: every element is packed
    int64_t mpad = 0;
    const float* direct = nullptr;
    int64_t lda = 0;  // 0: packed
    const float* panel(int64_t p0, int64_t kc, int64_t row) const {
        return direct ? direct + row * lda + p0 : data.get() + mpad * p0 + row * kc;
    }
};

PackedA pack_all_a(const GemmArgs<float>& g, ThreadPool* pool) {
    PackedA a;
    if (!g.trans_a && g.lda > 0) {
        a.direct = g.a, a.lda = g.lda;
        return a;
    }
    a.mpad = (g.m + kMr - 1) / kMr * kMr;
    a.data = aligned_array<float>(static_cast<size_t>(a.mpad * g.k));
    const int64_t slices = (g.k + kKc - 1) / kKc, mblocks = (g.m + kMc - 1) / kMc;
    run_parallel(g.m * g.k > (1 << 16) ? pool : nullptr, slices * mblocks,
                 [&](int64_t b, int64_t e) {
                     for (int64_t t = b; t < e; ++t) {
                         const int64_t p0 = (t / mblocks) * kKc, i0 = (t % mblocks) * kMc;
                         const int64_t kc = std::min(kKc, g.k - p0);
                         pack_a(g, i0, std::min(kMc, g.m - i0), p0, kc,
                                a.data.get() + a.mpad * p0 + i0 * kc);
                     }
                 });
    return a;
}

// C rows [i0, i1) x columns [j0, j0+nc) for k-slice [p0, p0+kc), B block packed in bpack. The
// epilogue runs on each tile after the last k-slice (this file is built without FMA, so its
// arithmetic is the plain kernels').
// The epilogue on the mr x nr tile of C at c (row i0 first), one panel at a time.
void tile_epilogue(const GemmEpilogue& ep, int64_t i0, float* c, int64_t ldc, int mr, int nr) {
    for (int q = 0; q < nr; q += kNr, c += kNr) {
        const int w = std::min(kNr, nr - q);
        if (w == kNr)
            tile_fn()(ep, i0, c, ldc, mr);
        else
            for (int i = 0; i < mr; ++i) apply_row<0>(ep, i0 + i, c + i * ldc, w);
    }
}

void run_block(const GemmArgs<float>& g, const GemmMicro& micro, const PackedA& a,
               const float* bpack, int64_t p0, int64_t kc, int64_t i0, int64_t i1, int64_t j0,
               int64_t nc) {
    const float beta = p0 == 0 ? g.beta : 1.0f;
    const GemmEpilogue* ep = p0 + kc == g.k ? g.epilogue : nullptr;
    const int64_t step = micro.wide ? 2 * kNr : kNr;
    for (int64_t ip = i0; ip < i1; ip += kMr) {
        const int mr = static_cast<int>(std::min<int64_t>(kMr, g.m - ip));
        for (int64_t jp = 0; jp < nc; jp += step) {
            const float* bp = bpack + jp * kc;
            const int nr = static_cast<int>(std::min<int64_t>(step, nc - jp));
            float* c = g.c + ip * g.ldc + j0 + jp;
            micro.fn(kc, a.panel(p0, kc, ip), a.lda, bp, kNr * kc, c, g.ldc, mr, nr, g.alpha, beta);
            if (ep) tile_epilogue(*ep, ip, c, g.ldc, mr, nr);
        }
    }
}

// Column blocks split over the pool: each task packs its own B blocks and runs every row.
void gemm_by_columns(const GemmArgs<float>& g, const GemmMicro& micro, const PackedA& a,
                     const GemmPackB& pack_b, int64_t nc, ThreadPool* pool) {
    const int64_t nblocks = (g.n + nc - 1) / nc;
    const size_t bsize = static_cast<size_t>((nc + kNr - 1) / kNr * kNr * std::min(kKc, g.k));
    run_parallel(pool, nblocks, [&](int64_t b, int64_t e) {
        AlignedArray<float> bpack = aligned_array<float>(bsize);
        for (int64_t jb = b; jb < e; ++jb) {
            const int64_t j0 = jb * nc, w = std::min(nc, g.n - j0);
            for (int64_t p0 = 0; p0 < g.k; p0 += kKc) {
                const int64_t kc = std::min(kKc, g.k - p0);
                pack_b(p0, kc, j0, w, bpack.get());
                run_block(g, micro, a, bpack.get(), p0, kc, 0, g.m, j0, w);
            }
        }
    });
}

// Largest packed op(B) gemm_by_rows holds at once, in floats (16 MiB).
constexpr int64_t kMaxSharedB = int64_t{4} << 20;

// For few columns: the whole of op(B) is packed once, split over the pool (k-slice s at
// npad * p0, its panel jp at jp * kc * kNr within), then row panels are split into ranges
// for the threads, all reading the shared packed B.
void gemm_by_rows(const GemmArgs<float>& g, const GemmMicro& micro, const PackedA& a,
                  const GemmPackB& pack_b, int threads, ThreadPool* pool) {
    const int64_t npad = (g.n + kNr - 1) / kNr * kNr, col_panels = npad / kNr;
    const int64_t slices = (g.k + kKc - 1) / kKc;
    AlignedArray<float> bpack = aligned_array<float>(static_cast<size_t>(npad * g.k));
    run_parallel(pool, slices * threads, [&](int64_t b, int64_t e) {
        for (int64_t t = b; t < e; ++t) {
            const int64_t p0 = (t / threads) * kKc, kc = std::min(kKc, g.k - p0),
                          part = t % threads;
            const int64_t jp0 = col_panels * part / threads,
                          jp1 = col_panels * (part + 1) / threads;
            if (jp1 > jp0)
                pack_b(p0, kc, jp0 * kNr, std::min(g.n, jp1 * kNr) - jp0 * kNr,
                       bpack.get() + npad * p0 + jp0 * kNr * kc);
        }
    });
    // Several row ranges per thread, claimed as threads come free (a descheduled thread's
    // share goes to the others); they read the same packed B, so the split costs nothing.
    const int64_t panels = (g.m + kMr - 1) / kMr, tasks = std::min<int64_t>(panels, 4 * threads);
    run_parallel(pool, tasks, [&](int64_t b, int64_t e) {
        const int64_t i0 = panels * b / tasks * kMr, i1 = std::min(g.m, panels * e / tasks * kMr);
        for (int64_t p0 = 0; p0 < g.k && i0 < i1; p0 += kKc)
            run_block(g, micro, a, bpack.get() + npad * p0, p0, std::min(kKc, g.k - p0), i0, i1, 0,
                      g.n);
    });
}

// Eight lane sums of a dot product (lane u: the terms p = u mod 8 below k / 8 * 8, then the
// tail in lane 0, in order), reduced in pairs: the m == 1 sum of a row of op(B).
inline float reduce_lanes(float* s, const float* av, const float* row, int64_t full, int64_t k) {
    for (int64_t p = full; p < k; ++p) s[0] += av[p] * row[p];
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

void dot_rows_base(const float* av, const GemmArgs<float>& g, int64_t b, int64_t e, float* acc) {
    const int64_t full = g.k / 8 * 8;
    for (int64_t j = b; j < e; ++j) {
        const float* row = g.b + j * g.ldb;
        float s[8] = {};
        for (int64_t p = 0; p < full; p += 8)
            for (int u = 0; u < 8; ++u) s[u] += av[p + u] * row[p + u];
        acc[j - b] = reduce_lanes(s, av, row, full, g.k);
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
// dot_rows_base's sums (AVX2 without FMA: a multiply, then an add, per lane), R rows at a time:
// R streams of B in flight per thread instead of one (B is read once, from memory: alexnet's
// 151 MB fc6 ran at 17-19 GB/s one row at a time, 27-33 GB/s eight at a time).
template <int R>
__attribute__((target("avx2"))) void dot_rows_avx2(const float* av, const GemmArgs<float>& g,
                                                   int64_t b, int64_t e, float* acc) {
    const int64_t full = g.k / 8 * 8;
    int64_t j = b;
    for (; j + R <= e; j += R) {
        const float* r[R];
        __m256 s[R];
        for (int q = 0; q < R; ++q) r[q] = g.b + (j + q) * g.ldb, s[q] = _mm256_setzero_ps();
        for (int64_t p = 0; p < full; p += 8) {
            const __m256 x = _mm256_loadu_ps(av + p);
            for (int q = 0; q < R; ++q)
                s[q] = _mm256_add_ps(s[q], _mm256_mul_ps(x, _mm256_loadu_ps(r[q] + p)));
        }
        for (int q = 0; q < R; ++q) {
            alignas(32) float t[8];
            _mm256_store_ps(t, s[q]);
            acc[j + q - b] = reduce_lanes(t, av, r[q], full, g.k);
        }
    }
    if (j < e) dot_rows_base(av, g, j, e, acc + (j - b));
}
#endif

std::atomic<bool> g_gemv_row_blocks{true};  // set_gemv_row_blocks

// y[j] = alpha * sum_p a[p] * op(B)[p, j] + beta * y[j] for one row of A (a matrix-vector
// product: no packing, op(B) streamed once).
void gemv(const GemmArgs<float>& g, ThreadPool* pool) {
    std::vector<float> av(static_cast<size_t>(g.k));
    for (int64_t p = 0; p < g.k; ++p) av[p] = g.trans_a ? g.a[p * g.lda] : g.a[p];
    const int64_t grain = std::max<int64_t>(16, (1 << 15) / std::max<int64_t>(g.k, 1));
#if defined(__x86_64__) && defined(__GNUC__)
    static const bool avx2 = cpu_has(GemmIsa::kAvx2);
    const bool blocks = avx2 && g_gemv_row_blocks.load(std::memory_order_relaxed);
#else
    const bool blocks = false;
#endif
    auto body = [&](int64_t b, int64_t e) {
        std::vector<float> acc(static_cast<size_t>(e - b), 0.0f);
        if (g.trans_b) {
#if defined(__x86_64__) && defined(__GNUC__)
            if (blocks)
                dot_rows_avx2<8>(av.data(), g, b, e, acc.data());
            else
#endif
                dot_rows_base(av.data(), g, b, e, acc.data());
        } else {
            for (int64_t p = 0; p < g.k; ++p) {
                const float* row = g.b + p * g.ldb;
                const float x = av[p];
                for (int64_t j = b; j < e; ++j) acc[j - b] += x * row[j];
            }
        }
        for (int64_t j = b; j < e; ++j)
            g.c[j] = g.beta == 0.0f ? g.alpha * acc[j - b] : g.alpha * acc[j - b] + g.beta * g.c[j];
    };
    const int threads = pool ? pool->num_threads() : 1;
    if (threads > 1 && g.n * g.k > (1 << 16))  // B row-major: one contiguous range per thread
        pool->parallel_for(g.n, g.trans_b ? grain : (g.n + threads - 1) / threads, body);
    else
        body(0, g.n);
}

GemmMicro micro_fn() {
    static const GemmMicro best = best_micro();
    const int forced = isa_override().load(std::memory_order_relaxed);
    return forced < 0 ? best : micro_for(static_cast<GemmIsa>(forced));
}

}  // namespace

void gemm_fast_packed(const GemmArgs<float>& g, const GemmPackB& pack_b, ThreadPool* pool) {
    if (g.m <= 0 || g.n <= 0) return;
    if (g.k <= 0 || g.alpha == 0.0f) {
        scale_c(g);
        if (g.epilogue)
            for (int64_t i = 0; i < g.m; ++i) g.epilogue->apply(i, g.c + i * g.ldc, g.n);
        return;
    }
    const int threads = pool ? pool->num_threads() : 1;
    const PackedA a = pack_all_a(g, pool);
    const GemmMicro micro = micro_fn();
    // Rows split when there are too few column panels to share evenly.
    if (threads > 1 && g.n < threads * 8 * kNr && g.m > kMr * threads &&
        (g.n + kNr) * g.k <= kMaxSharedB)
        return gemm_by_rows(g, micro, a, pack_b, threads, pool);
    const int64_t min_blocks = (g.n + kNc - 1) / kNc;
    // Column blocks: a multiple of the thread count, as even as kNr-wide panels allow.
    int64_t blocks = std::max<int64_t>(min_blocks, 1);
    blocks = (blocks + threads - 1) / threads * threads;
    const int64_t nc = std::max<int64_t>(kNr, ((g.n + blocks - 1) / blocks + kNr - 1) / kNr * kNr);
    gemm_by_columns(g, micro, a, pack_b, nc, threads > 1 ? pool : nullptr);
}

bool gemm_isa_available(GemmIsa isa) {
    return cpu_has(isa);
}

GemmIsa gemm_force_isa(GemmIsa isa) {
    if (!cpu_has(isa)) isa = GemmIsa::kBaseline;
    const int old = isa_override().exchange(static_cast<int>(isa));
    return old < 0 ? best_micro().isa : static_cast<GemmIsa>(old);
}

GemmIsa gemm_current_isa() {
    return micro_fn().isa;
}

void gemm_reset_isa() {
    isa_override().store(-1);
}

namespace {

// Row-major A and B with up to 1024 rows of A read in place by gemm_direct: packing B costs
// about a fifth of the multiply-adds at m = 128 (single thread, 128 x 3072 x 768: 12.1 -> 7.3
// ms; 1024 x 256 x 256 even; 2048 x 512 x 512 5 % slower, so taller A stays packed).
bool direct_pays(const GemmArgs<float>& g) {
    return !g.trans_a && !g.trans_b && g.m <= 1024 && g.k > 0 && gemm_direct_available();
}

}  // namespace

bool set_gemv_row_blocks(bool on) {
    return g_gemv_row_blocks.exchange(on);
}

void gemm_fast(const GemmArgs<float>& g, ThreadPool* pool) {
    if (g.m == 1 && g.n > 0 && g.k > 0 && g.alpha != 0.0f) {
        gemv(g, pool);
        if (g.epilogue) g.epilogue->apply(0, g.c, g.n);
        return;
    }
    if (g.m > 0 && g.n > 0 && g.alpha != 0.0f && direct_pays(g)) return gemm_direct_dense(g, pool);
    gemm_fast_packed(
        g,
        [&g](int64_t p0, int64_t kc, int64_t j0, int64_t nc, float* dst) {
            pack_b_dense(g, p0, kc, j0, nc, dst);
        },
        pool);
}

}  // namespace pg::ops
