// Winograd F(2x2, 3x3) transforms (see conv_winograd_tx.h). Every loop runs over contiguous
// channels or tiles so the compiler vectorizes it; the bodies are inlined into a baseline and an
// AVX-512 wrapper, picked once from the CPU.
#include "ops/conv_winograd_tx.h"

#include <algorithm>
#include <vector>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#define PG_INLINE inline __attribute__((always_inline))

namespace pg::ops {
namespace {

constexpr int64_t kChunk = 64;  // channels per filter chunk

// G applied to the rows of 3 values (r0, r1, r2) -> 4 values, as in wino_filters.
PG_INLINE void g_rows(const float* __restrict r0, const float* __restrict r1,
                      const float* __restrict r2, float* __restrict o0, float* __restrict o1,
                      float* __restrict o2, float* __restrict o3, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        o0[i] = r0[i];
        o1[i] = 0.5f * (r0[i] + r1[i] + r2[i]);
        o2[i] = 0.5f * (r0[i] - r1[i] + r2[i]);
        o3[i] = r2[i];
    }
}

PG_INLINE void filters_body(const float* w, int64_t cg, int64_t k0, int64_t kn, int64_t kb,
                            int64_t ke, float* u) {
    const int64_t plane = kn * cg;
    float taps[9][kChunk], t[4][3][kChunk];  // taps[j][c], then t[row][column][c]
    for (int64_t k = kb; k < ke; ++k) {
        for (int64_t c0 = 0; c0 < cg; c0 += kChunk) {
            const int64_t n = std::min(kChunk, cg - c0);
            const float* f = w + ((k0 + k) * cg + c0) * 9;
            for (int64_t c = 0; c < n; ++c)
                for (int j = 0; j < 9; ++j) taps[j][c] = f[c * 9 + j];
            for (int j = 0; j < 3; ++j)
                g_rows(taps[j], taps[3 + j], taps[6 + j], t[0][j], t[1][j], t[2][j], t[3][j], n);
            for (int r = 0; r < 4; ++r) {
                float* o = u + 4 * r * plane + k * cg + c0;
                g_rows(t[r][0], t[r][1], t[r][2], o, o + plane, o + 2 * plane, o + 3 * plane, n);
            }
        }
    }
}

// B^T applied to 4 rows (d0..d3) of n values -> 4 rows.
PG_INLINE void bt_rows(const float* __restrict d0, const float* __restrict d1,
                       const float* __restrict d2, const float* __restrict d3, float* __restrict o0,
                       float* __restrict o1, float* __restrict o2, float* __restrict o3,
                       int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        o0[i] = d0[i] - d2[i];
        o1[i] = d1[i] + d2[i];
        o2[i] = d2[i] - d1[i];
        o3[i] = d1[i] - d3[i];
    }
}

// ev[j] = src[2 j], od[j] = src[2 j + 1] for j < n.
using Deinterleave = void (*)(const float*, float*, float*, int64_t);

void deinterleave_base(const float* __restrict src, float* __restrict ev, float* __restrict od,
                       int64_t n) {
    for (int64_t j = 0; j < n; ++j) ev[j] = src[2 * j], od[j] = src[2 * j + 1];
}

#if defined(__x86_64__) && defined(__GNUC__)
#define PG_AVX512 __attribute__((target("avx512f")))
// Two permutes per 16 pairs; the last pairs through masked loads and stores.
PG_AVX512 void deinterleave_avx512(const float* __restrict src, float* __restrict ev,
                                   float* __restrict od, int64_t n) {
    const __m512i even =
        _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
    int64_t j = 0;
    for (; j + 16 <= n; j += 16) {
        const __m512 a = _mm512_loadu_ps(src + 2 * j), b = _mm512_loadu_ps(src + 2 * j + 16);
        _mm512_storeu_ps(ev + j, _mm512_permutex2var_ps(a, even, b));
        _mm512_storeu_ps(od + j, _mm512_permutex2var_ps(a, odd, b));
    }
    if (j == n) return;
    const int64_t rest = n - j;  // 1..15 pairs: 2..30 floats
    const __mmask16 lo = rest >= 8 ? 0xFFFF : static_cast<__mmask16>((1u << (2 * rest)) - 1);
    const __mmask16 hi = rest > 8 ? static_cast<__mmask16>((1u << (2 * rest - 16)) - 1) : 0;
    const __mmask16 out = static_cast<__mmask16>((1u << rest) - 1);
    const __m512 a = _mm512_maskz_loadu_ps(lo, src + 2 * j);
    const __m512 b = _mm512_maskz_loadu_ps(hi, src + 2 * j + 16);
    _mm512_mask_storeu_ps(ev + j, out, _mm512_permutex2var_ps(a, even, b));
    _mm512_mask_storeu_ps(od + j, out, _mm512_permutex2var_ps(a, odd, b));
}
#endif

// The even (ev) and odd (od) columns, j <= tw, of the padded input row under tile-row offset r.
template <Deinterleave kSplit>
PG_INLINE void split_row(const WinoGeometry& s, const float* row, float* ev, float* od) {
    const int64_t n = s.tw + 1;
    if (!row) {
        std::fill(ev, ev + n, 0.0f), std::fill(od, od + n, 0.0f);
        return;
    }
    // Interior: both columns inside the row, a plain deinterleave the compiler vectorizes.
    const int64_t lo = std::min(n, (s.pl + 1) / 2);
    const int64_t hi = std::max(lo, std::min(n, (s.iw + s.pl) / 2));
    kSplit(row + 2 * lo - s.pl, ev + lo, od + lo, hi - lo);
    auto edge = [&](int64_t j) {
        const int64_t q0 = 2 * j - s.pl, q1 = q0 + 1;
        ev[j] = q0 >= 0 && q0 < s.iw ? row[q0] : 0.0f;
        od[j] = q1 >= 0 && q1 < s.iw ? row[q1] : 0.0f;
    };
    for (int64_t j = 0; j < lo; ++j) edge(j);
    for (int64_t j = hi; j < n; ++j) edge(j);
}

// Each input row under the band is split and column-transformed once (rows 2 ty - pt + r are
// shared by two tile rows): p[row][column][tx], then B^T over each tile row's four rows.
template <Deinterleave kSplit>
PG_INLINE void input_body(const WinoGeometry& s, const float* xg, int64_t cg, int64_t ty0,
                          int64_t ty1, int64_t cb, int64_t ce, float* v, float* buf) {
    const int64_t tw = s.tw, n = tw + 1, nt = (ty1 - ty0) * tw, plane = cg * nt;
    const int64_t rows = 2 * (ty1 - ty0) + 2, iy0 = 2 * ty0 - s.pt;
    float *ev = buf, *od = ev + n, *p = od + n;
    for (int64_t c = cb; c < ce; ++c) {
        for (int64_t r = 0; r < rows; ++r) {
            const int64_t iy = iy0 + r;
            const float* row = iy >= 0 && iy < s.ih ? xg + (c * s.ih + iy) * s.iw : nullptr;
            float* q = p + 4 * r * tw;
            split_row<kSplit>(s, row, ev, od);
            bt_rows(ev, od, ev + 1, od + 1, q, q + tw, q + 2 * tw, q + 3 * tw, tw);
        }
        for (int64_t ty = ty0; ty < ty1; ++ty) {
            float* o = v + c * nt + (ty - ty0) * tw;
            const float* q0 = p + 8 * (ty - ty0) * tw;  // row 2 (ty - ty0) of the band
            for (int col = 0; col < 4; ++col) {
                const float* q = q0 + col * tw;
                float* oc = o + col * plane;
                bt_rows(q, q + 4 * tw, q + 8 * tw, q + 12 * tw, oc, oc + 4 * plane, oc + 8 * plane,
                        oc + 12 * plane, tw);
            }
        }
    }
}

// A^T applied to 4 rows -> 2 rows.
PG_INLINE void at_rows(const float* __restrict m0, const float* __restrict m1,
                       const float* __restrict m2, const float* __restrict m3, float* __restrict o0,
                       float* __restrict o1, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        o0[i] = m0[i] + m1[i] + m2[i];
        o1[i] = m1[i] - m2[i] - m3[i];
    }
}

PG_INLINE void output_body(const WinoGeometry& s, const float* p, int64_t k0, int64_t kn,
                           int64_t ty0, int64_t ty1, int64_t kb, int64_t ke, float* y, int64_t ldc,
                           const GemmEpilogue* ep, float* buf) {
    const int64_t tw = s.tw, nt = (ty1 - ty0) * tw, plane = kn * nt;
    float *q = buf, *h = q + 8 * tw, *yr = h + 4 * tw;  // q[row][column][tx], h[2][2][tx]
    for (int64_t k = kb; k < ke; ++k) {
        for (int64_t ty = ty0; ty < ty1; ++ty) {
            const float* m = p + k * nt + (ty - ty0) * tw;
            for (int col = 0; col < 4; ++col)
                at_rows(m + col * plane, m + (4 + col) * plane, m + (8 + col) * plane,
                        m + (12 + col) * plane, q + col * tw, q + (4 + col) * tw, tw);
            for (int r = 0; r < 2 && 2 * ty + r < s.oh; ++r) {
                const float* qr = q + 4 * r * tw;
                at_rows(qr, qr + tw, qr + 2 * tw, qr + 3 * tw, h, h + tw, tw);
                for (int64_t t = 0; t < tw; ++t) yr[2 * t] = h[t], yr[2 * t + 1] = h[tw + t];
                float* row = y + (k0 + k) * ldc + (2 * ty + r) * s.ow;
                std::copy_n(yr, s.ow, row);
                if (ep) ep->apply(k0 + k, row, s.ow);
            }
        }
    }
}

void filters_base(const float* w, int64_t cg, int64_t k0, int64_t kn, int64_t kb, int64_t ke,
                  float* u) {
    filters_body(w, cg, k0, kn, kb, ke, u);
}
void input_base(const WinoGeometry& s, const float* xg, int64_t cg, int64_t ty0, int64_t ty1,
                int64_t cb, int64_t ce, float* v, float* buf) {
    input_body<deinterleave_base>(s, xg, cg, ty0, ty1, cb, ce, v, buf);
}
void output_base(const WinoGeometry& s, const float* p, int64_t k0, int64_t kn, int64_t ty0,
                 int64_t ty1, int64_t kb, int64_t ke, float* y, int64_t ldc, const GemmEpilogue* ep,
                 float* buf) {
    output_body(s, p, k0, kn, ty0, ty1, kb, ke, y, ldc, ep, buf);
}

#if defined(__x86_64__) && defined(__GNUC__)
PG_AVX512 void filters_avx512(const float* w, int64_t cg, int64_t k0, int64_t kn, int64_t kb,
                              int64_t ke, float* u) {
    filters_body(w, cg, k0, kn, kb, ke, u);
}
PG_AVX512 void input_avx512(const WinoGeometry& s, const float* xg, int64_t cg, int64_t ty0,
                            int64_t ty1, int64_t cb, int64_t ce, float* v, float* buf) {
    input_body<deinterleave_avx512>(s, xg, cg, ty0, ty1, cb, ce, v, buf);
}
PG_AVX512 void output_avx512(const WinoGeometry& s, const float* p, int64_t k0, int64_t kn,
                             int64_t ty0, int64_t ty1, int64_t kb, int64_t ke, float* y,
                             int64_t ldc, const GemmEpilogue* ep, float* buf) {
    output_body(s, p, k0, kn, ty0, ty1, kb, ke, y, ldc, ep, buf);
}
#endif

// The AVX-512 build when the CPU has it and the GEMMs run AVX-512 (tests force the others).
bool use_avx512() {
#if defined(__x86_64__) && defined(__GNUC__)
    static const bool on = [] {
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx512f") != 0;
    }();
    return on && gemm_current_isa() == GemmIsa::kAvx512;
#else
    return false;
#endif
}

}  // namespace

void wino_filters(const float* w, int64_t cg, int64_t k0, int64_t kn, int64_t kb, int64_t ke,
                  float* u) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (use_avx512()) return filters_avx512(w, cg, k0, kn, kb, ke, u);
#endif
    filters_base(w, cg, k0, kn, kb, ke, u);
}

void wino_input(const WinoGeometry& s, const float* xg, int64_t cg, int64_t ty0, int64_t ty1,
                int64_t cb, int64_t ce, float* v) {
    const int64_t rows = 2 * (ty1 - ty0) + 2;
    std::vector<float> buf(static_cast<size_t>(2 * (s.tw + 1) + 4 * rows * s.tw));
#if defined(__x86_64__) && defined(__GNUC__)
    if (use_avx512()) return input_avx512(s, xg, cg, ty0, ty1, cb, ce, v, buf.data());
#endif
    input_base(s, xg, cg, ty0, ty1, cb, ce, v, buf.data());
}

void wino_output(const WinoGeometry& s, const float* p, int64_t k0, int64_t kn, int64_t ty0,
                 int64_t ty1, int64_t kb, int64_t ke, float* y, int64_t ldc,
                 const GemmEpilogue* ep) {
    std::vector<float> buf(static_cast<size_t>(14 * s.tw + 8));
#if defined(__x86_64__) && defined(__GNUC__)
    if (use_avx512()) return output_avx512(s, p, k0, kn, ty0, ty1, kb, ke, y, ldc, ep, buf.data());
#endif
    output_base(s, p, k0, kn, ty0, ty1, kb, ke, y, ldc, ep, buf.data());
}

}  // namespace pg::ops
