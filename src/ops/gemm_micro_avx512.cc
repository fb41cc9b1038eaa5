// AVX-512F GEMM micro-kernels: an MR x (16 * NP) tile of C in zmm registers (MR 12, 8 or 4 by
// the rows left, NP one or two 16-wide panels), A broadcast element by element, B loaded a panel
// row at a time, one fused multiply-add per (row, panel) and p. Partial panels are written with
// masked stores, so no scratch tile is needed.
#include "ops/gemm_kernels.h"
#include "ops/gemm_micro.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#include <algorithm>

namespace pg::ops {
namespace {

static_assert(kGemmNr == 16, "one zmm register per panel row");

#define PG_AVX512 __attribute__((target("avx512f")))

// Writes one 16-wide register row to C (w columns valid).
PG_AVX512 inline __attribute__((always_inline)) void store_row(float* c, __m512 acc, int w,
                                                               float alpha, float beta) {
    const __mmask16 m = w >= 16 ? __mmask16(0xffff) : __mmask16((1u << w) - 1);
    const __m512 va = _mm512_set1_ps(alpha);
    __m512 r = alpha == 1.0f ? acc : _mm512_mul_ps(va, acc);
    if (beta != 0.0f) {
        const __m512 old = _mm512_maskz_loadu_ps(m, c);
        r = beta == 1.0f ? _mm512_add_ps(old, r)
                         : _mm512_add_ps(_mm512_mul_ps(_mm512_set1_ps(beta), old), r);
    }
    if (w >= 16)
        _mm512_storeu_ps(c, r);
    else
        _mm512_mask_storeu_ps(c, m, r);
}

template <int MR, int NP, bool kDirect>
PG_AVX512 void tile(int64_t kc, const float* ap, int64_t lda, const float* bp, int64_t bstride,
                    float* c, int64_t ldc, int mr, int nr, float alpha, float beta) {
    __m512 acc[MR][NP];
    for (int i = 0; i < MR; ++i)
        for (int q = 0; q < NP; ++q) acc[i][q] = _mm512_setzero_ps();
    const float* rows[MR];
    if constexpr (kDirect)
        for (int i = 0; i < MR; ++i) rows[i] = ap + std::min(i, mr - 1) * lda;
    const float* b1 = bp + bstride;
    for (int64_t p = 0; p < kc; ++p) {
        __m512 b[NP];
        b[0] = _mm512_loadu_ps(bp + p * kGemmNr);
        if constexpr (NP == 2) b[1] = _mm512_loadu_ps(b1 + p * kGemmNr);
        for (int i = 0; i < MR; ++i) {
            const __m512 a = _mm512_set1_ps(kDirect ? rows[i][p] : ap[p * kGemmMr + i]);
            for (int q = 0; q < NP; ++q) acc[i][q] = _mm512_fmadd_ps(a, b[q], acc[i][q]);
        }
    }
    for (int i = 0; i < mr && i < MR; ++i) {
        float* ci = c + i * ldc;
        store_row(ci, acc[i][0], std::min(nr, kGemmNr), alpha, beta);
        if constexpr (NP == 2)
            if (nr > kGemmNr) store_row(ci + kGemmNr, acc[i][1], nr - kGemmNr, alpha, beta);
    }
}

template <int NP, bool kDirect>
PG_AVX512 void by_rows(int64_t kc, const float* ap, int64_t lda, const float* bp, int64_t bstride,
                       float* c, int64_t ldc, int mr, int nr, float alpha, float beta) {
    if (mr > 8) return tile<12, NP, kDirect>(kc, ap, lda, bp, bstride, c, ldc, mr, nr, alpha, beta);
    if (mr > 4) return tile<8, NP, kDirect>(kc, ap, lda, bp, bstride, c, ldc, mr, nr, alpha, beta);
    tile<4, NP, kDirect>(kc, ap, lda, bp, bstride, c, ldc, mr, nr, alpha, beta);
}

PG_AVX512 void micro(int64_t kc, const float* ap, int64_t lda, const float* bp, int64_t bstride,
                     float* c, int64_t ldc, int mr, int nr, float alpha, float beta) {
    if (nr > kGemmNr) {
        if (lda) return by_rows<2, true>(kc, ap, lda, bp, bstride, c, ldc, mr, nr, alpha, beta);
        return by_rows<2, false>(kc, ap, lda, bp, bstride, c, ldc, mr, nr, alpha, beta);
    }
    if (lda) return by_rows<1, true>(kc, ap, lda, bp, bstride, c, ldc, mr, nr, alpha, beta);
    by_rows<1, false>(kc, ap, lda, bp, bstride, c, ldc, mr, nr, alpha, beta);
}

}  // namespace

GemmMicro gemm_micro_avx512() {
    return GemmMicro{micro, true, GemmIsa::kAvx512};
}

}  // namespace pg::ops

#else

namespace pg::ops {
GemmMicro gemm_micro_avx512() {
    return GemmMicro{};
}
}  // namespace pg::ops

#endif
