// conv_nchwc (nchwc.h) with AVX-512F. The output channels go in groups of up to 64 (four
// blocks): a group's weights are copied transposed (pack_rows_transposed: line p holds the
// group's 64 weights of p = (input channel, kh, kw)), then each tile of 6 output pixels keeps
// 4 x 6 accumulator vectors over the whole sum, each step loading four weight vectors and
// broadcasting one input value per pixel (24 multiply-adds per 10 loads; the input of a block
// is one stream, not 16 planes). A padded input is copied with zero borders first, so no tap is
// skipped or tested. Stride-1 layers tile the padded width flat (a tile may run over a row's
// end: the pixels past the output width are computed and dropped), strided ones tile each
// output row. Work: (image, group, tile) units in one contiguous range per thread, a thread
// repacking only when its group changes. Built with -ffp-contract=off: the epilogue's operations
// are GemmEpilogue::apply's.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "base/error.h"
#include "base/thread_pool.h"
#include "ops/gemm_direct.h"
#include "ops/gemm_epilogue_avx512.h"
#include "ops/nchwc.h"
#include "ops/pack_rows_avx512.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define PG_NCHWC_AVX512 1
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace pg::ops {

bool nchwc_available() {
    return gemm_direct_available();
}

bool conv_nchwc_fits(const ConvShape& s) {
    if (s.w.nd > 2 || s.group != 1 || s.c % kNchwcBlock || s.m % kNchwcBlock) return false;
    for (int a = 0; a < 3; ++a)
        if (s.w.pad_begin[a] < 0 || s.w.pad_end[a] < 0) return false;
    return s.n > 0 && s.c > 0 && s.m > 0 && s.w.out_size() > 0;
}

#ifdef PG_NCHWC_AVX512
namespace {

#define PG_AVX512 __attribute__((target("avx512f")))

constexpr int kMaxTile = 12;            // output pixels per tile, at most
constexpr int64_t kB = kNchwcBlock;     // lanes per block
constexpr int64_t kSegmentPixels = 96;  // output pixels sharing a slice of weights
constexpr int64_t kSliceP = 128;        // values of p per slice (32 KiB of weights), about

// Pixels per tile for a group of nb output blocks: 24 accumulators (four blocks x 6 pixels,
// three x 8, two x 12; one block x 12, its loads being the bound there).
int64_t tile_width(int64_t nb) {
    return nb >= 4 ? 6 : nb == 3 ? 8 : 12;
}

// The n-th of `parts` balanced parts of [0, len): [*first, *first + *count).
void part_of(int64_t len, int64_t parts, int64_t n, int64_t* first, int64_t* count) {
    const int64_t base = len / parts, extra = len % parts;
    *first = n * base + std::min(n, extra);
    *count = base + (n < extra ? 1 : 0);
}

// One image's geometry, on the padded input. The output pixels go in order, in segments of
// about kSegmentPixels, each cut into tiles of balanced widths (at most tile_width), each
// pixel's input where its window starts: no lane is spent on a padding column or a ragged row
// end. The output blocks go in groups of at most four, of balanced sizes (96 channels: three
// and three, not four and two).
struct Geometry {
    int64_t cb = 0;          // input channel blocks
    int64_t hp = 0, wp = 0;  // padded input rows, columns
    int64_t ho = 0, wo = 0;  // output rows, columns
    int64_t sh = 1, sw = 1;
    std::vector<int64_t> taps;  // per (kh, kw): its input offset in floats
    int64_t segments = 0;       // per image and group
    int64_t groups = 0;
    int64_t mb = 0;  // output blocks
    int64_t in_block() const { return hp * wp * kB; }
    int64_t out_block() const { return ho * wo * kB; }
    int64_t pixels() const { return ho * wo; }
    // Group grp's first output block and block count.
    void group(int64_t grp, int64_t* b0, int64_t* nb) const { part_of(mb, groups, grp, b0, nb); }
};

Geometry geometry(const ConvShape& s) {
    const Window& w = s.w;
    Geometry g;
    g.cb = s.c / kB;
    g.hp = w.in[1] + w.pad_begin[1] + w.pad_end[1];
    g.wp = w.in[2] + w.pad_begin[2] + w.pad_end[2];
    g.ho = w.out[1], g.wo = w.out[2];
    g.sh = w.stride[1], g.sw = w.stride[2];
    for (int64_t kh = 0; kh < w.kernel[1]; ++kh)
        for (int64_t kw = 0; kw < w.kernel[2]; ++kw)
            g.taps.push_back((kh * w.dil[1] * g.wp + kw * w.dil[2]) * kB);
    g.segments = (g.pixels() + kSegmentPixels - 1) / kSegmentPixels;
    g.mb = s.m / kB;
    g.groups = (g.mb + 3) / 4;
    return g;
}

// A tile: its first output pixel, its pixel count and each pixel's input offset.
struct TilePlace {
    int64_t q0 = 0, np = 0;
    int64_t in[kMaxTile] = {};
};

TilePlace place(const Geometry& g, int64_t q0, int64_t np) {
    TilePlace p;
    p.q0 = q0, p.np = np;
    int64_t oh = q0 / g.wo, ow = q0 % g.wo;
    for (int64_t j = 0; j < np; ++j) {
        p.in[j] = (oh * g.sh * g.wp + ow * g.sw) * kB;
        if (++ow == g.wo) ow = 0, ++oh;
    }
    return p;
}

// The epilogue of 16 output channels from `ch` on v, GemmEpilogue::apply's order; res_at: the
// residual's 16 values at this output (when the epilogue has one).
PG_AVX512 inline __m512 finish(__m512 v, const GemmEpilogue& ep, int64_t ch, const float* res_at) {
    if (ep.bias) v = _mm512_add_ps(v, _mm512_loadu_ps(ep.bias + ch));
    if (ep.sub)
        v = _mm512_add_ps(_mm512_mul_ps(_mm512_sub_ps(v, _mm512_loadu_ps(ep.sub + ch)),
                                        _mm512_loadu_ps(ep.mul + ch)),
                          _mm512_loadu_ps(ep.add + ch));
    if (ep.scale) v = _mm512_mul_ps(v, _mm512_loadu_ps(ep.scale + ch));
    if (ep.shift) v = _mm512_add_ps(v, _mm512_loadu_ps(ep.shift + ch));
    if (ep.res) v = _mm512_add_ps(v, _mm512_loadu_ps(res_at));
    return epilogue_clamp_zmm(v, ep);
}

// One tile: the group's packed weights (64 floats per p), the image's input (channel 0) and
// each pixel's offset in it, the output at the tile's first pixel (the group's first block;
// blocks out_block apart), the epilogue (may be nullptr; ch: the group's first channel).
struct TileArgs {
    const float* wp;
    const float* x;
    const int64_t* in;
    int64_t cb0, cb1, in_block;  // input blocks [cb0, cb1); wp at cb0's first p
    const int64_t* taps;
    int64_t ntaps;
    float* y;
    int64_t out_block;
    bool first, last;  // !first: y holds the sums so far; last: the sums are whole
    const GemmEpilogue* ep;
    int64_t ch;
};

// T > 0: a.ntaps == T, unrolled.
template <int NB, int NP, int T>
PG_AVX512 __attribute__((noinline)) void conv_tile(const TileArgs& a) {
    __m512 acc[NB][NP];
    _Pragma("GCC unroll 12") for (int j = 0; j < NP; ++j)
        _Pragma("GCC unroll 4") for (int i = 0; i < NB; ++i) acc[i][j] =
            a.first ? _mm512_setzero_ps() : _mm512_loadu_ps(a.y + i * a.out_block + j * kB);
    const float* px[NP];
    _Pragma("GCC unroll 12") for (int j = 0; j < NP; ++j) px[j] = a.x + a.in[j];
    const float* w = a.wp;
    const int64_t ntaps = T > 0 ? T : a.ntaps;
    for (int64_t ib = a.cb0; ib < a.cb1; ++ib) {
        for (int64_t c = ib * a.in_block; c < ib * a.in_block + kB; ++c) {
            _Pragma("GCC unroll 9") for (int64_t t = 0; t < ntaps; ++t) {
                const int64_t o = c + a.taps[t];
                __m512 wv[NB];
                _Pragma("GCC unroll 4") for (int i = 0; i < NB; ++i) wv[i] =
                    _mm512_loadu_ps(w + 16 * i);
                w += kPackRows;
                _Pragma("GCC unroll 12") for (int j = 0; j < NP; ++j) {
                    const __m512 xv = _mm512_set1_ps(px[j][o]);
                    _Pragma("GCC unroll 4") for (int i = 0; i < NB; ++i) acc[i][j] =
                        _mm512_fmadd_ps(wv[i], xv, acc[i][j]);
                }
            }
        }
    }
    const GemmEpilogue* ep = a.last ? a.ep : nullptr;
    _Pragma("GCC unroll 12") for (int j = 0; j < NP; ++j)
        _Pragma("GCC unroll 4") for (int i = 0; i < NB; ++i) {
        float* dst = a.y + i * a.out_block + j * kB;
        __m512 v = acc[i][j];
        if (ep)
            v = finish(v, *ep, a.ch + 16 * i, ep->res ? ep->res + (dst - ep->res_origin) : nullptr);
        _mm512_storeu_ps(dst, v);
    }
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

// The tile for nb output blocks, np pixels and `taps` taps (1 and 9 unrolled).
TileFn tile_fn(int64_t nb, int64_t np, int64_t taps) {
    return taps == 1   ? tile_fn_taps<1>(nb, np)
           : taps == 9 ? tile_fn_taps<9>(nb, np)
                       : tile_fn_taps<0>(nb, np);
}

// x copied with zero borders: (n, cb, hp, wp, 16); each padded row written once.
std::unique_ptr<float[]> padded_copy(const ConvShape& s, const Geometry& g, const float* x,
                                     ThreadPool* pool) {
    const int64_t rows = s.n * g.cb * g.hp, h = s.w.in[1], w = s.w.in[2];
    const int64_t top = s.w.pad_begin[1], left = s.w.pad_begin[2];
    std::unique_ptr<float[]> xp(new float[static_cast<size_t>(rows * g.wp * kB)]);
    run_parallel(rows * g.wp > (1 << 14) ? pool : nullptr, rows, [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
            float* dst = xp.get() + r * g.wp * kB;
            const int64_t plane = r / g.hp, ih = r % g.hp - top;
            if (ih < 0 || ih >= h) {
                std::fill_n(dst, g.wp * kB, 0.0f);
                continue;
            }
            std::fill_n(dst, left * kB, 0.0f);
            std::memcpy(dst + left * kB, x + (plane * h + ih) * w * kB,
                        static_cast<size_t>(w * kB) * sizeof(float));
            std::fill_n(dst + (left + w) * kB, (g.wp - left - w) * kB, 0.0f);
        }
    });
    return xp;
}

// What every part reads and writes.
struct Job {
    const ConvShape& s;
    const Geometry& g;
    const float* x;  // padded when the Conv pads
    const float* w;
    const GemmEpilogue* ep;
    float* y;
};

// Input blocks per slice: all of them, or about kSliceP values of p (so a slice's weights stay
// in L1 for the segment's tiles) when the image is one segment (its slices are then packed as
// they come, the next one's weights prefetched: a small map's layer mostly waits on its
// weights) or a group's weights pass 256 KiB (they would stream from L2 into every tile).
int64_t slice_blocks(const ConvShape& s, int64_t taps, bool one_segment) {
    const int64_t cb = s.c / kB;
    if (!one_segment && cb * kB * taps * kPackRows * 4 <= (256 << 10)) return cb;
    return std::clamp<int64_t>(kSliceP / (kB * taps), 1, cb);
}

// Segment seg of image n, group grp, slice after slice. wp holds the group's packed weights,
// or (`packed` false) room for one slice's, packed here.
void run_segment(const Job& j, float* wp, bool packed, int64_t n, int64_t grp, int64_t seg) {
    const Geometry& g = j.g;
    int64_t b0 = 0, nb = 0, q0 = 0, len = 0;
    g.group(grp, &b0, &nb);
    part_of(g.pixels(), g.segments, seg, &q0, &len);
    const int64_t ntaps = static_cast<int64_t>(g.taps.size()), k = j.s.c * ntaps;
    const int64_t step = slice_blocks(j.s, ntaps, g.segments == 1);
    const int64_t width = tile_width(nb), tiles = (len + width - 1) / width;
    float* y_group = j.y + (n * g.mb + b0) * g.out_block();
    TilePlace places[kSegmentPixels];
    for (int64_t t = 0; t < tiles; ++t) {
        int64_t first = 0, np = 0;
        part_of(len, tiles, t, &first, &np);
        places[t] = place(g, q0 + first, np);
    }
    for (int64_t cb0 = 0; cb0 < g.cb; cb0 += step) {
        const int64_t cb1 = std::min(g.cb, cb0 + step), p0 = cb0 * kB * ntaps;
        if (!packed)
            pack_rows_transposed(j.w + b0 * kB * k, k, nb * kB, p0, (cb1 - cb0) * kB * ntaps, k,
                                 wp);
        for (int64_t t = 0; t < tiles; ++t) {
            const TilePlace& p = places[t];
            const TileArgs a{packed ? wp + p0 * kPackRows : wp,
                             j.x + n * g.cb * g.in_block(),
                             p.in,
                             cb0,
                             cb1,
                             g.in_block(),
                             g.taps.data(),
                             ntaps,
                             y_group + p.q0 * kB,
                             g.out_block(),
                             cb0 == 0,
                             cb1 == g.cb,
                             j.ep,
                             b0 * kB};
            tile_fn(nb, p.np, ntaps)(a);
        }
    }
}

}  // namespace

void conv_nchwc(const ConvShape& s, const float* x, const float* w, const float* bias,
                const GemmEpilogue* epilogue, float* y, ThreadPool* pool) {
    if (!nchwc_available() || !conv_nchwc_fits(s))
        throw Error(ErrorKind::kInternal, "conv_nchwc: unsupported Conv");
    const Geometry g = geometry(s);
    const bool pads = g.hp != s.w.in[1] || g.wp != s.w.in[2];
    std::unique_ptr<float[]> xp = pads ? padded_copy(s, g, x, pool) : nullptr;
    GemmEpilogue ep = epilogue ? *epilogue : GemmEpilogue{};
    ep.bias = bias;
    const bool any = ep.bias || ep.sub || ep.scale || ep.shift || ep.res || ep.clamp;
    const Job job{s, g, pads ? xp.get() : x, w, any ? &ep : nullptr, y};
    const int64_t taps = static_cast<int64_t>(g.taps.size()), k = s.c * taps;
    // One segment per image: slices packed as they come; else the group's weights at once.
    const bool whole = g.segments > 1;
    const int64_t room = whole ? k : slice_blocks(s, taps, true) * kB * taps;
    run_parts(pool, s.n * g.groups * g.segments, [&](int64_t b, int64_t e) {
        std::unique_ptr<float[]> wp(new float[static_cast<size_t>(room * kPackRows)]);
        int64_t packed = -1;
        for (int64_t u = b; u < e; ++u) {
            const int64_t seg = u % g.segments, ng = u / g.segments, grp = ng % g.groups,
                          n = ng / g.groups;
            if (whole && grp != packed) {
                int64_t b0 = 0, nb = 0;
                g.group(grp, &b0, &nb);
                pack_rows_transposed(w + b0 * kB * k, k, nb * kB, 0, k, k, wp.get());
                packed = grp;
            }
            run_segment(job, wp.get(), whole, n, grp, seg);
        }
    });
}

#else

void conv_nchwc(const ConvShape&, const float*, const float*, const float*, const GemmEpilogue*,
                float*, ThreadPool*) {
    throw Error(ErrorKind::kInternal, "conv_nchwc: not built for this CPU");
}

#endif

}  // namespace pg::ops
