// matvecs_avx512 (rnn_matvec_avx512.h). Row sums over 16-lane accumulators (the last cols % 16
// through masked loads), eight rows against one vector while the rows are in L1, then one
// reduction tree for the eight: halves, then quarters across the rows' vectors, then the four
// lanes of each quarter. A row's lanes only ever meet its own lanes in that tree, so a lone row
// (the last rows % 8) is reduced by the same tree with seven zero accumulators and gets the value
// it would get inside a block. Built with -ffp-contract=off: the tree's additions stay additions.
#include "ops/rnn_matvec_avx512.h"

#include "base/error.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define PG_RNN_AVX512 1
// GCC 12 reports the intrinsics' own undefined placeholders (avx512fintrin.h).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace pg::ops {

#ifdef PG_RNN_AVX512

namespace {

#define PG_AVX512 __attribute__((target("avx512f")))
#define PG_AVX512_INLINE __attribute__((target("avx512f"), always_inline)) inline

// The sums of a[0..7]'s lanes, row i in lane i.
PG_AVX512_INLINE __m256 reduce8(const __m512 (&a)[8]) {
    __m512 t[4];  // rows 2i (blocks 0-1) and 2i + 1 (blocks 2-3): lanes l + l + 8
    for (int i = 0; i < 4; ++i)
        t[i] = _mm512_add_ps(_mm512_shuffle_f32x4(a[2 * i], a[2 * i + 1], 0x44),
                             _mm512_shuffle_f32x4(a[2 * i], a[2 * i + 1], 0xEE));
    // u0: rows 0-3, u1: rows 4-7, one 128-bit block (four partial sums) per row.
    const __m512 u0 = _mm512_add_ps(_mm512_shuffle_f32x4(t[0], t[1], 0x88),
                                    _mm512_shuffle_f32x4(t[0], t[1], 0xDD));
    const __m512 u1 = _mm512_add_ps(_mm512_shuffle_f32x4(t[2], t[3], 0x88),
                                    _mm512_shuffle_f32x4(t[2], t[3], 0xDD));
    // Block b: lanes (0 + 2, 1 + 3) of row b, then of row 4 + b; then their sum in lanes 0 and 2.
    const __m512 x =
        _mm512_add_ps(_mm512_shuffle_ps(u0, u1, 0x44), _mm512_shuffle_ps(u0, u1, 0xEE));
    const __m512 y = _mm512_add_ps(x, _mm512_shuffle_ps(x, x, 0xB1));
    const __m512i pick = _mm512_setr_epi32(0, 4, 8, 12, 2, 6, 10, 14, 0, 0, 0, 0, 0, 0, 0, 0);
    return _mm512_castps512_ps256(_mm512_permutexvar_ps(pick, y));
}

// out[0, nr) += rows p, p + cols, ... (nr of them, 1 or 8) times v.
template <int NR>
PG_AVX512_INLINE void rows_times(const float* p, int64_t cols, const float* v, float* out) {
    __m512 acc[8];
    for (int i = 0; i < 8; ++i) acc[i] = _mm512_setzero_ps();
    int64_t k = 0;
    for (; k + 16 <= cols; k += 16) {
        const __m512 x = _mm512_loadu_ps(v + k);
        for (int i = 0; i < NR; ++i)
            acc[i] = _mm512_fmadd_ps(_mm512_loadu_ps(p + i * cols + k), x, acc[i]);
    }
    if (k < cols) {
        const __mmask16 mask = static_cast<__mmask16>((1u << (cols - k)) - 1);
        const __m512 x = _mm512_maskz_loadu_ps(mask, v + k);
        for (int i = 0; i < NR; ++i)
            acc[i] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(mask, p + i * cols + k), x, acc[i]);
    }
    const __m256 sums = reduce8(acc);
    if (NR == 8) {
        _mm256_storeu_ps(out, _mm256_add_ps(_mm256_loadu_ps(out), sums));
    } else {
        for (int i = 0; i < NR; ++i) out[i] += sums[i];
    }
}

}  // namespace

PG_AVX512 void matvecs_avx512(const float* m, int64_t rows, int64_t cols, const float* vs,
                              int64_t nv, int64_t ldv, float* out, int64_t ldo) {
    int64_t r = 0;
    for (; r + 8 <= rows; r += 8)
        for (int64_t j = 0; j < nv; ++j)
            rows_times<8>(m + r * cols, cols, vs + j * ldv, out + j * ldo + r);
    for (; r < rows; ++r)
        for (int64_t j = 0; j < nv; ++j)
            rows_times<1>(m + r * cols, cols, vs + j * ldv, out + j * ldo + r);
}

#else

void matvecs_avx512(const float*, int64_t, int64_t, const float*, int64_t, int64_t, float*,
                    int64_t) {
    throw Error(ErrorKind::kInternal, "matvecs_avx512: not built for this CPU");
}

#endif

}  // namespace pg::ops
