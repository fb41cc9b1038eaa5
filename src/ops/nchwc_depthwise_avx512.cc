// depthwise_nchwc (nchwc.h) with AVX-512F: one vector holds 16 channels of a pixel, so each
// output pixel of a block is a chain of fused multiply-adds over the window's taps inside the
// input (kh, kw ascending from zero; the padding's taps skipped), its weights 16 channels per
// tap (gathered once per block), then the epilogue with GemmEpilogue::apply's operations (its
// vectors loaded once per block: BlockEpilogueZmm). Work:
// (image, block, output row) units, one contiguous range per thread (run_parts: a thread reads
// the blocks it wrote in a Conv split by groups; MobileNet 0.961-0.968 against claimed chunks);
// after a Conv split by pixels, each thread a band of rows, block after block (UnitOrder;
// MobileNet 0.986-0.990, ShuffleNet 1.003-1.004, kernel_ab dw_bands, with the stores streamed).
// The outputs are streamed around the caches (MOVNTPS) when y is 64-byte aligned: their lines
// were mostly last written by the other core (the buffer's previous value), and a store through
// the caches first fetched each one from there; the depthwise steps of MobileNet ran 0.57-0.70
// of their time (the 512-channel ones at 14 x 14 were slower on two threads than on one), the
// model 0.951, ShuffleNet 0.996 (kernel_ab dw_stream); on one thread 0.999. A 3x3 window's row
// runs whole (dw_run3), its side outputs inside the groups of eight with their taps left out at
// compile time, instead of one at a time (kernel_ab dw_edges: the MobileNet-style model
// 0.974-0.986, eight 272-channel layers at 14 x 14 0.875-0.881).
// Built with -ffp-contract=off.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <vector>

#include "base/error.h"
#include "base/mapped_buffer.h"
#include "base/thread_pool.h"
#include "ops/gemm_epilogue_avx512.h"
#include "ops/nchwc.h"
#include "ops/nchwc_groups.h"
#include "ops/pool_window.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define PG_NCHWC_DW_AVX512 1
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace pg::ops {

bool depthwise_nchwc_fits(const ConvShape& s) {
    if (s.w.nd > 2 || !is_depthwise(s) || s.c % kNchwcBlock) return false;
    for (int a = 0; a < 3; ++a)
        if (s.w.pad_begin[a] < 0 || s.w.pad_end[a] < 0) return false;
    return s.n > 0 && s.w.out_size() > 0;
}

namespace {
std::atomic<bool> g_output_prefetch{true};  // set_depthwise_nchwc_output_prefetch
std::atomic<bool> g_stream{true};           // set_depthwise_nchwc_stream_stores
std::atomic<bool> g_row_bands{true};        // set_depthwise_nchwc_row_bands
std::atomic<bool> g_edges{true};            // set_depthwise_nchwc_edges
}  // namespace

bool set_depthwise_nchwc_edges(bool on) {
    return g_edges.exchange(on);
}

bool set_depthwise_nchwc_row_bands(bool on) {
    return g_row_bands.exchange(on);
}

bool set_depthwise_nchwc_output_prefetch(bool on) {
    return g_output_prefetch.exchange(on);
}

bool set_depthwise_nchwc_stream_stores(bool on) {
    return g_stream.exchange(on);
}

#ifdef PG_NCHWC_DW_AVX512
namespace {

constexpr int64_t kB = kNchwcBlock;

// A run of output columns: `count` from `first` that see every kw, or one that does not.
struct ColumnRun {
    int64_t first = 0, count = 0;
    bool full = false;
};

// How the 3x3 windows (no dilation) of a row meet the input's sides, the same for every row: the
// first output may lack its kw = 0 tap (left) and the last its kw = 2 tap (right); no other
// output lacks one. fits is false for any other pattern (wider padding, a single column
// without its middle tap), which dw_pixels then computes.
struct Edges3 {
    bool fits = false, left = false, right = false;
};

// A 3x3 window without dilation, horizontal stride 1 or 2: what dw_run3 computes.
bool window3(const Window& g) {
    return g.kernel[1] == 3 && g.kernel[2] == 3 && g.dil[1] == 1 && g.dil[2] == 1 &&
           g.stride[2] <= 2;
}

Edges3 edges3(const Window& g, const AxisTaps& w) {
    if (!window3(g)) return {};
    const int64_t n = g.out[2];
    for (int64_t ow = 0; ow < n; ++ow) {
        const int64_t lo = w.lo[size_t(ow)], hi = w.hi[size_t(ow)];
        if (lo > 1 || hi < 2 || (lo == 1 && ow != 0) || (hi == 2 && ow != n - 1)) return {};
    }
    return {true, w.lo[0] == 1, w.hi[size_t(n - 1)] == 2};
}

struct Rows {
    const ConvShape& s;
    AxisTaps h, w;
    const GemmEpilogue* ep;       // may be nullptr
    std::vector<ColumnRun> cols;  // the same for every row (column_runs)
    Edges3 edges;                 // edges3
};

// The output columns in runs that see every kw and, between them, single columns that do not.
std::vector<ColumnRun> column_runs(const Window& g, const AxisTaps& w) {
    std::vector<ColumnRun> runs;
    for (int64_t ow = 0; ow < g.out[2]; ++ow) {
        const bool full = w.lo[size_t(ow)] == 0 && w.hi[size_t(ow)] == g.kernel[2];
        if (full && !runs.empty() && runs.back().full)
            ++runs.back().count;
        else
            runs.push_back({ow, 1, full});
    }
    return runs;
}

// Outputs [ow, ow + NP) of row oh (NP independent chains; NP > 1: columns that see every kw)
// of one block: x and y at the block's plane, wt its weights (wt[t * 16 + lane], t = kh *
// kernel width + kw), e its epilogue.
template <int NP>
__attribute__((target("avx512f"))) inline void dw_pixels(const Rows& r, const float* x,
                                                         const float* wt, float* y, int64_t oh,
                                                         int64_t ow, const BlockEpilogueZmm& e) {
    const Window& g = r.s.w;
    const int64_t kw_n = g.kernel[2], step = g.stride[2] * kB;
    const int64_t kw0 = r.w.lo[ow], kw1 = r.w.hi[ow];
    __m512 acc[NP];
    _Pragma("GCC unroll 8") for (int j = 0; j < NP; ++j) acc[j] = _mm512_setzero_ps();
    for (int64_t kh = r.h.lo[oh]; kh < r.h.hi[oh]; ++kh) {
        const float* xr = x + (r.h.start[oh] + kh * g.dil[1]) * g.in[2] * kB;
        for (int64_t kw = kw0; kw < kw1; ++kw) {
            const __m512 wv = _mm512_loadu_ps(wt + (kh * kw_n + kw) * kB);
            const float* xp = xr + (r.w.start[ow] + kw * g.dil[2]) * kB;
            _Pragma("GCC unroll 8") for (int j = 0; j < NP; ++j) acc[j] =
                _mm512_fmadd_ps(wv, _mm512_loadu_ps(xp + j * step), acc[j]);
        }
    }
    e.apply_store<NP>(acc, y + (oh * g.out[2] + ow) * kB, kB);
}

// W outputs of a 3x3 window (no dilation, horizontal stride S) side by side, the first at offset
// `at` of the block's plane x (its kh = 0, kw = 0 tap, which may lie outside), into yp, with the
// nine weight vectors wv. Kernel rows outside [kh0, kh1) are skipped, and so are the first
// output's kw = 0 tap when L and the last one's kw = 2 tap when R: the same chains as dw_pixels
// (the taps inside, kh then kw ascending, from zero), so the same bits.
template <int S, int W, bool L, bool R>
__attribute__((target("avx512f"), always_inline)) inline void dw_group3(
    const __m512 (&wv)[9], const float* x, int64_t at, int64_t row, int64_t kh0, int64_t kh1,
    float* yp, const BlockEpilogueZmm& e) {
    __m512 acc[W];
    _Pragma("GCC unroll 8") for (int j = 0; j < W; ++j) acc[j] = _mm512_setzero_ps();
    _Pragma("GCC unroll 3") for (int kh = 0; kh < 3; ++kh) {
        if (kh < kh0 || kh >= kh1) continue;
        _Pragma("GCC unroll 3") for (int kw = 0; kw < 3; ++kw)
            _Pragma("GCC unroll 8") for (int j = 0; j < W; ++j) {
                if ((L && j == 0 && kw == 0) || (R && j == W - 1 && kw == 2)) continue;
                acc[j] = _mm512_fmadd_ps(
                    wv[kh * 3 + kw], _mm512_loadu_ps(x + (at + kh * row + (j * S + kw) * kB)),
                    acc[j]);
            }
    }
    e.apply_store<W>(acc, yp, kB);
}

// dw_group3<S, W> with the edges L and R chosen at run time.
template <int S, int W>
__attribute__((target("avx512f"), always_inline)) inline void dw_group3_at(
    bool left, bool right, const __m512 (&wv)[9], const float* x, int64_t at, int64_t row,
    int64_t kh0, int64_t kh1, float* yp, const BlockEpilogueZmm& e) {
    if (left && right) return dw_group3<S, W, true, true>(wv, x, at, row, kh0, kh1, yp, e);
    if (left) return dw_group3<S, W, true, false>(wv, x, at, row, kh0, kh1, yp, e);
    if (right) return dw_group3<S, W, false, true>(wv, x, at, row, kh0, kh1, yp, e);
    dw_group3<S, W, false, false>(wv, x, at, row, kh0, kh1, yp, e);
}

// With a vertical stride of 2, the next output row reads two input rows this one does not: the
// lines of those under a group of eight outputs (8 S pixels, from p) are fetched into L2 after the
// group. MobileNet's 64-channel depthwise Conv at 112 x 112, stride 2, took 0.68 (one thread) and
// 0.83 (two) of its time with it; with stride 1 (one new row) the 32-channel one at 112 x 112 took
// 1.11, so it is not done there.
template <int S>
__attribute__((target("avx512f"), always_inline)) inline void prefetch_rows_ahead(const float* p,
                                                                                  int64_t row) {
    const char* at = reinterpret_cast<const char*>(p);
    _Pragma("GCC unroll 2") for (int i = 0; i < 2; ++i)
        _Pragma("GCC unroll 16") for (int c = 0; c < 8 * S; ++c)
            _mm_prefetch(at + (i * row + c * kB) * 4, _MM_HINT_T1);
}

// Outputs [ow, end) of row oh of a 3x3 window (no dilation, horizontal stride S): eight side by
// side, then four, two and one, the first without its kw = 0 tap when `left` and the last without
// its kw = 2 tap when `right`, the nine weight vectors and the block's epilogue loaded once (per
// eight outputs, dw_pixels<8> took 1.5-2.5x the time; a side output alone through dw_pixels<1>,
// one chain of six taps, about as long as ten outputs in a group).
template <int S>
__attribute__((target("avx512f,prfchw"))) void dw_run3(const Rows& r, const float* x,
                                                       const float* wt, float* y, int64_t oh,
                                                       int64_t ow, int64_t end, bool left,
                                                       bool right, const BlockEpilogueZmm& e0) {
    const BlockEpilogueZmm e = e0;  // in registers (a store may alias e0)
    const Window& g = r.s.w;
    __m512 wv[9];
    _Pragma("GCC unroll 9") for (int t = 0; t < 9; ++t) wv[t] = _mm512_loadu_ps(wt + t * kB);
    const int64_t row = g.in[2] * kB, first = ow;
    const int64_t kh0 = r.h.lo[size_t(oh)], kh1 = r.h.hi[size_t(oh)];
    const int64_t at0 = r.h.start[size_t(oh)] * row;
    float* y0 = y + oh * g.out[2] * kB;
    const bool ahead = g.stride[1] == 2 && kh0 == 0 && kh1 == 3;
    const bool out_ahead = !e.stream && g_output_prefetch.load(std::memory_order_relaxed);
    for (; end - ow >= 8; ow += 8) {
        if (out_ahead)  // the next group's output lines, for writing
            for (int64_t j = ow + 8; j < std::min<int64_t>(end, ow + 16); ++j)
                __builtin_prefetch(y0 + j * kB, 1, 3);
        const int64_t at = at0 + r.w.start[size_t(ow)] * kB;
        dw_group3_at<S, 8>(left && ow == first, right && ow + 8 == end, wv, x, at, row, kh0, kh1,
                           y0 + ow * kB, e);
        if (ahead) prefetch_rows_ahead<S>(x + (at + 3 * row), row);
    }
    if (end - ow >= 4) {
        dw_group3_at<S, 4>(left && ow == first, right && ow + 4 == end, wv, x,
                           at0 + r.w.start[size_t(ow)] * kB, row, kh0, kh1, y0 + ow * kB, e);
        ow += 4;
    }
    if (end - ow >= 2) {
        dw_group3_at<S, 2>(left && ow == first, right && ow + 2 == end, wv, x,
                           at0 + r.w.start[size_t(ow)] * kB, row, kh0, kh1, y0 + ow * kB, e);
        ow += 2;
    }
    if (end - ow >= 1)
        dw_group3_at<S, 1>(left && ow == first, right, wv, x, at0 + r.w.start[size_t(ow)] * kB,
                           row, kh0, kh1, y0 + ow * kB, e);
}

// Output row oh of one block. A 3x3 window whose sides fit (edges3): the whole row through
// dw_run3. Otherwise each run of columns that see every kw through dw_run3 when the row sees
// every kh of a 3x3 window, and the rest eight, four, two or one at a time (one chain each).
void dw_row(const Rows& r, const float* x, const float* wt, float* y, int64_t oh,
            const BlockEpilogueZmm& e) {
    const auto run3 = r.s.w.stride[2] == 1 ? dw_run3<1> : dw_run3<2>;
    if (r.edges.fits && g_edges.load(std::memory_order_relaxed))
        return run3(r, x, wt, y, oh, 0, r.s.w.out[2], r.edges.left, r.edges.right, e);
    const bool rows3 = window3(r.s.w) && r.h.lo[size_t(oh)] == 0 && r.h.hi[size_t(oh)] == 3;
    for (const ColumnRun& c : r.cols) {
        if (rows3 && c.full) {
            run3(r, x, wt, y, oh, c.first, c.first + c.count, false, false, e);
            continue;
        }
        for (int64_t ow = c.first, left = c.count; left > 0;) {
            const int64_t np = left >= 8 ? 8 : left >= 4 ? 4 : left >= 2 ? 2 : 1;
            (np == 8   ? dw_pixels<8>
             : np == 4 ? dw_pixels<4>
             : np == 2 ? dw_pixels<2>
                       : dw_pixels<1>)(r, x, wt, y, oh, ow, e);
            ow += np, left -= np;
        }
    }
}

// Where unit v of an image runs: its block and output row. In `bands` bands of rows, one a
// thread, each band block after block (bands = 1: by block). A thread then reads the rows its
// own thread wrote when the Conv before split its output by pixels (nchwc_conv_split), as the
// pools do; after a split by groups, by block.
struct UnitOrder {
    int64_t cb = 1, rows = 1, bands = 1;
    void place(int64_t v, int64_t* blk, int64_t* oh) const {
        int64_t t = 0;  // the band: empty ones (fewer rows than bands) are skipped
        while (t + 1 < bands && v >= cb * (rows * (t + 1) / bands)) ++t;
        const int64_t r0 = rows * t / bands, r1 = rows * (t + 1) / bands;
        *blk = (v - cb * r0) / (r1 - r0), *oh = r0 + (v - cb * r0) % (r1 - r0);
    }
};

}  // namespace

void depthwise_nchwc(const ConvShape& s, const float* x, const float* w, const float* bias,
                     const GemmEpilogue* epilogue, float* y, ThreadPool* pool) {
    if (!nchwc_available() || !depthwise_nchwc_fits(s))
        throw Error(ErrorKind::kInternal, "depthwise_nchwc: unsupported Conv");
    GemmEpilogue ep = epilogue ? *epilogue : GemmEpilogue{};
    ep.bias = bias;
    const bool any = ep.bias || ep.sub || ep.scale || ep.shift || ep.res || ep.clamp;
    Rows r{s, axis_taps(s.w, 1), axis_taps(s.w, 2), any ? &ep : nullptr, {}, {}};
    r.cols = column_runs(s.w, r.w);
    r.edges = edges3(s.w, r.w);
    const int64_t cb = s.c / kB, taps = s.w.kernel[1] * s.w.kernel[2], rows = s.w.out[1];
    const int64_t in_block = s.w.in[1] * s.w.in[2] * kB, out_block = s.w.out_size() * kB;
    const bool stream =
        g_stream.load(std::memory_order_relaxed) && !ep.keep_cached && streamable(y);
    ThreadPool* const team = s.n * cb * out_block > (1 << 14) ? pool : nullptr;
    const int threads = team ? team->num_threads() : 1;
    const bool bands = g_row_bands.load(std::memory_order_relaxed) && threads > 1 &&
                       !nchwc_conv_split(s.n, cb, s.w.in[1] * s.w.in[2], threads).by_groups;
    const UnitOrder order{cb, rows, bands ? threads : 1};
    run_parts(team, s.n * cb * rows, [&](int64_t b, int64_t e) {
        // The block's taps, lane-major; kept per thread (run_parts calls this several
        // times per thread and Conv).
        thread_local KeptArray<float> kept;
        float* wt = kept.at_least(static_cast<size_t>(taps * kB));
        int64_t gathered = -1;
        BlockEpilogueZmm be;
        for (int64_t u = b; u < e; ++u) {
            int64_t blk = 0, oh = 0;
            order.place(u % (cb * rows), &blk, &oh);
            const int64_t nb = u / (cb * rows) * cb + blk;
            if (blk != gathered) {
                for (int64_t t = 0; t < taps; ++t)
                    for (int64_t l = 0; l < kB; ++l) wt[t * kB + l] = w[(blk * kB + l) * taps + t];
                gathered = blk;
                if (r.ep) be = BlockEpilogueZmm(*r.ep, blk * kB);
                be.stream = stream;
            }
            dw_row(r, x + nb * in_block, wt, y + nb * out_block, oh, be);
        }
        if (stream) _mm_sfence();  // the streamed outputs before the part ends
    });
}

#else

void depthwise_nchwc(const ConvShape&, const float*, const float*, const float*,
                     const GemmEpilogue*, float*, ThreadPool*) {
    throw Error(ErrorKind::kInternal, "depthwise_nchwc: not built for this CPU");
}

#endif

}  // namespace pg::ops
