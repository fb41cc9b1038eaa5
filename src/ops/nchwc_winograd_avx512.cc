// conv_nchwc_winograd (nchwc_winograd.h) with AVX-512F. Scratch per thread: the group's
// transformed filters u[xi][c][nb * 16] (at most 1 MiB: groups of fewer blocks for many input
// channels), a slice's transformed input v[xi][c / 16][tile][16] and the band's sums
// m[xi][block][tile][16]. The products are register tiles of nb blocks x up to 12 tiles (24
// accumulators, as conv_nchwc's), each step loading nb filter vectors and broadcasting one
// transformed input value per tile. Built with -ffp-contract=off: the transforms' adds and the
// epilogue round as written. The output transform streams its stores around the caches (MOVNTPS,
// y 64-byte aligned), as the depthwise Conv and the pools do: kernel_ab wino_stream, ResNet-50
// 0.985, VGG-19 0.985, SqueezeNet 0.984, Inception-v1 0.988, Inception-v2 0.995.
#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <utility>

#include "base/aligned.h"
#include "base/error.h"
#include "base/mapped_buffer.h"
#include "base/thread_pool.h"
#include "ops/gemm_epilogue_avx512.h"
#include "ops/nchwc.h"
#include "ops/nchwc_groups.h"
#include "ops/nchwc_winograd.h"
#include "ops/pack_rows_avx512.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define PG_WINO_AVX512 1
#endif

namespace pg::ops {

namespace {
std::atomic<bool> g_on{true};
std::atomic<bool> g_transposed_filters{true};  // set_nchwc_winograd_transposed_filters
std::atomic<bool> g_input_prefetch{true};      // set_nchwc_winograd_input_prefetch
std::atomic<bool> g_output_prefetch{true};     // set_nchwc_winograd_output_prefetch
std::atomic<bool> g_stream{true};              // set_nchwc_winograd_stream_stores
constexpr int64_t kMaxTileColumns = 2048;
}  // namespace

bool set_nchwc_winograd_stream_stores(bool on) {
    return g_stream.exchange(on);
}

bool set_nchwc_winograd(bool on) {
    return g_on.exchange(on);
}

bool set_nchwc_winograd_output_prefetch(bool on) {
    return g_output_prefetch.exchange(on);
}

bool set_nchwc_winograd_input_prefetch(bool on) {
    return g_input_prefetch.exchange(on);
}

bool set_nchwc_winograd_transposed_filters(bool on) {
    return g_transposed_filters.exchange(on);
}

bool nchwc_winograd_takes(const ConvShape& s) {
    const Window& g = s.w;
    if (!nchwc_available() || !conv_nchwc_fits(s, false) || g.nd != 2) return false;
    for (int a = 1; a < 3; ++a)
        if (g.kernel[a] != 3 || g.stride[a] != 1 || g.dil[a] != 1 || g.pad_begin[a] > 2 ||
            g.pad_end[a] > 2)
            return false;
    // A band is whole tile rows, so its scratch grows with the width: at most kMaxTileColumns
    // (then 16 MiB of band scratch a thread; a wider map, however hostile, runs direct).
    return (g.out[2] + 1) / 2 <= kMaxTileColumns;
}

bool nchwc_winograd_pays(const ConvShape& s) {
    if (!g_on.load(std::memory_order_relaxed) || !nchwc_winograd_takes(s)) return false;
    // Measured against conv_nchwc on single layers, 2 threads (docs/performance.md, session
    // 13): 0.53-0.75 of its time from 13 x 13 maps up (7 x 7 tiles), 16 to 512 channels; at
    // 7 x 7 (4 x 4 tiles, a quarter of them padding) 1.0 with 224 channels, 1.25 with 512.
    // Fewer than 64 output channels (DenseNet's 128 -> 32) are left to conv_nchwc: its memory
    // was at 1.10 of the criterion's already, and the scratch (0.4 MiB a thread) went over.
    return s.m >= 64 && ((s.w.out[1] + 1) / 2) * ((s.w.out[2] + 1) / 2) >= 49;
}

#ifdef PG_WINO_AVX512
namespace {

#define PG_AVX512 __attribute__((target("avx512f")))
#define PG_AVX512_INLINE __attribute__((target("avx512f"), always_inline)) inline

constexpr int64_t kB = kNchwcBlock;
// Inputs of at most this many bytes an image are fetched a block ahead in the input transform.
constexpr int64_t kPrefetchInputBytes = 2 << 20;
constexpr int64_t kSlice = 64;      // input channels per slice of the transformed input
constexpr int64_t kBandTiles = 24;  // tiles per band, at least (whole tile rows)

// Register tile widths as conv_nchwc's: four blocks x 6 tiles, three x 8, two or one x 12.
int tiles_for(int64_t nb) {
    return nb >= 4 ? 6 : nb == 3 ? 8 : 12;
}

struct Geometry {
    int64_t cb = 0, mb = 0;  // input / output blocks
    int64_t ih = 0, iw = 0, oh = 0, ow = 0, pt = 0, pl = 0;
    int64_t th = 0, tw = 0;  // tile rows / columns
    int64_t most = 4, groups = 0, band_rows = 1, bands = 0;
    int64_t widest = 0;  // blocks in the largest group
    void group(int64_t grp, int64_t* b0, int64_t* nb) const {
        nchwc_part_of(mb, groups, grp, b0, nb);
    }
};

Geometry geometry(const ConvShape& s, int threads) {
    Geometry g;
    g.cb = s.c / kB, g.mb = s.m / kB;
    g.ih = s.w.in[1], g.iw = s.w.in[2], g.oh = s.w.out[1], g.ow = s.w.out[2];
    g.pt = s.w.pad_begin[1], g.pl = s.w.pad_begin[2];
    g.th = (g.oh + 1) / 2, g.tw = (g.ow + 1) / 2;
    // A group's transformed filters take 1 KiB per input channel and block: at most 1 MiB.
    g.most = std::clamp<int64_t>(1024 / s.c, 1, 4);
    g.groups = nchwc_group_count(g.mb, threads, g.most);
    g.widest = (g.mb + g.groups - 1) / g.groups;
    g.band_rows = std::clamp<int64_t>((kBandTiles + g.tw - 1) / g.tw, 1, g.th);
    g.bands = (g.th + g.band_rows - 1) / g.band_rows;
    return g;
}

// G g G^T of 16 filters at once from their 9 taps g (one input channel's, 16 output channels in
// the lanes) to u[xi] at u + xi * step, conv_winograd's operations in its order.
PG_AVX512_INLINE void transform16(const __m512 (&g)[9], float* u, int64_t step) {
    const __m512 half = _mm512_set1_ps(0.5f);
    __m512 t[4][3];
    for (int j = 0; j < 3; ++j) {
        const __m512 r0 = g[j], r1 = g[3 + j], r2 = g[6 + j];
        t[0][j] = r0;
        t[1][j] = _mm512_mul_ps(half, _mm512_add_ps(_mm512_add_ps(r0, r1), r2));
        t[2][j] = _mm512_mul_ps(half, _mm512_add_ps(_mm512_sub_ps(r0, r1), r2));
        t[3][j] = r2;
    }
    for (int r = 0; r < 4; ++r) {
        const __m512 r0 = t[r][0], r1 = t[r][1], r2 = t[r][2];
        _mm512_storeu_ps(u + (4 * r) * step, r0);
        _mm512_storeu_ps(u + (4 * r + 1) * step,
                         _mm512_mul_ps(half, _mm512_add_ps(_mm512_add_ps(r0, r1), r2)));
        _mm512_storeu_ps(u + (4 * r + 2) * step,
                         _mm512_mul_ps(half, _mm512_add_ps(_mm512_sub_ps(r0, r1), r2)));
        _mm512_storeu_ps(u + (4 * r + 3) * step, r2);
    }
}

// One input channel's filters of 16 output channels (w: the first one's taps, the others 9 * c
// floats apart, c input channels), gathered.
PG_AVX512_INLINE void filters16(const float* w, int64_t c, float* u, int64_t step) {
    const __m512i idx =
        _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                           _mm512_set1_epi32(static_cast<int>(9 * c)));
    __m512 g[9];
    for (int j = 0; j < 9; ++j) g[j] = _mm512_i32gather_ps(idx, w + j, 4);
    transform16(g, u, step);
}

// Sixteen input channels' filters of 16 output channels (w as filters16's): their 144 taps, which
// are adjacent in each output channel's row, transposed 16 x 16 at a time (nine loads per 16
// values instead of a gather per tap: the per-call transform was 4-8 % of ResNet-50's and
// Inception-v2's time), then transformed channel by channel.
PG_AVX512_INLINE void filters16x16(const float* w, int64_t c, float* u, int64_t row, int64_t step) {
    alignas(64) float taps[144 * 16];  // taps[(ci * 9 + j) * 16 + lane]
    const bool ahead = g_pack_ahead.load(std::memory_order_relaxed);
    for (int q = 0; q < 9; ++q) {
        if (ahead)  // as pack_rows_transposed: the rows' lines a few blocks on, cold from memory
            for (int l = 0; l < 16; ++l)
                _mm_prefetch(
                    reinterpret_cast<const char*>(w + l * 9 * c + q * 16 + kPackAheadFloats),
                    _MM_HINT_T0);
        __m512 r[16];
        transpose16(w + q * 16, 9 * c, 15, r);
        for (int l = 0; l < 16; ++l) _mm512_store_ps(taps + (q * 16 + l) * 16, r[l]);
    }
    for (int ci = 0; ci < 16; ++ci) {
        __m512 g[9];
        for (int j = 0; j < 9; ++j) g[j] = _mm512_load_ps(taps + (ci * 9 + j) * 16);
        transform16(g, u + ci * row, step);
    }
}

// Output blocks [b0, b0 + nb) of w (m x c x 3 x 3): u[xi][ci][nb * 16].
PG_AVX512 void filters(const float* w, int64_t c, int64_t b0, int64_t nb, float* u) {
    const int64_t row = nb * kB, step = c * row;
    for (int64_t i = 0; i < nb; ++i) {
        const float* wi = w + (b0 + i) * kB * c * 9;
        int64_t ci = 0;
        if (g_transposed_filters.load(std::memory_order_relaxed))
            for (; ci + kB <= c; ci += kB)
                filters16x16(wi + ci * 9, c, u + ci * row + i * kB, row, step);
        for (; ci < c; ++ci) filters16(wi + ci * 9, c, u + ci * row + i * kB, step);
    }
}

// B^T d B of one tile's 4x4 pixels d (16 channels each): v[xi] at v + xi * step.
PG_AVX512_INLINE void input16(const __m512 (&d)[4][4], float* v, int64_t step) {
    __m512 q[4][4];
    for (int r = 0; r < 4; ++r) {
        q[r][0] = _mm512_sub_ps(d[r][0], d[r][2]);
        q[r][1] = _mm512_add_ps(d[r][1], d[r][2]);
        q[r][2] = _mm512_sub_ps(d[r][2], d[r][1]);
        q[r][3] = _mm512_sub_ps(d[r][1], d[r][3]);
    }
    for (int col = 0; col < 4; ++col) {
        _mm512_storeu_ps(v + col * step, _mm512_sub_ps(q[0][col], q[2][col]));
        _mm512_storeu_ps(v + (4 + col) * step, _mm512_add_ps(q[1][col], q[2][col]));
        _mm512_storeu_ps(v + (8 + col) * step, _mm512_sub_ps(q[2][col], q[1][col]));
        _mm512_storeu_ps(v + (12 + col) * step, _mm512_sub_ps(q[1][col], q[3][col]));
    }
}

// Input blocks [cb0, cb0 + cbs) of image x under tile rows [ty0, ty1): v[xi][cbl][tile][16],
// zero outside the image.
PG_AVX512 void input(const Geometry& g, const float* x, int64_t cb0, int64_t cbs, int64_t ty0,
                     int64_t ty1, float* v) {
    const int64_t nt = (ty1 - ty0) * g.tw, step = cbs * nt * kB;
    const int64_t plane = g.ih * g.iw * kB;
    const bool ahead =
        g_input_prefetch.load(std::memory_order_relaxed) && g.cb * plane * 4 <= kPrefetchInputBytes;
    for (int64_t cbl = 0; cbl < cbs; ++cbl) {
        const float* xb = x + (cb0 + cbl) * plane;
        const bool fetch = ahead && cb0 + cbl + 1 < g.cb;  // the next slice's first block too
        for (int64_t ty = ty0; ty < ty1; ++ty)
            for (int64_t tx = 0; tx < g.tw; ++tx) {
                const int64_t iy = 2 * ty - g.pt, ix = 2 * tx - g.pl;
                const bool inside = iy >= 0 && ix >= 0 && iy + 4 <= g.ih && ix + 4 <= g.iw;
                if (fetch)  // the next block's lines under this tile, while this one's transform
                    for (int r = 0; r < 4; ++r) {
                        const int64_t row = std::clamp<int64_t>(iy + r, 0, g.ih - 1);
                        for (int64_t col = tx == 0 ? 0 : 2; col < 4; ++col)
                            _mm_prefetch(
                                reinterpret_cast<const char*>(
                                    xb + plane +
                                    (row * g.iw + std::clamp<int64_t>(ix + col, 0, g.iw - 1)) * kB),
                                _MM_HINT_T0);
                    }
                __m512 d[4][4];
                for (int r = 0; r < 4; ++r)
                    for (int col = 0; col < 4; ++col) {
                        const bool in = inside || (iy + r >= 0 && iy + r < g.ih && ix + col >= 0 &&
                                                   ix + col < g.iw);
                        d[r][col] = in ? _mm512_loadu_ps(xb + ((iy + r) * g.iw + ix + col) * kB)
                                       : _mm512_setzero_ps();
                    }
                const int64_t t = (ty - ty0) * g.tw + tx;
                input16(d, v + (cbl * nt + t) * kB, step);
            }
    }
}

// One register tile of a product: NB blocks x NP tiles, over the slice's cbs input blocks; u
// at the slice's first channel ([ci][NB * 16]), v at the first tile (input blocks vstride
// apart), m at the first tile (output blocks mstride apart), which holds the sums so far unless
// `first`.
template <int NB, int NP>
PG_AVX512 __attribute__((noinline)) void product(const float* u, const float* v, int64_t vstride,
                                                 int64_t cbs, float* m, int64_t mstride,
                                                 bool first) {
    __m512 acc[NB][NP];
    _Pragma("GCC unroll 12") for (int j = 0; j < NP; ++j)
        _Pragma("GCC unroll 4") for (int i = 0; i < NB; ++i) acc[i][j] =
            first ? _mm512_setzero_ps() : _mm512_loadu_ps(m + i * mstride + j * kB);
    for (int64_t cb = 0; cb < cbs; ++cb) {
        const float* vb = v + cb * vstride;
        const float* ub = u + cb * kB * NB * kB;
        _Pragma("GCC unroll 1") for (int l0 = 0; l0 < kB; l0 += 4) {
            _Pragma("GCC unroll 4") for (int l = l0; l < l0 + 4; ++l) {
                __m512 wv[NB];
                _Pragma("GCC unroll 4") for (int i = 0; i < NB; ++i) wv[i] =
                    _mm512_loadu_ps(ub + l * NB * kB + i * kB);
                _Pragma("GCC unroll 12") for (int j = 0; j < NP; ++j) {
                    const __m512 xv = _mm512_set1_ps(vb[j * kB + l]);
                    _Pragma("GCC unroll 4") for (int i = 0; i < NB; ++i) acc[i][j] =
                        _mm512_fmadd_ps(wv[i], xv, acc[i][j]);
                }
            }
        }
    }
    _Pragma("GCC unroll 12") for (int j = 0; j < NP; ++j)
        _Pragma("GCC unroll 4") for (int i = 0; i < NB; ++i)
            _mm512_storeu_ps(m + i * mstride + j * kB, acc[i][j]);
}

using ProductFn = void (*)(const float*, const float*, int64_t, int64_t, float*, int64_t, bool);

template <int NB, size_t... P>
constexpr std::array<ProductFn, sizeof...(P) + 1> products_of(std::index_sequence<P...>) {
    return {nullptr, product<NB, static_cast<int>(P) + 1>...};
}

template <int NB>
constexpr auto kProducts = products_of<NB>(std::make_index_sequence<NB >= 4   ? 6
                                                                    : NB == 3 ? 8
                                                                              : 12>());

ProductFn product_fn(int64_t nb, int64_t np) {
    switch (nb) {
        case 1:
            return kProducts<1>[np];
        case 2:
            return kProducts<2>[np];
        case 3:
            return kProducts<3>[np];
        default:
            return kProducts<4>[np];
    }
}

// A^T m A of one tile's 16 sums (m[xi] at m + xi * step): out[a][b], output pixel (2 ty + a,
// 2 tx + b).
PG_AVX512_INLINE void output16(const float* m, int64_t step, __m512 (&out)[2][2]) {
    __m512 s[2][4];
    for (int col = 0; col < 4; ++col) {
        const __m512 m0 = _mm512_loadu_ps(m + col * step),
                     m1 = _mm512_loadu_ps(m + (4 + col) * step);
        const __m512 m2 = _mm512_loadu_ps(m + (8 + col) * step);
        const __m512 m3 = _mm512_loadu_ps(m + (12 + col) * step);
        s[0][col] = _mm512_add_ps(_mm512_add_ps(m0, m1), m2);
        s[1][col] = _mm512_sub_ps(_mm512_sub_ps(m1, m2), m3);
    }
    for (int a = 0; a < 2; ++a) {
        out[a][0] = _mm512_add_ps(_mm512_add_ps(s[a][0], s[a][1]), s[a][2]);
        out[a][1] = _mm512_sub_ps(_mm512_sub_ps(s[a][1], s[a][2]), s[a][3]);
    }
}

// The line at p fetched for writing (PREFETCHW): the output was last written by either core.
__attribute__((target("avx512f,prfchw"), always_inline)) inline void prefetch_for_write(
    const float* p) {
    __builtin_prefetch(p, 1, 3);
}

// The band's sums (m[xi][block][tile][16], nb blocks) back to the output blocks [b0, b0 + nb)
// of image y, then the epilogue (ep may be nullptr).
__attribute__((target("avx512f,prfchw"))) void output(const Geometry& g, const float* m, int64_t b0,
                                                      int64_t nb, int64_t ty0, int64_t ty1,
                                                      float* y, const GemmEpilogue* ep,
                                                      bool stream) {
    const int64_t nt = (ty1 - ty0) * g.tw, step = nb * nt * kB;
    for (int64_t i = 0; i < nb; ++i) {
        float* yb = y + (b0 + i) * g.oh * g.ow * kB;
        for (int64_t ty = ty0; ty < ty1; ++ty)
            for (int64_t tx = 0; tx < g.tw; ++tx) {
                if (!stream && g_output_prefetch.load(std::memory_order_relaxed) &&
                    2 * tx + 5 < g.ow)
                    for (int a = 0; a < 2 && 2 * ty + a < g.oh; ++a) {
                        float* ahead = yb + ((2 * ty + a) * g.ow + 2 * tx + 4) * kB;
                        prefetch_for_write(ahead);
                        prefetch_for_write(ahead + kB);
                        if (ep && ep->res) {
                            _mm_prefetch(
                                reinterpret_cast<const char*>(ep->res + (ahead - ep->res_origin)),
                                _MM_HINT_T0);
                            _mm_prefetch(reinterpret_cast<const char*>(
                                             ep->res + (ahead + kB - ep->res_origin)),
                                         _MM_HINT_T0);
                        }
                    }
                __m512 out[2][2];
                output16(m + (i * nt + (ty - ty0) * g.tw + tx) * kB, step, out);
                for (int a = 0; a < 2 && 2 * ty + a < g.oh; ++a)
                    for (int b = 0; b < 2 && 2 * tx + b < g.ow; ++b) {
                        float* dst = yb + ((2 * ty + a) * g.ow + 2 * tx + b) * kB;
                        __m512 v = out[a][b];
                        if (ep)
                            v = epilogue_channels_zmm(
                                v, *ep, (b0 + i) * kB,
                                ep->res ? ep->res + (dst - ep->res_origin) : nullptr);
                        store_zmm(dst, v, stream);
                    }
            }
    }
}

// A thread's scratch, kept from call to call (allocated per call, its 0.3-2.5 MiB came back
// from the kernel as fresh pages every time: 64 -> 64 @14 took 2.3x the direct time), in a
// mapping of its own: grown on the heap, it left each smaller block behind as a resident hole.
// Within one Conv call a thread may run several ranges of units (run_parts' chunks and stolen
// tails), so the group whose filters u holds is kept with the call it belongs to.
struct Scratch {
    float *u = nullptr, *v = nullptr, *m = nullptr;
    int64_t group = -1;  // whose filters u holds, in call `call`
    uint64_t call = 0;
};

std::atomic<uint64_t> g_calls{0};  // conv_nchwc_winograd calls so far

Scratch& thread_scratch(uint64_t call, int64_t u, int64_t v, int64_t m) {
    thread_local KeptArray<float> buf;
    thread_local Scratch sc;
    float* p = buf.at_least(static_cast<size_t>(u + v + m));
    if (sc.call != call || sc.u != p) sc.group = -1, sc.call = call;
    sc.u = p, sc.v = p + u, sc.m = p + u + v;
    return sc;
}

struct Job {
    const ConvShape& s;
    const Geometry& g;
    const float* x;
    const float* w;
    const GemmEpilogue* ep;
    float* y;
    bool stream;  // the output transform's stores around the caches (y 64-byte aligned)
};

// Band `band` of image n, group grp: the input slice after slice, the 16 products of each, then
// the output transform.
void run_unit(const Job& j, Scratch& sc, int64_t n, int64_t grp, int64_t band) {
    const Geometry& g = j.g;
    int64_t b0 = 0, nb = 0;
    g.group(grp, &b0, &nb);
    if (sc.group != grp) filters(j.w, j.s.c, b0, nb, sc.u), sc.group = grp;
    const int64_t ty0 = band * g.band_rows, ty1 = std::min(g.th, ty0 + g.band_rows);
    const int64_t nt = (ty1 - ty0) * g.tw, width = tiles_for(nb);
    const float* x = j.x + n * g.cb * g.ih * g.iw * kB;
    for (int64_t c0 = 0; c0 < j.s.c; c0 += kSlice) {
        const int64_t cbs = std::min(kSlice, j.s.c - c0) / kB;
        input(g, x, c0 / kB, cbs, ty0, ty1, sc.v);
        for (int xi = 0; xi < 16; ++xi) {
            const float* u = sc.u + (xi * j.s.c + c0) * nb * kB;
            const float* v = sc.v + xi * cbs * nt * kB;
            float* m = sc.m + xi * nb * nt * kB;
            for (int64_t t0 = 0; t0 < nt; t0 += width) {
                const int64_t np = std::min(width, nt - t0);
                product_fn(nb, np)(u, v + t0 * kB, nt * kB, cbs, m + t0 * kB, nt * kB, c0 == 0);
            }
        }
    }
    output(g, sc.m, b0, nb, ty0, ty1, j.y + n * g.mb * g.oh * g.ow * kB, j.ep, j.stream);
}

}  // namespace

void conv_nchwc_winograd(const ConvShape& s, const float* x, const float* w, const float* bias,
                         const GemmEpilogue* epilogue, float* y, ThreadPool* pool) {
    if (!nchwc_winograd_takes(s))
        throw Error(ErrorKind::kInternal, "conv_nchwc_winograd: unsupported Conv");
    const Geometry g = geometry(s, pool ? pool->num_threads() : 1);
    GemmEpilogue ep = epilogue ? *epilogue : GemmEpilogue{};
    ep.bias = bias;
    const bool any = ep.bias || ep.sub || ep.scale || ep.shift || ep.res || ep.clamp;
    const bool stream =
        g_stream.load(std::memory_order_relaxed) && !ep.keep_cached && streamable(y);
    const Job job{s, g, x, w, any ? &ep : nullptr, y, stream};
    const int64_t per_image = g.groups * g.bands, most_tiles = g.band_rows * g.tw;
    const uint64_t call = g_calls.fetch_add(1) + 1;
    run_parts(pool, s.n * per_image, [&](int64_t b, int64_t e) {
        Scratch& sc = thread_scratch(call, 16 * s.c * g.widest * kB, 16 * kSlice * most_tiles,
                                     16 * g.widest * kB * most_tiles);
        for (int64_t u = b; u < e; ++u) {
            const int64_t n = u / per_image, grp = u % per_image / g.bands;
            run_unit(job, sc, n, grp, u % g.bands);
        }
        if (stream) _mm_sfence();  // the streamed outputs before the part ends
    });
}

#else

void conv_nchwc_winograd(const ConvShape&, const float*, const float*, const float*,
                         const GemmEpilogue*, float*, ThreadPool*) {
    throw Error(ErrorKind::kInternal, "conv_nchwc_winograd: not built for this CPU");
}

#endif

}  // namespace pg::ops
