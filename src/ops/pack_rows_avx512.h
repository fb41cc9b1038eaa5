// Internal to the AVX-512 files that copy blocks of up to 64 rows of a row-major matrix
// transposed, so that one row's 64 values become four vectors (gemm_rowvec_avx512.cc: A per
// piece of k; nchwc_conv_avx512.cc: a Conv's weights per group of 64 output channels).
#pragma once

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

// GCC 12's AVX-512 shuffle intrinsics start from _mm512_undefined_*() values, which
// -Wuninitialized flags inside the headers (for every file including this one).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace pg::ops {

// Lanes per transposed line: a block's rows (four vectors).
constexpr int64_t kPackRows = 64;

// The 16 x 16 floats at s (rows lds apart; row j read from s + min(j, last) * lds) transposed:
// r[c] = column c.
__attribute__((target("avx512f"), always_inline)) inline void transpose16(const float* s,
                                                                          int64_t lds, int last,
                                                                          __m512 r[16]) {
    __m512 t[16];
    for (int i = 0; i < 16; ++i) r[i] = _mm512_loadu_ps(s + std::min(i, last) * lds);
    for (int i = 0; i < 8; ++i) {  // pairs of rows interleaved
        t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 4; ++i) {  // then quadruples: 4 rows x one column per 128-bit lane
        const __m512d a = _mm512_castps_pd(t[4 * i]), b = _mm512_castps_pd(t[4 * i + 1]),
                      c = _mm512_castps_pd(t[4 * i + 2]), e = _mm512_castps_pd(t[4 * i + 3]);
        r[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
        r[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
        r[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, e));
        r[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, e));
    }
    for (int i = 0; i < 2; ++i)  // then the 128-bit lanes of 8 rows, and of all 16
        for (int j = 0; j < 4; ++j) {
            t[8 * i + j] = _mm512_shuffle_f32x4(r[8 * i + j], r[8 * i + 4 + j], 0x88);
            t[8 * i + 4 + j] = _mm512_shuffle_f32x4(r[8 * i + j], r[8 * i + 4 + j], 0xDD);
        }
    for (int j = 0; j < 8; ++j) {
        r[j] = _mm512_shuffle_f32x4(t[j], t[8 + j], 0x88);
        r[8 + j] = _mm512_shuffle_f32x4(t[j], t[8 + j], 0xDD);
    }
}

// ap[p * 64 + r] = A[r][p0 + p] for rows r < rows (<= 64) of a block (a: its first row), p < kc;
// lanes of rows >= rows up to the block's last vector are zero. The lines of the next kc values
// (up to k) are prefetched.
__attribute__((target("avx512f"))) inline void pack_rows_transposed(const float* a, int64_t lda,
                                                                    int64_t rows, int64_t p0,
                                                                    int64_t kc, int64_t k,
                                                                    float* ap) {
    const int64_t vecs = (rows + 15) / 16;
    for (int64_t v = 0; v < vecs; ++v) {
        const int64_t r0 = v * 16;
        int64_t p = 0;
        if (r0 + 16 <= rows)
            for (; p + 16 <= kc; p += 16) {
                __m512 t[16];
                transpose16(a + r0 * lda + p0 + p, lda, 15, t);
                for (int q = 0; q < 16; ++q) _mm512_storeu_ps(ap + (p + q) * kPackRows + r0, t[q]);
            }
        for (; p < kc; ++p)
            for (int64_t r = r0; r < r0 + 16; ++r)
                ap[p * kPackRows + r] = r < rows ? a[r * lda + p0 + p] : 0.0f;
    }
    if (p0 + kc < k)
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t q = 0; q < std::min(kc, k - p0 - kc); q += 16)
                _mm_prefetch(reinterpret_cast<const char*>(a + r * lda + p0 + kc + q), _MM_HINT_T0);
}

}  // namespace pg::ops

#endif
