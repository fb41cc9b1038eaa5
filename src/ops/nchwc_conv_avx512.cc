// conv_nchwc (nchwc.h) with AVX-512F. The output blocks go in groups of up to four, of balanced
// sizes (their count a multiple of the threads where groups of three allow it). Work: units of
// (image, group, segment of up to 2048 output pixels), in one contiguous range per thread,
// ordered by group when there are two groups per thread or more, else by segment (each thread a
// part of the pixels, for every group). A unit runs slice after slice of about 128 values of
// p = (input channel, kh, kw): the slice's weights are copied transposed (pack_rows_transposed,
// 32 KiB, the next slice's lines prefetched: Prefetch; on small maps all of the group's slices at
// once where they take at most 256 KiB) and stay in L1 for every tile of the segment; the sums
// wait in the output between slices. Each tile (nchwc_conv_tiles.h: pixels of one
// class, those that see the same taps inside the input) keeps 24 accumulator vectors (four blocks x
// 6 pixels, three x 8, two or one x 12), each step loading the group's weight vectors and
// broadcasting one input value per pixel; the taps in the padding are not visited, so no padded
// copy is made. While a tile of 1, 9 or 25 taps runs, the next tile's input lines (and in the
// last slice its residual) are fetched into L1, and in the first slice its output lines for
// writing: these were mostly written by the other core, which on this VM costs 2-4 times a read
// of one's own (kernel_ab, in_prefetch and conv_out). A blocked input's sums run over (block, kh,
// kw, lane), a plain input's over (channel, kh, kw). Built with -ffp-contract=off: the epilogue's
// operations are GemmEpilogue::apply's.
#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/aligned.h"
#include "base/error.h"
#include "base/mapped_buffer.h"
#include "base/thread_pool.h"
#include "ops/gemm_direct.h"
#include "ops/gemm_epilogue_avx512.h"
#include "ops/nchwc.h"
#include "ops/nchwc_conv_tiles.h"
#include "ops/nchwc_groups.h"
#include "ops/pack_rows_avx512.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define PG_NCHWC_AVX512 1
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace pg::ops {

namespace {
std::atomic<bool> g_thread_buffer{true};    // set_nchwc_thread_pack_buffer
std::atomic<bool> g_input_prefetch{true};   // set_nchwc_input_prefetch
std::atomic<bool> g_output_prefetch{true};  // set_nchwc_output_prefetch
std::atomic<bool> g_balanced_groups{true};
std::atomic<bool> g_group_pack{true};      // set_nchwc_group_pack
std::atomic<bool> g_unblock_groups{true};  // set_nchwc_unblock_groups
}  // namespace

#ifdef PG_NCHWC_AVX512
std::atomic<bool> g_pack_ahead{true};
#endif

bool set_pack_prefetch_ahead(bool on) {
#ifdef PG_NCHWC_AVX512
    return g_pack_ahead.exchange(on);
#else
    return on;
#endif
}

bool set_nchwc_unblock_groups(bool on) {
    return g_unblock_groups.exchange(on);
}

bool set_nchwc_group_pack(bool on) {
    return g_group_pack.exchange(on);
}

bool set_nchwc_thread_pack_buffer(bool on) {
    return g_thread_buffer.exchange(on);
}

bool set_nchwc_output_prefetch(bool on) {
    return g_output_prefetch.exchange(on);
}

bool set_nchwc_balanced_groups(bool on) {
    return g_balanced_groups.exchange(on);
}

bool set_nchwc_input_prefetch(bool on) {
    return g_input_prefetch.exchange(on);
}

bool nchwc_available() {
    return gemm_direct_available();
}

bool conv_nchwc_fits(const ConvShape& s, bool plain_input) {
    if (s.w.nd > 2 || s.group != 1 || (!plain_input && s.c % kNchwcBlock) || s.m % kNchwcBlock)
        return false;
    for (int a = 0; a < 3; ++a)
        if (s.w.pad_begin[a] < 0 || s.w.pad_end[a] < 0) return false;
    return s.n > 0 && s.c > 0 && s.m > 0 && s.w.out_size() > 0;
}

#ifdef PG_NCHWC_AVX512
namespace {

#define PG_AVX512 __attribute__((target("avx512f,prfchw")))
#define PG_AVX512_INLINE __attribute__((target("avx512f"), always_inline)) inline

constexpr int64_t kB = kNchwcBlock;       // lanes per block
constexpr int64_t kSegmentPixels = 2048;  // output pixels per segment, at most (512 KiB of sums)
constexpr int64_t kSliceP = 128;          // values of p per slice, about (32 KiB of weights)
// A plain input's channels all in one slice when they and their taps make at most this many
// values of p (37 KiB of weights): the 7x7 stems over three colours (147), whose sums then go to
// the output once instead of waiting there between two slices. In process, blocks of runs
// alternating: the stem step of Inception-v2 0.920 -> 0.889 ms, of ResNet-50 0.869 -> 0.842.
constexpr int64_t kPlainSliceP = 160;
// Segments of at most this many tiles (maps of about 14 x 14 and less, where fetching the
// weights from memory is a large part of the time) prefetch the next slice's weights between
// their tiles' multiply-adds; larger ones leave it to the pack (one burst).
constexpr int64_t kSpreadTiles = 48;
// Such segments pack all of their group's weights at once when they take at most this many bytes
// (a 1x1 Conv's 64 output channels of 1024 inputs): the pack then reads each weight row from
// start to end, 16 rows at a time, where a slice alone reads 64 rows' 512 bytes each (rows a
// multiple of 4 KiB apart all fall in the same L1 sets). interpreter_bench, 7 runs each way in
// alternation: MobileNet 1.00-1.04 against 1.08-1.11, the other models within their noise
// (docs/performance.md, session 26).
constexpr int64_t kGroupPackBytes = 256 << 10;

// Output channels rounded up to whole blocks (conv_nchwc_plain_out's scratch).
int64_t padded_channels(int64_t m) {
    return (m + kB - 1) / kB * kB;
}

// Pixels per tile for a group of nb output blocks: 24 accumulators (four blocks x 6 pixels,
// three x 8, two x 12; one block x 12, its loads being the bound there).
int64_t tile_width(int64_t nb) {
    return nb >= 4 ? 6 : nb == 3 ? 8 : 12;
}

// One image's geometry: input blocks, the output blocks in groups of at most four of balanced
// sizes (96 channels: three and three, not four and two), how the threads share them
// (nchwc_conv_split; split by pixels, every thread packs every group's weights: 20 % of a 3x3
// layer's time at 14x14), and the tiles.
struct Geometry {
    int64_t mb = 0, groups = 0;
    int64_t in_block = 0, out_block = 0;  // floats per 16 input / output channels
    int64_t lane = 1;                     // floats between channels of a block (plain: a plane)
    bool by_groups = false;  // units (image, group, segment); else (image, segment, group)
    int64_t segments = 1;    // per image and group: balanced ranges of its tiles
    NchwcConvTiles tiles;
    int64_t threads = 1;
    // Group grp's first output block and block count. Split by groups into a multiple of the
    // threads, the blocks are first split between the threads, then each thread's into its
    // groups (ten blocks in four groups: 3, 2 | 3, 2, not 3, 3 | 2, 2).
    void group(int64_t grp, int64_t* b0, int64_t* nb) const {
        if (!g_balanced_groups.load(std::memory_order_relaxed) || !by_groups || groups % threads) {
            nchwc_part_of(mb, groups, grp, b0, nb);
            return;
        }
        const int64_t per = groups / threads;
        int64_t t0 = 0, tn = 0;
        nchwc_part_of(mb, threads, grp / per, &t0, &tn);
        nchwc_part_of(tn, per, grp % per, b0, nb);
        *b0 += t0;
    }
};

Geometry geometry(const ConvShape& s, int threads, bool plain) {
    Geometry g{
        0, 0, 0, 0, plain ? s.w.in[1] * s.w.in[2] : 1, false, 1, NchwcConvTiles(s, plain ? 1 : kB)};
    g.threads = threads;
    g.mb = padded_channels(s.m) / kB;  // conv_nchwc_plain_out: the last block may be partial
    g.in_block = s.w.in[1] * s.w.in[2] * kB;
    g.out_block = s.w.out[1] * s.w.out[2] * kB;
    // Threads take whole groups (each group's weights are then packed once), else ranges of
    // pixels across all groups (each thread reads its part of the input only, from L2 for every
    // group); segments' sums stay in L2 either way.
    const int64_t pixels = s.w.out[1] * s.w.out[2];
    const NchwcConvSplit split = nchwc_conv_split(s.n, g.mb, pixels, threads);
    g.groups = split.groups, g.by_groups = split.by_groups;
    g.segments = std::max<int64_t>(g.by_groups ? 1 : threads,
                                   (pixels + kSegmentPixels - 1) / kSegmentPixels);
    // Split by pixels, a multiple of the threads (a 112 x 112 stem: 8 segments, not 7 of which
    // one thread would run 4).
    if (!g.by_groups) g.segments = (g.segments + threads - 1) / threads * threads;
    return g;
}

// The lines of the next slice's weights (rows of `bytes` bytes, `stride` bytes apart) fetched
// a few at a time between a tile's multiply-adds: `left` lines for this tile, `each` per step of
// four lanes. (This VM's hardware prefetchers do not fetch them ahead, and a burst of
// prefetches stalls while the fill buffers drain; spread out, resnet50 0.965-0.976 in process,
// vgg19 1.003-1.011 when applied to every segment, docs/performance.md.) Fetched into L1 (T0),
// where the pack reads them, rather than L2 (T1): kernel_ab, mobilenet 0.984-0.990,
// inception_v2 0.989-0.991, resnet50 and densenet 0.994-1.000.
struct Prefetch {
    const char* base = nullptr;
    int64_t stride = 0, bytes = 0;
    int64_t row = 0, at = 0;  // the next line: row, byte offset in it
    int64_t left = 0, each = 0;
    PG_AVX512_INLINE void step() {
        for (int64_t e = 0; e < each && left > 0; ++e, --left) {
            _mm_prefetch(base + row * stride + std::min(at, bytes - 1), _MM_HINT_T0);
            at += 64;
            if (at >= bytes + 63) at = 0, ++row;
        }
    }
};

// One tile over input channels [c0, c1): the slice's packed weights (64 floats per p; `wstride`
// floats per input channel), the image's input (channel 0; channel c at (c / 16) * in_block +
// (c % 16) * lane), the tile's pixels and its class's taps, the group's output (blocks out_block
// apart), which holds the sums so far unless `first`; `last` applies the epilogue (may be
// nullptr; ch: the group's first channel).
struct TileArgs {
    const float* wp;
    const float* x;
    const NchwcTile* tile;
    int64_t c0, c1, in_block, lane, wstride;
    const NchwcTap* taps;
    int64_t ntaps;
    float* y;
    int64_t out_block;
    bool first, last;
    const GemmEpilogue* ep;
    int64_t ch;
    Prefetch* pf;           // may be nullptr
    const NchwcTile* next;  // the slice's next tile if of the same class (may be nullptr)
    // The tile whose input lines are fetched, `shift` channels on where that is below
    // `channels`: the next one (shift 0), or after a slice's last tile the first one of the next
    // slice; nullptr: none (set_nchwc_input_prefetch off, or another class).
    const NchwcTile* ahead;
    int64_t shift, channels;
};

// One value of p: the group's NB weight vectors at w times, for each pixel j, the input value
// at px[j] + o.
template <int NB, int NP>
PG_AVX512 __attribute__((always_inline)) inline void multiply_add(const float* w,
                                                                  const float* const* px, int64_t o,
                                                                  __m512 (&acc)[NB][NP]) {
    __m512 wv[NB];
    _Pragma("GCC unroll 4") for (int i = 0; i < NB; ++i) wv[i] = _mm512_loadu_ps(w + 16 * i);
    _Pragma("GCC unroll 12") for (int j = 0; j < NP; ++j) {
        const __m512 xv = _mm512_set1_ps(px[j][o]);
        _Pragma("GCC unroll 4") for (int i = 0; i < NB; ++i) acc[i][j] =
            _mm512_fmadd_ps(wv[i], xv, acc[i][j]);
    }
}

// A blocked input's slice, whole blocks: per block and tap, its 16 lanes in runs of four
// unrolled, each at a fixed offset from the tap's input and weights (a loop step and a tap
// lookup per four lanes, not per lane: 2-5 % of ResNet-50's time, docs/performance.md).
template <int NB, int NP, int T>
PG_AVX512 __attribute__((always_inline)) inline void accumulate_blocks(const TileArgs& a,
                                                                       const float* const* px,
                                                                       __m512 (&acc)[NB][NP]) {
    const int64_t ntaps = T > 0 ? T : a.ntaps;
    const int64_t ws = T > 0 ? T * kPackRows : a.wstride;  // floats between lanes' weights
    for (int64_t cb = a.c0; cb < a.c1; cb += kB) {
        const int64_t c = (cb / kB) * a.in_block;
        const float* wb = a.wp + (cb - a.c0) * ws;
        if (T > 0 && a.ahead && cb + a.shift < a.channels) {
            const int64_t ca = ((cb + a.shift) / kB) * a.in_block;
            for (int64_t t = 0; t < T; ++t)
                for (int64_t j = 0; j < a.ahead->np; ++j)
                    _mm_prefetch(
                        reinterpret_cast<const char*>(a.x + a.ahead->in[j] + ca + a.taps[t].in),
                        _MM_HINT_T0);
        }
        _Pragma("GCC unroll 1") for (int64_t t = 0; t < ntaps; ++t) {
            const int64_t o = c + a.taps[t].in;
            const float* w = wb + (T > 0 ? t : a.taps[t].index) * kPackRows;
            _Pragma("GCC unroll 1") for (int l0 = 0; l0 < kB; l0 += 4) {
                if (a.pf) a.pf->step();
                _Pragma("GCC unroll 4") for (int l = l0; l < l0 + 4; ++l)
                    multiply_add<NB, NP>(w + l * ws, px, o + l, acc);
            }
        }
    }
}

// Any slice, lane after lane. Channel ch of the image is at (ch / 16) * in_block + (ch % 16) *
// lane: block by block, then one lane at a time (no division in the loop).
template <int NB, int NP, int T>
PG_AVX512 __attribute__((always_inline)) inline void accumulate_lanes(const TileArgs& a,
                                                                      const float* const* px,
                                                                      __m512 (&acc)[NB][NP]) {
    const int64_t ntaps = T > 0 ? T : a.ntaps;
    const float* wc = a.wp;
    for (int64_t cb = a.c0; cb < a.c1;) {
        const int64_t end = std::min(a.c1, (cb / kB + 1) * kB);
        int64_t c = (cb / kB) * a.in_block + (cb % kB) * a.lane;
        for (; cb < end; ++cb, c += a.lane, wc += a.wstride)
            _Pragma("GCC unroll 1") for (int64_t t = 0; t < ntaps; ++t) multiply_add<NB, NP>(
                wc + (T > 0 ? t : a.taps[t].index) * kPackRows, px, c + a.taps[t].in, acc);
    }
}

// The last slice's epilogue, GemmEpilogue::apply's operations in its order on every sum, then
// the stores: one test per operation and tile, each operation unrolled over the tile's vectors
// (tested per vector, as epilogue_channels_zmm does, its tests outnumbered the multiply-adds of a
// 32 -> 64 1x1 Conv, which then took 1.2 times as long with a bias as without).
template <int NB, int NP>
PG_AVX512_INLINE void store_with_epilogue(__m512 (&acc)[NB][NP], float* const* dst, int64_t ob,
                                          const GemmEpilogue& ep, int64_t ch) {
#define PG_EACH_SUM(...)                                        \
    _Pragma("GCC unroll 4") for (int i = 0; i < NB; ++i) {      \
        [[maybe_unused]] const int64_t c = ch + 16 * i;         \
        _Pragma("GCC unroll 12") for (int j = 0; j < NP; ++j) { \
            __VA_ARGS__;                                        \
        }                                                       \
    }
    if (ep.bias) PG_EACH_SUM(acc[i][j] = _mm512_add_ps(acc[i][j], _mm512_loadu_ps(ep.bias + c)))
    if (ep.sub)
        PG_EACH_SUM(acc[i][j] = _mm512_add_ps(
                        _mm512_mul_ps(_mm512_sub_ps(acc[i][j], _mm512_loadu_ps(ep.sub + c)),
                                      _mm512_loadu_ps(ep.mul + c)),
                        _mm512_loadu_ps(ep.add + c)))
    if (ep.scale) PG_EACH_SUM(acc[i][j] = _mm512_mul_ps(acc[i][j], _mm512_loadu_ps(ep.scale + c)))
    if (ep.shift) PG_EACH_SUM(acc[i][j] = _mm512_add_ps(acc[i][j], _mm512_loadu_ps(ep.shift + c)))
    if (ep.res) {
        const int64_t r = ep.res - ep.res_origin;
        PG_EACH_SUM(acc[i][j] = _mm512_add_ps(acc[i][j], _mm512_loadu_ps(dst[j] + i * ob + r)))
    }
    if (ep.clamp) {
        const __m512 lo = _mm512_set1_ps(ep.lo), hi = _mm512_set1_ps(ep.hi);
        PG_EACH_SUM(acc[i][j] = _mm512_max_ps(lo, acc[i][j]))
        if (ep.hi != __builtin_inff()) PG_EACH_SUM(acc[i][j] = _mm512_min_ps(hi, acc[i][j]))
    }
    PG_EACH_SUM(_mm512_storeu_ps(dst[j] + i * ob, acc[i][j]))
#undef PG_EACH_SUM
}

// T > 0: the class sees all T taps of the window (its weights in order). Each broadcast
// addresses its pixel's pointer plus one offset per tap (no address arithmetic per pixel, which
// would take the multiply-adds' ports).
template <int NB, int NP, int T>
PG_AVX512 __attribute__((noinline)) void conv_tile(const TileArgs& a) {
    const NchwcTile& tile = *a.tile;
    __m512 acc[NB][NP];
    _Pragma("GCC unroll 12") for (int j = 0; j < NP; ++j)
        _Pragma("GCC unroll 4") for (int i = 0; i < NB; ++i) acc[i][j] =
            a.first ? _mm512_setzero_ps()
                    : _mm512_loadu_ps(a.y + i * a.out_block + tile.out[j] * kB);
    const float* px[NP];  // each pixel's first input
    _Pragma("GCC unroll 12") for (int j = 0; j < NP; ++j) px[j] = a.x + tile.in[j];
    if (a.first && a.next && g_output_prefetch.load(std::memory_order_relaxed))  // for writing
        for (int64_t j = 0; j < a.next->np; ++j)
            for (int i = 0; i < NB; ++i)
                __builtin_prefetch(a.y + i * a.out_block + a.next->out[j] * kB, 1, 3);
    if (a.last && a.ahead && a.ep && a.ep->res)  // the next tile's residual, for its epilogue
        for (int64_t j = 0; j < a.next->np; ++j)
            for (int i = 0; i < NB; ++i)
                _mm_prefetch(reinterpret_cast<const char*>(
                                 a.ep->res +
                                 (a.y + i * a.out_block + a.next->out[j] * kB - a.ep->res_origin)),
                             _MM_HINT_T0);
    if (a.lane == 1 && a.c0 % kB == 0 && a.c1 % kB == 0)
        accumulate_blocks<NB, NP, T>(a, px, acc);
    else
        accumulate_lanes<NB, NP, T>(a, px, acc);
    // Everything the stores need, read before them: a vector store may alias anything, so GCC
    // reloaded the epilogue's fields and the tile's offsets after each one (in process, the
    // CNNs ran 0.989-0.996 of the time once they were locals).
    float* dst[NP];
    _Pragma("GCC unroll 12") for (int j = 0; j < NP; ++j) dst[j] = a.y + tile.out[j] * kB;
    const int64_t ob = a.out_block;
    if (!a.last || !a.ep) {
        _Pragma("GCC unroll 12") for (int j = 0; j < NP; ++j)
            _Pragma("GCC unroll 4") for (int i = 0; i < NB; ++i)
                _mm512_storeu_ps(dst[j] + i * ob, acc[i][j]);
        return;
    }
    const GemmEpilogue& ep = *a.ep;
    store_with_epilogue<NB, NP>(acc, dst, ob, ep, a.ch);
}

using TileFn = void (*)(const TileArgs&);

template <int NB, int T, size_t... P>
constexpr std::array<TileFn, sizeof...(P) + 1> tiles_of(std::index_sequence<P...>) {
    return {nullptr, conv_tile<NB, static_cast<int>(P) + 1, T>...};
}

template <int NB, int T>
constexpr auto kTiles = tiles_of<NB, T>(std::make_index_sequence<NB >= 4   ? 6
                                                                 : NB == 3 ? 8
                                                                           : 12>());

template <int T>
TileFn tile_fn_taps(int64_t nb, int64_t np) {
    switch (nb) {
        case 1:
            return kTiles<1, T>[np];
        case 2:
            return kTiles<2, T>[np];
        case 3:
            return kTiles<3, T>[np];
        default:
            return kTiles<4, T>[np];
    }
}

// The tile for nb output blocks and np pixels of a class seeing `taps` taps, all of the
// window's when `full` (1, 9 and 25 taps with their count fixed).
TileFn tile_fn(int64_t nb, int64_t np, int64_t taps, bool full) {
    return full && taps == 1    ? tile_fn_taps<1>(nb, np)
           : full && taps == 9  ? tile_fn_taps<9>(nb, np)
           : full && taps == 25 ? tile_fn_taps<25>(nb, np)
                                : tile_fn_taps<0>(nb, np);
}

// The calling thread's buffer for packed weights, kept from call to call (KeptArray; at most a
// slice's 36 KiB). Against a buffer allocated per call, `kernel_ab --switch pack_buffer` gave
// MobileNet 0.935-1.002 over seven runs (the gains in the machine's slow phases), the other CNNs
// 0.989-1.009.
float* thread_pack_buffer(int64_t floats) {
    thread_local KeptArray<float> buf;
    return buf.at_least(static_cast<size_t>(floats));
}

// What every part reads and writes.
struct Job {
    const ConvShape& s;
    const Geometry& g;
    const float* x;
    const float* w;
    const GemmEpilogue* ep;
    float* y;
    bool plain;  // x is plain (n, c, h, w)
    bool whole;  // spread segments pack their group's weights at once (packs_whole_groups)
};

// Input channels per slice: about kSliceP values of p (whole blocks of a blocked input), so that
// a slice's weights stay in L1 for every tile of a segment; a plain input's all when they make at
// most kPlainSliceP.
int64_t slice_channels(const ConvShape& s, int64_t taps, bool plain) {
    if (plain)
        return s.c * taps <= kPlainSliceP ? s.c : std::clamp<int64_t>(kSliceP / taps, 1, s.c);
    return std::clamp<int64_t>(kSliceP / (kB * taps), 1, s.c / kB) * kB;
}

// Whether segments of few tiles (spread) pack their group's weights all at once, not slice by
// slice: a blocked input and at most kGroupPackBytes of them (set_nchwc_group_pack).
bool packs_whole_groups(const ConvShape& s, int64_t taps, bool plain) {
    return !plain && s.c * taps * kPackRows * 4 <= kGroupPackBytes &&
           g_group_pack.load(std::memory_order_relaxed);
}

// Segment seg of image n, group grp, slice after slice, each slice's weights packed into wp
// (the next one's prefetched) and the sums waiting in the output between slices.
void run_segment(const Job& j, float* wp, int64_t n, int64_t grp, int64_t seg) {
    const Geometry& g = j.g;
    int64_t b0 = 0, nb = 0;
    g.group(grp, &b0, &nb);
    const int64_t width = tile_width(nb), count = g.tiles.count(width);
    thread_local std::vector<NchwcTile> tiles;  // the segment's, for every slice
    tiles.clear();
    g.tiles.tiles(width, count * seg / g.segments, count * (seg + 1) / g.segments, tiles);
    const int64_t ntaps = g.tiles.taps(), k = j.s.c * ntaps;
    const int64_t step = slice_channels(j.s, ntaps, j.plain);
    float* y_group = j.y + (n * g.mb + b0) * g.out_block;
    const float* wg = j.w + b0 * kB * k;
    const int64_t rows = std::min(nb * kB, j.s.m - b0 * kB);  // past m: zero weights
    const bool spread = !j.plain && static_cast<int64_t>(tiles.size()) <= kSpreadTiles;
    const bool whole = spread && j.whole;
    if (whole) pack_rows_transposed(wg, k, rows, 0, k, k, wp);
    const int64_t ntiles = static_cast<int64_t>(tiles.size());
    const bool fetch = g_input_prefetch.load(std::memory_order_relaxed);
    Prefetch pf;
    for (int64_t c0 = 0; c0 < j.s.c; c0 += step) {
        const int64_t c1 = std::min(j.s.c, c0 + step), p0 = c0 * ntaps, kc = (c1 - c0) * ntaps;
        if (!whole) pack_rows_transposed(wg, k, rows, p0, kc, spread ? p0 + kc : k, wp);
        const float* ws = whole ? wp + p0 * kPackRows : wp;            // the slice's packed weights
        const int64_t nk = (std::min(j.s.c, c1 + step) - c1) * ntaps;  // the next slice's
        int64_t lines = 0;
        if (spread && !whole && nk > 0) {
            pf.base = reinterpret_cast<const char*>(wg + p0 + kc);
            pf.stride = k * 4, pf.bytes = nk * 4, pf.row = 0, pf.at = 0;
            lines = nb * kB * ((pf.bytes + 62) / 64 + 1);
        }
        int64_t ti = 0;
        for (const NchwcTile& tile : tiles) {
            const std::vector<NchwcTap>& taps = g.tiles.taps_of(tile.cls);
            if (lines) {
                pf.left = lines * (ti + 1) / ntiles - lines * ti / ntiles;
                const int64_t slots = (c1 - c0) / kB * static_cast<int64_t>(taps.size()) * 4;
                pf.each = (pf.left + slots - 1) / std::max<int64_t>(slots, 1);
            }
            ++ti;
            const NchwcTile* next = ti < ntiles && tiles[static_cast<size_t>(ti)].cls == tile.cls
                                        ? &tiles[static_cast<size_t>(ti)]
                                        : nullptr;
            const NchwcTile* wrap = c1 < j.s.c && tiles[0].cls == tile.cls ? &tiles[0] : nullptr;
            const TileArgs a{ws,
                             j.x + n * j.s.c * (g.in_block / kB),
                             &tile,
                             c0,
                             c1,
                             g.in_block,
                             g.lane,
                             ntaps * kPackRows,
                             taps.data(),
                             static_cast<int64_t>(taps.size()),
                             y_group,
                             g.out_block,
                             c0 == 0,
                             c1 == j.s.c,
                             j.ep,
                             b0 * kB,
                             lines ? &pf : nullptr,
                             next,
                             !fetch        ? nullptr
                             : ti < ntiles ? next
                                           : wrap,
                             ti < ntiles ? 0 : c1 - c0,
                             j.s.c};
            tile_fn(nb, tile.np, a.ntaps, g.tiles.full(tile.cls))(a);
        }
    }
}

// Group grp of image n, finished in the blocked y, copied into the plain `plain` (n, m, out...).
void unblock_group(const Job& j, int64_t n, int64_t grp, float* plain) {
    int64_t b0 = 0, nb = 0;
    j.g.group(grp, &b0, &nb);
    const int64_t plane = j.s.w.out_size(), channels = std::min(nb * kB, j.s.m - b0 * kB);
    from_nchwc(j.y + (n * j.g.mb + b0) * j.g.out_block, 1, channels, plane, sizeof(float),
               plain + (n * j.s.m + b0 * kB) * plane, nullptr);
}

// Group grp of image n, finished in the blocked y: each of its channels' average over the map,
// into `averages` (n, m), as global_pool_nchwc sums and divides.
void average_group(const Job& j, int64_t n, int64_t grp, float* averages) {
    int64_t b0 = 0, nb = 0;
    j.g.group(grp, &b0, &nb);
    const int64_t plane = j.s.w.out_size(), channels = std::min(nb * kB, j.s.m - b0 * kB);
    float sums[4 * kB];
    global_pool_nchwc(1, nb, plane, j.y + (n * j.g.mb + b0) * j.g.out_block, sums, false, nullptr);
    std::copy(sums, sums + channels, averages + n * j.s.m + b0 * kB);
}

// Where run_conv's output goes besides the blocked y: nowhere (both nullptr), copied into a plain
// (n, m, out...) `plain`, or only each channel's average over the map into `averages` (n, m).
struct Finish {
    float* plain = nullptr;
    float* averages = nullptr;
};

// conv_nchwc's work on any output channel count (y: ceil(m / 16) blocks an image; `ep`, when
// given, holds that many channels in each per-channel vector), then `finish`: group by group as
// each is finished where a thread runs whole groups (the group still in its caches; `kernel_ab
// --switch unblock_groups`, 100 runs: SqueezeNet's 512 -> 1000 1x1 Conv at 13 x 13 0.902 of the
// time with one copy at the end, the GlobalAveragePool after it 0.645, the model 0.963), else at
// the end.
void run_conv(const ConvShape& s, const float* x, const float* w, const GemmEpilogue* ep, float* y,
              ThreadPool* pool, bool plain_input, Finish finish = {}) {
    float* const plain = finish.plain;
    const Geometry g = geometry(s, pool ? pool->num_threads() : 1, plain_input);
    const int64_t taps = g.tiles.taps(), segments = g.segments;
    const Job job{s, g, x, w, ep, y, plain_input, packs_whole_groups(s, taps, plain_input)};
    const int64_t room = job.whole ? s.c * taps * kPackRows
                                   : slice_channels(s, taps, plain_input) * taps * kPackRows;
    const bool by_group =
        g.by_groups && segments == 1 && g_unblock_groups.load(std::memory_order_relaxed);
    run_parts(pool, s.n * g.groups * segments, [&](int64_t b, int64_t e) {
        AlignedArray<float> local;  // set_nchwc_thread_pack_buffer off: one per call
        if (!g_thread_buffer.load(std::memory_order_relaxed))
            local = aligned_array<float>(static_cast<size_t>(room));
        float* wp = local ? local.get() : thread_pack_buffer(room);
        for (int64_t u = b; u < e; ++u) {
            const int64_t n = u / (segments * g.groups), in_image = u % (segments * g.groups);
            const int64_t grp = g.by_groups ? in_image / segments : in_image % g.groups;
            const int64_t seg = g.by_groups ? in_image % segments : in_image / g.groups;
            run_segment(job, wp, n, grp, seg);
            if (!by_group) continue;
            if (finish.averages) average_group(job, n, grp, finish.averages);
            if (plain) unblock_group(job, n, grp, plain);
        }
    });
    if (by_group) return;
    if (plain) from_nchwc(y, s.n, s.m, s.w.out_size(), sizeof(float), plain, pool);
    if (finish.averages) {
        const AlignedArray<float> avg = aligned_array<float>(static_cast<size_t>(s.n * g.mb * kB));
        global_pool_nchwc(s.n, g.mb, s.w.out_size(), y, avg.get(), false, pool);
        from_nchwc(avg.get(), s.n, s.m, 1, sizeof(float), finish.averages, nullptr);
    }
}

// The epilogue with the bias, nullptr when it does nothing.
const GemmEpilogue* with_bias(const GemmEpilogue* epilogue, const float* bias, GemmEpilogue& ep) {
    ep = epilogue ? *epilogue : GemmEpilogue{};
    ep.bias = bias;
    const bool any = ep.bias || ep.sub || ep.scale || ep.shift || ep.res || ep.clamp;
    return any ? &ep : nullptr;
}

// Copies of ep's per-channel vectors of m values, `padded` values long (zeros past m), so that
// the kernel's whole-block loads stay inside them.
struct PaddedChannels {
    std::vector<std::vector<float>> held;
    void pad(GemmEpilogue& ep, int64_t m, int64_t padded) {
        for (const float** v : {&ep.bias, &ep.sub, &ep.mul, &ep.add, &ep.scale, &ep.shift}) {
            if (!*v) continue;
            held.emplace_back(static_cast<size_t>(padded), 0.0f);
            std::copy(*v, *v + m, held.back().begin());
            *v = held.back().data();
        }
    }
};

}  // namespace

void conv_nchwc(const ConvShape& s, const float* x, const float* w, const float* bias,
                const GemmEpilogue* epilogue, float* y, ThreadPool* pool, bool plain_input) {
    if (!nchwc_available() || !conv_nchwc_fits(s, plain_input))
        throw Error(ErrorKind::kInternal, "conv_nchwc: unsupported Conv");
    GemmEpilogue ep;
    run_conv(s, x, w, with_bias(epilogue, bias, ep), y, pool, plain_input);
}

bool conv_nchwc_plain_out_fits(const ConvShape& s, bool plain_input) {
    ConvShape padded = s;
    padded.m = padded_channels(s.m);
    return s.m > 0 && conv_nchwc_fits(padded, plain_input);
}

namespace {

// run_conv into a blocked scratch of whole blocks (the per-channel vectors padded with zeros to
// match), then `finish`: conv_nchwc_plain_out's and conv_nchwc_global_average's common part.
void conv_through_scratch(const ConvShape& s, const float* x, const float* w, const float* bias,
                          const GemmEpilogue* epilogue, ThreadPool* pool, bool plain_input,
                          Finish finish, const char* who) {
    if (!nchwc_available() || !conv_nchwc_plain_out_fits(s, plain_input) ||
        (epilogue && epilogue->res))
        throw Error(ErrorKind::kInternal, std::string(who) + ": unsupported Conv");
    const int64_t padded = padded_channels(s.m), out = s.w.out_size();
    GemmEpilogue ep;
    const GemmEpilogue* e = with_bias(epilogue, bias, ep);
    PaddedChannels held;
    if (e && padded != s.m) held.pad(ep, s.m, padded);
    const AlignedArray<float> yb = aligned_array<float>(static_cast<size_t>(s.n * padded * out));
    run_conv(s, x, w, e, yb.get(), pool, plain_input, finish);
}

}  // namespace

void conv_nchwc_plain_out(const ConvShape& s, const float* x, const float* w, const float* bias,
                          const GemmEpilogue* epilogue, float* y, ThreadPool* pool,
                          bool plain_input) {
    conv_through_scratch(s, x, w, bias, epilogue, pool, plain_input, Finish{y, nullptr},
                         "conv_nchwc_plain_out");
}

void conv_nchwc_global_average(const ConvShape& s, const float* x, const float* w,
                               const float* bias, const GemmEpilogue* epilogue, float* averages,
                               ThreadPool* pool) {
    conv_through_scratch(s, x, w, bias, epilogue, pool, false, Finish{nullptr, averages},
                         "conv_nchwc_global_average");
}

#else

void conv_nchwc(const ConvShape&, const float*, const float*, const float*, const GemmEpilogue*,
                float*, ThreadPool*, bool) {
    throw Error(ErrorKind::kInternal, "conv_nchwc: not built for this CPU");
}

bool conv_nchwc_plain_out_fits(const ConvShape&, bool) {
    return false;
}

void conv_nchwc_plain_out(const ConvShape&, const float*, const float*, const float*,
                          const GemmEpilogue*, float*, ThreadPool*, bool) {
    throw Error(ErrorKind::kInternal, "conv_nchwc_plain_out: not built for this CPU");
}

void conv_nchwc_global_average(const ConvShape&, const float*, const float*, const float*,
                               const GemmEpilogue*, float*, ThreadPool*) {
    throw Error(ErrorKind::kInternal, "conv_nchwc_global_average: not built for this CPU");
}

#endif

}  // namespace pg::ops
