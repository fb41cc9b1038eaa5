// The recurrent fast path's float32 kernels (see rnn_kernels.h). The matrix-vector product goes
// to rnn_matvec_avx512.cc where the CPU has AVX-512F. The AVX2 versions: the matrix-vector
// product keeps one 8-lane accumulator per row, four rows at a time, and reduces a row's lanes in
// one fixed order whether or not the row is part of a block of four; exp is
// range-reduced by n = round(x / ln 2) (ln 2 split in two parts) with a degree-7 polynomial on
// |r| <= ln(2) / 2 and 2^n built in the exponent bits; tanh uses an odd Taylor polynomial below
// 0.25 (no cancellation) and (1 - e) / (1 + e) with e = exp(-2|x|) above.
#include "ops/rnn_kernels.h"

#include "ops/gemm_kernels.h"
#include "ops/rnn_matvec_avx512.h"

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>

namespace pg::ops {

namespace {

std::atomic<RnnIsa> g_limit{RnnIsa::kAvx512};

// What the CPU has, as the GEMM kernels see it (gemm_isa_available), read once.
bool use_avx2() {
    static const bool has = gemm_isa_available(GemmIsa::kAvx2);
    return has && g_limit.load(std::memory_order_relaxed) >= RnnIsa::kAvx2;
}

bool use_avx512() {
    static const bool has = gemm_isa_available(GemmIsa::kAvx512);
    return has && g_limit.load(std::memory_order_relaxed) >= RnnIsa::kAvx512;
}

float dot_portable(const float* a, const float* b, int64_t n) {
    float s = 0;
    for (int64_t k = 0; k < n; ++k) s += a[k] * b[k];
    return s;
}

// Lanes of four accumulators summed to one value each: ((l0 + l1) + (l2 + l3)) + ((l4 + l5) +
// (l6 + l7)) per accumulator.
__attribute__((target("avx2,fma"))) inline __m128 reduce4(__m256 a0, __m256 a1, __m256 a2,
                                                          __m256 a3) {
    const __m256 t = _mm256_hadd_ps(_mm256_hadd_ps(a0, a1), _mm256_hadd_ps(a2, a3));
    return _mm_add_ps(_mm256_castps256_ps128(t), _mm256_extractf128_ps(t, 1));
}

// The AVX2 row sums: cols split into `full` (a multiple of 8) and a masked tail of `rem`.
struct Cols {
    int64_t full, rem;
    __m256i mask;
};

__attribute__((target("avx2,fma"))) inline Cols cols_of(int64_t cols) {
    alignas(32) static const int32_t kMask[16] = {-1, -1, -1, -1, -1, -1, -1, -1,
                                                  0,  0,  0,  0,  0,  0,  0,  0};
    const int64_t full = cols / 8 * 8, rem = cols - full;
    return {full, rem, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kMask + 8 - rem))};
}

// out[0, 4) += the sums of rows p0 .. p0 + 3 * cols (cols apart) times v.
__attribute__((target("avx2,fma"))) inline void rows4(const float* p0, int64_t cols, const Cols& c,
                                                      const float* v, float* out) {
    const float *p1 = p0 + cols, *p2 = p1 + cols, *p3 = p2 + cols;
    const __m256 zero = _mm256_setzero_ps();
    __m256 a0 = zero, a1 = zero, a2 = zero, a3 = zero;
    for (int64_t k = 0; k < c.full; k += 8) {
        const __m256 x = _mm256_loadu_ps(v + k);
        a0 = _mm256_fmadd_ps(_mm256_loadu_ps(p0 + k), x, a0);
        a1 = _mm256_fmadd_ps(_mm256_loadu_ps(p1 + k), x, a1);
        a2 = _mm256_fmadd_ps(_mm256_loadu_ps(p2 + k), x, a2);
        a3 = _mm256_fmadd_ps(_mm256_loadu_ps(p3 + k), x, a3);
    }
    if (c.rem) {
        const __m256 vt = _mm256_maskload_ps(v + c.full, c.mask);
        a0 = _mm256_fmadd_ps(_mm256_maskload_ps(p0 + c.full, c.mask), vt, a0);
        a1 = _mm256_fmadd_ps(_mm256_maskload_ps(p1 + c.full, c.mask), vt, a1);
        a2 = _mm256_fmadd_ps(_mm256_maskload_ps(p2 + c.full, c.mask), vt, a2);
        a3 = _mm256_fmadd_ps(_mm256_maskload_ps(p3 + c.full, c.mask), vt, a3);
    }
    _mm_storeu_ps(out, _mm_add_ps(_mm_loadu_ps(out), reduce4(a0, a1, a2, a3)));
}

// *out += the sum of row p0 times v, reduced in rows4's order.
__attribute__((target("avx2,fma"))) inline void row1(const float* p0, const Cols& c, const float* v,
                                                     float* out) {
    const __m256 zero = _mm256_setzero_ps();
    __m256 a0 = zero;
    for (int64_t k = 0; k < c.full; k += 8)
        a0 = _mm256_fmadd_ps(_mm256_loadu_ps(p0 + k), _mm256_loadu_ps(v + k), a0);
    if (c.rem)
        a0 = _mm256_fmadd_ps(_mm256_maskload_ps(p0 + c.full, c.mask),
                             _mm256_maskload_ps(v + c.full, c.mask), a0);
    *out += _mm_cvtss_f32(reduce4(a0, zero, zero, zero));
}

// out[j * ldo + r] += m row r times vector j (vs + j * ldv), for j < nv: each block of four
// rows against every vector while the rows are in L1.
__attribute__((target("avx2,fma"))) void matvecs_avx2(const float* m, int64_t rows, int64_t cols,
                                                      const float* vs, int64_t nv, int64_t ldv,
                                                      float* out, int64_t ldo) {
    const Cols c = cols_of(cols);
    int64_t r = 0;
    for (; r + 4 <= rows; r += 4)
        for (int64_t j = 0; j < nv; ++j)
            rows4(m + r * cols, cols, c, vs + j * ldv, out + j * ldo + r);
    for (; r < rows; ++r)
        for (int64_t j = 0; j < nv; ++j) row1(m + r * cols, c, vs + j * ldv, out + j * ldo + r);
}

// exp(x) for x clamped to [-87.3, 88.3] (2^n stays a normal float); NaN stays NaN (MINPS and
// MAXPS return their second operand when one is NaN).
__attribute__((target("avx2,fma"))) inline __m256 exp_avx2(__m256 x) {
    x = _mm256_min_ps(_mm256_set1_ps(88.3f), x);
    x = _mm256_max_ps(_mm256_set1_ps(-87.3f), x);
    const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504f)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
    __m256 p = _mm256_set1_ps(1.0f / 5040);
    for (const float c : {1.0f / 720, 1.0f / 120, 1.0f / 24, 1.0f / 6, 0.5f, 1.0f, 1.0f})
        p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(c));
    const __m256i e =
        _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

__attribute__((target("avx2,fma"))) inline __m256 sigmoid8(__m256 x) {
    const __m256 one = _mm256_set1_ps(1.0f);
    return _mm256_div_ps(one, _mm256_add_ps(one, exp_avx2(_mm256_sub_ps(_mm256_setzero_ps(), x))));
}

__attribute__((target("avx2,fma"))) inline __m256 tanh8(__m256 x) {
    const __m256 sign = _mm256_set1_ps(-0.0f), one = _mm256_set1_ps(1.0f);
    const __m256 ax = _mm256_andnot_ps(sign, x);
    const __m256 e = exp_avx2(_mm256_mul_ps(ax, _mm256_set1_ps(-2.0f)));
    const __m256 big = _mm256_div_ps(_mm256_sub_ps(one, e), _mm256_add_ps(one, e));
    const __m256 x2 = _mm256_mul_ps(ax, ax);
    __m256 p = _mm256_set1_ps(62.0f / 2835);
    for (const float c : {-17.0f / 315, 2.0f / 15, -1.0f / 3})
        p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(c));
    const __m256 small = _mm256_fmadd_ps(_mm256_mul_ps(p, x2), ax, ax);
    const __m256 mag =
        _mm256_blendv_ps(big, small, _mm256_cmp_ps(ax, _mm256_set1_ps(0.25f), _CMP_LT_OQ));
    return _mm256_or_ps(mag, _mm256_and_ps(sign, x));
}

// Applies tanh8 (kTanh) or sigmoid8 to x[0, n) in place, the last n % 8 through a padded copy.
template <bool kTanh>
__attribute__((target("avx2,fma"))) inline __m256 f8(__m256 v) {
    return kTanh ? tanh8(v) : sigmoid8(v);
}

template <bool kTanh>
__attribute__((target("avx2,fma"))) void map_avx2(float* x, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, f8<kTanh>(_mm256_loadu_ps(x + i)));
    if (i < n) {
        float tail[8] = {};
        std::memcpy(tail, x + i, static_cast<size_t>(n - i) * sizeof(float));
        _mm256_storeu_ps(tail, f8<kTanh>(_mm256_loadu_ps(tail)));
        std::memcpy(x + i, tail, static_cast<size_t>(n - i) * sizeof(float));
    }
}

}  // namespace

void matvec_add_f32(const float* m, const float* v, int64_t rows, int64_t cols, float* out) {
    matvecs_add_f32(m, rows, cols, v, 1, cols, out, rows);
}

void matvecs_add_f32(const float* m, int64_t rows, int64_t cols, const float* vs, int64_t nv,
                     int64_t ldv, float* out, int64_t ldo) {
    if (rows <= 0 || cols <= 0 || nv <= 0) return;
    if (use_avx512()) return matvecs_avx512(m, rows, cols, vs, nv, ldv, out, ldo);
    if (use_avx2()) return matvecs_avx2(m, rows, cols, vs, nv, ldv, out, ldo);
    for (int64_t j = 0; j < nv; ++j)
        for (int64_t r = 0; r < rows; ++r)
            out[j * ldo + r] += dot_portable(m + r * cols, vs + j * ldv, cols);
}

void sigmoid_f32(float* x, int64_t n) {
    if (use_avx2()) return map_avx2<false>(x, n);
    for (int64_t i = 0; i < n; ++i) x[i] = 1.0f / (1.0f + std::exp(-x[i]));
}

void tanh_f32(float* x, int64_t n) {
    if (use_avx2()) return map_avx2<true>(x, n);
    for (int64_t i = 0; i < n; ++i) x[i] = std::tanh(x[i]);
}

RnnIsa rnn_limit_isa(RnnIsa isa) {
    return g_limit.exchange(isa);
}

}  // namespace pg::ops
