// Internal to the AVX-512 files that copy blocks of up to 64 rows of a row-major matrix
// transposed, so that one row's 64 values become four vectors (gemm_rowvec_avx512.cc: A per
// piece of k; nchwc_conv_avx512.cc: a Conv's weights per group of 64 output channels).
#pragma once

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <cstdint>

// GCC 12's AVX-512 shuffle intrinsics start from _mm512_undefined_*() values, which
// -Wuninitialized flags inside the headers (for every file including this one).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace pg::ops {

// Lanes per transposed line: a block's rows (four vectors).
constexpr int64_t kPackRows = 64;

// The 16 x 16 floats at s (rows lds apart; row j read from s + min(j, last) * lds) transposed:
// r[c] = column c. Each vector first gathers, by 128-bit broadcast loads under masks, four rows'
// same four columns (lane block L: row 4L + q), so only 4 x 4 transposes within the lane blocks
// are left: 64 loads, 48 blends and 32 in-lane shuffles, where whole rows took 16 loads and 64
// shuffles, half of them across lane blocks (a 64 x 512 pack from L1 or L2: 35-42 against
// 56-63 ns per 16 x 16, docs/performance.md, session 27).
__attribute__((target("avx512f"), always_inline)) inline void transpose16(const float* s,
                                                                          int64_t lds, int last,
                                                                          __m512 r[16]) {
    for (int cq = 0; cq < 4; ++cq) {  // columns 4 cq .. 4 cq + 3
        __m512 z[4];
        for (int q = 0; q < 4; ++q) {  // z[q], lane block L: row 4 L + q
            const float* col = s + 4 * cq;
            __m512 v = _mm512_broadcast_f32x4(_mm_loadu_ps(col + std::min(q, last) * lds));
            v = _mm512_mask_broadcast_f32x4(v, 0x00F0,
                                            _mm_loadu_ps(col + std::min(4 + q, last) * lds));
            v = _mm512_mask_broadcast_f32x4(v, 0x0F00,
                                            _mm_loadu_ps(col + std::min(8 + q, last) * lds));
            z[q] = _mm512_mask_broadcast_f32x4(v, 0xF000,
                                               _mm_loadu_ps(col + std::min(12 + q, last) * lds));
        }
        const __m512d t0 = _mm512_castps_pd(_mm512_unpacklo_ps(z[0], z[1]));
        const __m512d t1 = _mm512_castps_pd(_mm512_unpackhi_ps(z[0], z[1]));
        const __m512d t2 = _mm512_castps_pd(_mm512_unpacklo_ps(z[2], z[3]));
        const __m512d t3 = _mm512_castps_pd(_mm512_unpackhi_ps(z[2], z[3]));
        r[4 * cq] = _mm512_castpd_ps(_mm512_unpacklo_pd(t0, t2));
        r[4 * cq + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(t0, t2));
        r[4 * cq + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(t1, t3));
        r[4 * cq + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(t1, t3));
    }
}

// How far ahead of the 16 x 16 block being transposed its rows' lines are fetched: four lines.
// The weights a pack reads come cold from memory (a Conv's weights are read once a run), 16 rows
// at a time, one line of each per block; without the fetches each block waits for its lines.
constexpr int64_t kPackAheadFloats = 64;

// set_pack_prefetch_ahead (nchwc.h); defined in nchwc_conv_avx512.cc.
extern std::atomic<bool> g_pack_ahead;

// ap[p * 64 + r] = A[r][p0 + p] for rows r < rows (<= 64) of a block (a: its first row), p < kc;
// lanes of rows >= rows up to the block's last vector are zero. Each block's rows are fetched
// kPackAheadFloats ahead (set_pack_prefetch_ahead), and the lines of the next kc values (up to k)
// at the end.
__attribute__((target("avx512f"))) inline void pack_rows_transposed(const float* a, int64_t lda,
                                                                    int64_t rows, int64_t p0,
                                                                    int64_t kc, int64_t k,
                                                                    float* ap) {
    const int64_t vecs = (rows + 15) / 16;
    const bool ahead = g_pack_ahead.load(std::memory_order_relaxed);
    for (int64_t v = 0; v < vecs; ++v) {
        const int64_t r0 = v * 16;
        int64_t p = 0;
        if (r0 + 16 <= rows)
            for (; p + 16 <= kc; p += 16) {
                if (ahead)
                    for (int q = 0; q < 16; ++q)
                        _mm_prefetch(reinterpret_cast<const char*>(a + (r0 + q) * lda + p0 + p +
                                                                   kPackAheadFloats),
                                     _MM_HINT_T0);
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
