// gemm_direct (gemm_direct.h) with AVX-512F: C is cut into column tiles of 32 (two zmm
// registers per row) and row tiles of 12, 8 or 4; each tile accumulates over the whole k axis
// in registers (measured faster than k-slices of 128 to 512 on the convolution shapes). B is
// loaded row by row from b + b_off[p] with masked loads (nothing past column n is read), A is
// broadcast from its rows in place. A column
// tile's lanes go to C in segments (one per padded-width row it crosses), each a masked load /
// store at its own base. The file is built with -ffp-contract=off: alpha, beta and the epilogue
// are separate multiplies and adds, as in the plain kernels.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "base/aligned.h"
#include "base/mapped_buffer.h"
#include "base/thread_pool.h"
#include "ops/gemm_direct.h"
#include "ops/gemm_epilogue_avx512.h"
#include "ops/kernel.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define PG_DIRECT_AVX512 1
#endif

namespace pg::ops {

namespace {
std::atomic<bool> g_static{true};
std::atomic<bool> g_row_bases{true};
std::atomic<bool> g_b_strips{true};
std::atomic<bool> g_a_ahead{true};
}  // namespace

bool set_gemm_direct_a_ahead(bool on) {
    return g_a_ahead.exchange(on);
}

bool set_gemm_direct_static(bool on) {
    return g_static.exchange(on);
}

bool set_gemm_direct_row_bases(bool on) {
    return g_row_bases.exchange(on);
}

bool set_gemm_direct_b_strips(bool on) {
    return g_b_strips.exchange(on);
}

#ifdef PG_DIRECT_AVX512
namespace {

constexpr int kTileN = 32, kTileM = 12, kMaxSegs = 8;
constexpr int64_t kAhead = 8;  // B rows prefetched this many rows ahead

#define PG_AVX512 __attribute__((target("avx512f")))

// Lanes [l0, l1) of a column tile go to C columns j0 + shift + lane.
struct Seg {
    int l0, l1;
    int64_t shift;
};

int tile_segments(const DirectGemm& g, int64_t j0, int nt, Seg* s) {
    if (!g.row_pitch) {
        s[0] = {0, nt, 0};
        return 1;
    }
    int n = 0;
    for (int64_t r = j0 / g.row_pitch; r * g.row_pitch < j0 + nt && n < kMaxSegs; ++r) {
        const int64_t lo = std::max(r * g.row_pitch, j0) - j0;
        const int64_t hi = std::min(r * g.row_pitch + g.row_len, j0 + nt) - j0;
        if (hi > lo)
            s[n++] = {static_cast<int>(lo), static_cast<int>(hi), r * (g.out_pitch - g.row_pitch)};
    }
    return n;
}

// Bits [l0, l1) of a 32-lane tile, for panel q (lanes 16q .. 16q + 15).
inline __mmask16 panel_mask(int l0, int l1, int q) {
    const uint64_t bits = ((uint64_t{1} << l1) - 1) & ~((uint64_t{1} << l0) - 1);
    return static_cast<__mmask16>(bits >> (16 * q));
}

struct RowEnd {  // what happens to a finished row of the tile
    const Seg* segs;
    int nseg;
    float alpha, beta;
    const GemmEpilogue* ep;            // nullptr: none
    __mmask16 mask[kMaxSegs][2] = {};  // segment s's lanes in panel q (computed once per tile)
};

// Loads / stores of one segment: unmasked when it covers the whole panel (a masked store costs
// more on some CPUs, and whole panels are the common case).
PG_AVX512 inline __m512 seg_load(__m512 old, __mmask16 m, const float* p) {
    return m == 0xFFFF ? _mm512_loadu_ps(p) : _mm512_mask_loadu_ps(old, m, p);
}
PG_AVX512 inline void seg_store(float* p, __mmask16 m, __m512 v) {
    if (m == 0xFFFF)
        _mm512_storeu_ps(p, v);
    else if (m)
        _mm512_mask_storeu_ps(p, m, v);
}

// alpha * acc (+ beta * C), the epilogue, and the masked stores of one row panel.
PG_AVX512 inline __attribute__((always_inline)) void finish_panel(__m512 v, float* row, int q,
                                                                  const RowEnd& e, int64_t i) {
    if (e.alpha != 1.0f) v = _mm512_mul_ps(_mm512_set1_ps(e.alpha), v);
    if (e.beta != 0.0f) {
        __m512 old = _mm512_setzero_ps();
        for (int s = 0; s < e.nseg; ++s)
            old = seg_load(old, e.mask[s][q], row + e.segs[s].shift + 16 * q);
        v = e.beta == 1.0f ? _mm512_add_ps(old, v)
                           : _mm512_add_ps(_mm512_mul_ps(_mm512_set1_ps(e.beta), old), v);
    }
    if (e.ep) {
        const GemmEpilogue& ep = *e.ep;
        if (ep.col_bias) {  // dense C (one segment): lanes are columns
            const float* cb = ep.col_bias + (row - ep.col_origin) % ep.col_ldc + 16 * q;
            v = _mm512_add_ps(v, seg_load(_mm512_setzero_ps(), e.mask[0][q], cb + e.segs[0].shift));
        }
        v = epilogue_rows_zmm(v, ep, i);
        if (ep.res) {
            const float* r = ep.res + (row - ep.res_origin);
            __m512 add = _mm512_setzero_ps();
            for (int s = 0; s < e.nseg; ++s)
                add = seg_load(add, e.mask[s][q], r + e.segs[s].shift + 16 * q);
            v = _mm512_add_ps(v, add);
        }
        v = epilogue_clamp_zmm(v, ep);
    }
    for (int s = 0; s < e.nseg; ++s) seg_store(row + e.segs[s].shift + 16 * q, e.mask[s][q], v);
}

// Row p of op(B) for a tile's 16 or 32 columns (b1 = b0 when NP == 1), the row kAhead rows on
// prefetched; kCopy: also stored at copy + p * kTileN (a column tile's strip, copies_strip).
// Whole tiles load without masks (a masked load costs more on some CPUs).
template <int NP, bool kFull, bool kCopy>
PG_AVX512 inline __attribute__((always_inline)) void load_b_row(const float* b, const int64_t* off,
                                                                int64_t p, int64_t kc,
                                                                __mmask16 mb0, __mmask16 mb1,
                                                                __m512* b0, __m512* b1,
                                                                float* copy) {
    const float* bp = b + off[p];
    const float* ahead = b + off[p + kAhead < kc ? p + kAhead : p];
    _mm_prefetch(reinterpret_cast<const char*>(ahead), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(ahead + 31), _MM_HINT_T0);
    *b0 = kFull ? _mm512_loadu_ps(bp) : _mm512_maskz_loadu_ps(mb0, bp);
    *b1 = NP == 1 ? *b0 : kFull ? _mm512_loadu_ps(bp + 16) : _mm512_maskz_loadu_ps(mb1, bp + 16);
    if constexpr (kCopy) {
        _mm512_storeu_ps(copy + p * kTileN, *b0);
        if constexpr (NP == 2) _mm512_storeu_ps(copy + p * kTileN + 16, *b1);
    }
}

// The next row tile's rows of A (nullptr: none), fetched into L2 while this tile runs: every 16
// steps p, the line at column p of each of its rows. A Conv's weights come cold from memory once
// a run, and a tile's 12 rows are 12 streams the hardware fetches ahead poorly: ShuffleNet's
// 544-channel grouped 1x1 Convs took 0.105-0.113 ms in the model against 0.070-0.074 in its
// last stage alone, where the weights stayed in the caches. Only the first column tile fetches
// (the others find A in L2; fetching there too took ShuffleNet 1.008 on one thread). `kernel_ab
// --switch a_ahead`: those Convs 0.70-0.72, ShuffleNet 0.945 (one thread) and 0.969-0.982 (two),
// the other bench models 0.983-1.001.
struct NextA {
    const float* a = nullptr;
    int64_t lda = 0;
    int rows = 0;
};

PG_AVX512 inline __attribute__((always_inline)) void fetch_next_a(const NextA& n, int64_t p) {
    if (!n.a || (p & 15) != 0) return;
    for (int i = 0; i < n.rows; ++i)
        _mm_prefetch(reinterpret_cast<const char*>(n.a + i * n.lda + p), _MM_HINT_T1);
}

// The accumulators as named variables, one pair per row (GCC keeps an array of them in
// memory across the loop, storing every update).
#define PG_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#define PG_DECL(i)                                                       \
    __m512 c##i##a = _mm512_setzero_ps(), c##i##b = _mm512_setzero_ps(); \
    const float* r##i = a + std::min(i, mr - 1) * lda;
#define PG_STEP(i)                                                         \
    if constexpr (MR > i) {                                                \
        const __m512 av = _mm512_set1_ps(r##i[p]);                         \
        c##i##a = _mm512_fmadd_ps(av, b0, c##i##a);                        \
        if constexpr (NP == 2) c##i##b = _mm512_fmadd_ps(av, b1, c##i##b); \
    }
#define PG_FINISH(i)                                                                 \
    if constexpr (MR > i) {                                                          \
        if (i < mr) {                                                                \
            finish_panel(c##i##a, c + i * ldc, 0, e, i0 + i);                        \
            if constexpr (NP == 2) finish_panel(c##i##b, c + i * ldc, 1, e, i0 + i); \
        }                                                                            \
    }

// C rows [0, mr) of the tile (c: row 0 at the tile's first column).
template <int MR, int NP, bool kFull, bool kCopy>
PG_AVX512 __attribute__((noinline)) void tile(int64_t kc, const float* a, int64_t lda,
                                              const float* b, const int64_t* off, __mmask16 mb0,
                                              __mmask16 mb1, float* c, int64_t ldc, int mr,
                                              const RowEnd& e, int64_t i0, float* copy,
                                              const NextA& next) {
    PG_ROWS(PG_DECL)
    for (int64_t p = 0; p < kc; ++p) {
        __m512 b0, b1;
        fetch_next_a(next, p);
        load_b_row<NP, kFull, kCopy>(b, off, p, kc, mb0, mb1, &b0, &b1, copy);
        PG_ROWS(PG_STEP)
    }
    PG_ROWS(PG_FINISH)
}

// tile<12, NP, kFull> with all 12 rows of A present: each row's broadcast addresses one of four
// row pointers (rows 0, 3, 6, 9) plus lda bytes times 1, 2, 4 or 8, so that 5 registers hold
// what 12 row pointers held (GCC spilled three of them into vector registers, and moving them
// back took a multiply-add port every step). lda_b is hidden from the optimizer in the loop so
// that it does not turn the 12 addresses back into 12 pointers.
#define PG_DECL12(i) __m512 c##i##a = _mm512_setzero_ps(), c##i##b = _mm512_setzero_ps();
#define PG_STEP12(i, base, scale)                                                                  \
    {                                                                                              \
        const __m512 av = _mm512_set1_ps(                                                          \
            *reinterpret_cast<const float*>(reinterpret_cast<const char*>(base) + (scale)*lda_b)); \
        c##i##a = _mm512_fmadd_ps(av, b0, c##i##a);                                                \
        if constexpr (NP == 2) c##i##b = _mm512_fmadd_ps(av, b1, c##i##b);                         \
    }
template <int NP, bool kFull, bool kCopy>
PG_AVX512 __attribute__((noinline)) void tile12(int64_t kc, const float* a, int64_t lda,
                                                const float* b, const int64_t* off, __mmask16 mb0,
                                                __mmask16 mb1, float* c, int64_t ldc,
                                                const RowEnd& e, int64_t i0, float* copy,
                                                const NextA& next) {
    constexpr int MR = 12;
    const int mr = 12;
    PG_ROWS(PG_DECL12)
    const float *q0 = a, *q3 = a + 3 * lda, *q6 = a + 6 * lda, *q9 = a + 9 * lda;
    int64_t lda_b = lda * static_cast<int64_t>(sizeof(float));
    for (int64_t p = 0; p < kc; ++p, ++q0, ++q3, ++q6, ++q9) {
        asm("" : "+r"(lda_b));
        __m512 b0, b1;
        fetch_next_a(next, p);
        load_b_row<NP, kFull, kCopy>(b, off, p, kc, mb0, mb1, &b0, &b1, copy);
        PG_STEP12(0, q0, 0)
        PG_STEP12(1, q0, 1)
        PG_STEP12(2, q0, 2)
        PG_STEP12(3, q3, 0) PG_STEP12(4, q0, 4) PG_STEP12(5, q3, 2) PG_STEP12(6, q6, 0)
            PG_STEP12(7, q3, 4) PG_STEP12(8, q0, 8) PG_STEP12(9, q9, 0) PG_STEP12(10, q6, 4)
                PG_STEP12(11, q3, 8)
    }
    PG_ROWS(PG_FINISH)
}
#undef PG_DECL12
#undef PG_STEP12

#undef PG_ROWS
#undef PG_DECL
#undef PG_STEP
#undef PG_FINISH

template <int NP, bool kFull, bool kCopy>
PG_AVX512 void tile_rows(int64_t kc, const float* a, int64_t lda, const float* b,
                         const int64_t* off, __mmask16 mb0, __mmask16 mb1, float* c, int64_t ldc,
                         int mr, const RowEnd& e, int64_t i0, float* copy, const NextA& next) {
    if (mr == 12 && g_row_bases.load(std::memory_order_relaxed))
        return tile12<NP, kFull, kCopy>(kc, a, lda, b, off, mb0, mb1, c, ldc, e, i0, copy, next);
    if (mr > 8)
        return tile<12, NP, kFull, kCopy>(kc, a, lda, b, off, mb0, mb1, c, ldc, mr, e, i0, copy,
                                          next);
    if (mr > 4)
        return tile<8, NP, kFull, kCopy>(kc, a, lda, b, off, mb0, mb1, c, ldc, mr, e, i0, copy,
                                         next);
    tile<4, NP, kFull, kCopy>(kc, a, lda, b, off, mb0, mb1, c, ldc, mr, e, i0, copy, next);
}

// One row tile of a column tile of nt columns: tile_rows for its width.
template <bool kCopy>
PG_AVX512 void row_tile(int nt, int64_t kc, const float* a, int64_t lda, const float* b,
                        const int64_t* off, __mmask16 mb0, __mmask16 mb1, float* c, int64_t ldc,
                        int mr, const RowEnd& e, int64_t i0, float* copy, const NextA& next) {
    if (nt == 32)
        tile_rows<2, true, kCopy>(kc, a, lda, b, off, mb0, mb1, c, ldc, mr, e, i0, copy, next);
    else if (nt > 16)
        tile_rows<2, false, kCopy>(kc, a, lda, b, off, mb0, mb1, c, ldc, mr, e, i0, copy, next);
    else if (nt == 16)
        tile_rows<1, true, kCopy>(kc, a, lda, b, off, mb0, mb1, c, ldc, mr, e, i0, copy, next);
    else
        tile_rows<1, false, kCopy>(kc, a, lda, b, off, mb0, mb1, c, ldc, mr, e, i0, copy, next);
}

// The row tile after tile t of a task ending at t1: its first row and rows (m = 12 q + 4 ends
// with two tiles of 8 rows, not 12 + 4: a 4-row tile pays for its loads with a third of the
// multiply-adds).
void tile_rows_at(const DirectGemm& g, int64_t t, int64_t* ip, int* mr) {
    *ip = t * kTileM;
    *mr = static_cast<int>(std::min<int64_t>(kTileM, g.m - *ip));
    if (g.m % kTileM == 4 && g.m > kTileM && t >= (g.m - 16) / kTileM)
        *ip = t == (g.m - 16) / kTileM ? g.m - 16 : g.m - 8, *mr = 8;
}

// Whether a column tile's first row tile copies the rows of B it reads into a contiguous strip,
// which the other row tiles then read (set_gemm_direct_b_strips): when B's rows are a multiple
// of 1 KiB apart, a strip's lines fall into 2 to 8 of the L1 cache's 64 sets and evict each
// other between row tiles. With the strip, 128 x 256 x 1024 ran 0.20 against 0.25 ms and
// 128 x 1024 x 256 0.227 against 0.252 (B in cache); in the transformer encoder (`kernel_ab
// --switch bstrips --reps 200`) its feed-forward MatMuls 0.89-0.96 of the time, the model
// 0.96-0.97 (docs/performance.md, session 27). Taken where two row tiles or more read the strip
// and k >= 128.
bool copies_strip(const DirectGemm& g, int64_t row_tiles) {
    if (!g_b_strips.load(std::memory_order_relaxed) || row_tiles < 2 || g.k < 128) return false;
    const int64_t step = (g.b_off[1] - g.b_off[0]) * static_cast<int64_t>(sizeof(float));
    return step % 1024 == 0;
}

// The calling thread's strip: kc rows of kTileN floats, the row offsets p * kTileN beside.
struct Strip {
    float* b;
    const int64_t* off;
};
Strip thread_strip(int64_t kc) {
    thread_local KeptArray<float> buf;
    thread_local std::vector<int64_t> off;
    if (static_cast<int64_t>(off.size()) < kc) {
        off.resize(static_cast<size_t>(kc));
        for (int64_t p = 0; p < kc; ++p) off[static_cast<size_t>(p)] = p * kTileN;
    }
    return {buf.at_least(static_cast<size_t>(kc * kTileN)), off.data()};
}

// Column tile jt, row tiles [t0, t1).
PG_AVX512 void run_task(const DirectGemm& g, int64_t jt, int64_t t0, int64_t t1) {
    const int64_t j0 = jt * kTileN;
    const int nt = static_cast<int>(std::min<int64_t>(kTileN, g.n - j0));
    const float* b = g.b + j0;
    const int64_t* b_off = g.b_off;
    const Strip strip = copies_strip(g, t1 - t0) ? thread_strip(g.k) : Strip{nullptr, nullptr};
    Seg segs[kMaxSegs];
    const int nseg = tile_segments(g, j0, nt, segs);
    const __mmask16 mb0 = panel_mask(0, nt, 0), mb1 = panel_mask(0, nt, 1);
    RowEnd e{segs, nseg, g.alpha, g.beta, g.epilogue};
    for (int s = 0; s < nseg; ++s)
        for (int q = 0; q < 2; ++q) e.mask[s][q] = panel_mask(segs[s].l0, segs[s].l1, q);
    const int64_t kc = std::max<int64_t>(0, g.k);
    const bool ahead = jt == 0 && g_a_ahead.load(std::memory_order_relaxed);
    for (int64_t t = t0; t < t1; ++t) {
        int64_t ip = 0, np = 0;
        int mr = 0, nr = 0;
        tile_rows_at(g, t, &ip, &mr);
        NextA next;
        if (ahead && t + 1 < t1) {
            tile_rows_at(g, t + 1, &np, &nr);
            next = {g.a + np * g.lda, g.lda, nr};
        }
        const float* a = g.a + ip * g.lda;
        float* c = g.c + ip * g.ldc + j0;
        if (!strip.b) {
            row_tile<false>(nt, kc, a, g.lda, b, b_off, mb0, mb1, c, g.ldc, mr, e, ip, nullptr,
                            next);
        } else if (t == t0) {  // reads B in place and fills the strip
            row_tile<true>(nt, kc, a, g.lda, b, b_off, mb0, mb1, c, g.ldc, mr, e, ip, strip.b,
                           next);
        } else {
            row_tile<false>(nt, kc, a, g.lda, strip.b, strip.off, mb0, mb1, c, g.ldc, mr, e, ip,
                            nullptr, next);
        }
    }
}

}  // namespace

bool gemm_direct_available() {
    return gemm_current_isa() == GemmIsa::kAvx512;  // only ever AVX-512 where the CPU has it
}

void gemm_direct_dense(const GemmArgs<float>& g, ThreadPool* pool) {
    std::vector<int64_t> off(static_cast<size_t>(std::max<int64_t>(g.k, 0)));
    for (int64_t p = 0; p < g.k; ++p) off[static_cast<size_t>(p)] = p * g.ldb;
    DirectGemm d;
    d.m = g.m, d.n = g.n, d.k = g.k, d.a = g.a, d.lda = g.lda, d.b = g.b, d.b_off = off.data();
    d.c = g.c, d.ldc = g.ldc, d.alpha = g.alpha, d.beta = g.beta, d.epilogue = g.epilogue;
    gemm_direct(d, pool);
}

void gemm_direct(const DirectGemm& g0, ThreadPool* pool) {
    if (g0.m <= 0 || g0.n <= 0) return;
    if (gemm_rowvec_pays(g0)) return gemm_rowvec(g0, pool);
    if (gemm_dot_pays(g0)) return gemm_dot(g0, pool);
    DirectGemm g = g0;
    // Rows of A 4 KiB apart share the L1 cache sets, and 12 of them (one tile) evict each other:
    // such an A is copied with a padded stride first (measured -8 % on a 1x1 1024 -> 256 Conv at
    // 14x14 with the copy included).
    AlignedArray<float> apad;
    if (g.lda % 1024 == 0 && g.m > 8 && g.k >= 256 && g.n >= 64) {
        const int64_t lda = g.k + 16;
        apad = aligned_array<float>(static_cast<size_t>(g.m * lda));
        run_parallel(pool, g.m, [&](int64_t b, int64_t e) {
            for (int64_t i = b; i < e; ++i)
                std::copy(g0.a + i * g0.lda, g0.a + i * g0.lda + g.k, apad.get() + i * lda);
        });
        g.a = apad.get(), g.lda = lda;
    }
    if (g.row_pitch && (g.row_pitch < 8 || g.row_len > g.row_pitch || g.row_len > g.out_pitch))
        fail("gemm_direct: the column map needs 8 <= row_pitch and row_len <= both pitches");
    const int64_t col_tiles = (g.n + kTileN - 1) / kTileN, row_tiles = (g.m + kTileM - 1) / kTileM;
    const int threads = pool ? pool->num_threads() : 1;
    // Enough tasks for the pool to balance: whole columns when there are many column tiles,
    // else each column tile's rows in blocks.
    const int64_t want = threads > 1 ? 4 * threads : 1;
    const int64_t row_blocks =
        col_tiles >= want ? 1 : std::min(row_tiles, (want + col_tiles - 1) / col_tiles);
    auto body = [&](int64_t b, int64_t e) {
        for (int64_t t = b; t < e; ++t) {
            const int64_t jt = t / row_blocks, rb = t % row_blocks;
            run_task(g, jt, row_tiles * rb / row_blocks, row_tiles * (rb + 1) / row_blocks);
        }
    };
    const int64_t tasks = col_tiles * row_blocks;
    if (threads > 1 && tasks > 1 && row_blocks == 1 && g_static.load(std::memory_order_relaxed)) {
        // Whole columns: one contiguous range of column tiles per pool thread (run_parts), the
        // same range for the same shape every time, so that a chain's next product finds most
        // of its columns (a 1x1 Conv's pixels) where this one left them, in the cache of the
        // core that wrote them.
        run_parts(pool, col_tiles, body);
        return;
    }
    if (threads > 1 && tasks > 1)
        pool->parallel_for(tasks, 1, body);
    else
        body(0, tasks);
}

#else

bool gemm_direct_available() {
    return false;
}

void gemm_direct(const DirectGemm&, ThreadPool*) {
    fail("gemm_direct: not built for this CPU");
}

void gemm_direct_dense(const GemmArgs<float>&, ThreadPool*) {
    fail("gemm_direct: not built for this CPU");
}

#endif

}  // namespace pg::ops
