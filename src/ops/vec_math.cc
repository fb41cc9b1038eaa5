// Float32 exp / erf and the softmax / layer-norm array helpers (see vec_math.h).
//
// exp(x): x clamped to [-104, 89] (beyond, the result is 0 or inf anyway), k = round(x / ln 2)
// with the 1.5 * 2^23 trick, r = x - k ln 2 in two fused steps (Cody-Waite, |r| <= 0.347),
// e^r by its Taylor series to degree 7 (truncation < 0.1 ulp), then scaled by 2^(k/2) and
// 2^(k - k/2): the first product is exact, the second rounds once, into the subnormals too.
// erf(x): |x| < 1/2: x + x * Q(x^2); 1/2 <= |x| < 4: head[i] + P_i(|x| - c_i) on 16 intervals
// of width 1/4 (vec_math_tables.h, Taylor series of degree 7); |x| >= 4: 1; the sign of x
// copied last. tanh(x): |x| < 1/2: x + x * Q(x^2); 1/2 <= |x| < 1: head[i] + P_i(|x| - c_i) on two
// intervals (vec_math_tables.h, degree 8); |x| >= 1: 1 - 2 / (exp(2|x|) + 1); the sign of x last.
// The same IEEE operations run in the same order in all three implementations.
#include "ops/vec_math.h"

#include <immintrin.h>

#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>

#include "ops/vec_math_tables.h"

// GCC 12's AVX-512 reduction and extraction intrinsics start from _mm512_undefined_*() values,
// which -Wuninitialized flags inside the headers.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace pg::ops {

namespace {

using vec_tables::kErfCoef;
using vec_tables::kErfHead;
using vec_tables::kTanhCoef;
using vec_tables::kTanhHead;

constexpr float kExpLo = -104.0f, kExpHi = 89.0f;
constexpr float kMagic = 0x1.8p23f;  // 1.5 * 2^23: adding it rounds to an integer
constexpr float kLog2e = 0x1.715476p+0f;
constexpr float kLn2Hi = 0x1.62e430p-1f, kLn2Lo = -0x1.05c610p-29f;
// 1/k! for k = 7 .. 0, as floats.
constexpr float kExpC[8] = {1.0f / 5040, 1.0f / 720, 1.0f / 120, 1.0f / 24,
                            1.0f / 6,    0.5f,       1.0f,       1.0f};
constexpr int kErfDegree = 7;
constexpr int kTanhDegree = 8;

// The softmax sums run 16 double lanes (element i in lane i % 16) on every ISA; lanes[j] holds
// lane j + lane j + 8, summed here in a fixed order, so the sum is the same on every ISA.
double sum_lanes(const double* lanes) {
    return ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) +
           ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
}

// How a softmax row's values are read: x[i] itself, or x[i] * s or x[i] / s rounded to float
// (vec_max_scaled); the same IEEE operation in every implementation. The kernels take the kind
// as a template argument, so the unscaled ones keep their loops as they were.
enum class RowScale { kNone, kMul, kDiv };

// ---- scalar ----

template <RowScale K>
float scaled(float v, float s) {
    if constexpr (K == RowScale::kMul) return v * s;
    if constexpr (K == RowScale::kDiv) return v / s;
    return v;
}

float exp_scalar(float x) {
    if (x != x) return x + x;
    x = kExpLo > x ? kExpLo : x;
    x = kExpHi < x ? kExpHi : x;
    const float kf = std::fma(x, kLog2e, kMagic) - kMagic;
    float r = std::fma(-kf, kLn2Hi, x);
    r = std::fma(-kf, kLn2Lo, r);
    float p = kExpC[0];
    for (int j = 1; j < 8; ++j) p = std::fma(p, r, kExpC[j]);
    const auto k = static_cast<int32_t>(kf);
    const int32_t k1 = k >> 1, k2 = k - k1;
    const float s1 = std::bit_cast<float>(static_cast<uint32_t>(k1 + 127) << 23);
    const float s2 = std::bit_cast<float>(static_cast<uint32_t>(k2 + 127) << 23);
    return (p * s1) * s2;
}

float erf_scalar(float x) {
    const float ax = std::fabs(x);
    const float ax4 = ax * 4.0f;
    const int i = static_cast<int>(ax4 < 15.0f ? ax4 : 15.0f);
    const bool small = ax < 0.5f;
    const float c = std::fma(static_cast<float>(i), 0.25f, 0.125f);
    const float r = small ? ax * ax : ax - c;
    float p = kErfCoef[kErfDegree][i];
    for (int k = kErfDegree - 1; k >= 0; --k) p = std::fma(p, r, kErfCoef[k][i]);
    float y = std::fma(small ? ax : 1.0f, p, small ? ax : kErfHead[i]);
    if (ax >= 4.0f) y = 1.0f;
    return std::copysign(y, x);
}

float tanh_scalar(float x) {
    const float ax = std::fabs(x);
    const float ax4 = ax * 4.0f;
    const int i = static_cast<int>(ax4 < 3.0f ? ax4 : 3.0f);
    const bool small = ax < 0.5f;
    const float c = std::fma(static_cast<float>(i), 0.25f, 0.125f);
    const float r = small ? ax * ax : ax - c;
    float p = kTanhCoef[kTanhDegree][i];
    for (int k = kTanhDegree - 1; k >= 0; --k) p = std::fma(p, r, kTanhCoef[k][i]);
    float y = std::fma(small ? ax : 1.0f, p, small ? ax : kTanhHead[i]);
    if (ax >= 1.0f) y = 1.0f - 2.0f / (exp_scalar(ax + ax) + 1.0f);
    return std::copysign(y, x);
}

// ---- AVX2 + FMA ----

#define PG_AVX2 __attribute__((target("avx2,fma")))

PG_AVX2 inline __m256 exp8(__m256 x) {
    x = _mm256_max_ps(_mm256_set1_ps(kExpLo), x);
    x = _mm256_min_ps(_mm256_set1_ps(kExpHi), x);
    const __m256 magic = _mm256_set1_ps(kMagic);
    const __m256 kf = _mm256_sub_ps(_mm256_fmadd_ps(x, _mm256_set1_ps(kLog2e), magic), magic);
    __m256 r = _mm256_fnmadd_ps(kf, _mm256_set1_ps(kLn2Hi), x);
    r = _mm256_fnmadd_ps(kf, _mm256_set1_ps(kLn2Lo), r);
    __m256 p = _mm256_set1_ps(kExpC[0]);
    for (int j = 1; j < 8; ++j) p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kExpC[j]));
    const __m256i k = _mm256_cvtps_epi32(kf);
    const __m256i k1 = _mm256_srai_epi32(k, 1), k2 = _mm256_sub_epi32(k, k1);
    const __m256i bias = _mm256_set1_epi32(127);
    const __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k1, bias), 23));
    const __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k2, bias), 23));
    return _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
}

// table[idx] for a 16-entry table.
PG_AVX2 inline __m256 lookup16(const float* table, __m256i idx, __m256 upper) {
    const __m256 lo = _mm256_permutevar8x32_ps(_mm256_loadu_ps(table), idx);
    const __m256 hi = _mm256_permutevar8x32_ps(_mm256_loadu_ps(table + 8), idx);
    return _mm256_blendv_ps(lo, hi, upper);
}

PG_AVX2 inline __m256 erf8(__m256 x) {
    const __m256 sign = _mm256_set1_ps(-0.0f);
    const __m256 ax = _mm256_andnot_ps(sign, x);
    const __m256 fi = _mm256_min_ps(_mm256_mul_ps(ax, _mm256_set1_ps(4.0f)), _mm256_set1_ps(15));
    const __m256i idx = _mm256_cvttps_epi32(fi);
    const __m256 upper = _mm256_castsi256_ps(_mm256_cmpgt_epi32(idx, _mm256_set1_epi32(7)));
    const __m256 small = _mm256_cmp_ps(ax, _mm256_set1_ps(0.5f), _CMP_LT_OQ);
    const __m256 c =
        _mm256_fmadd_ps(_mm256_cvtepi32_ps(idx), _mm256_set1_ps(0.25f), _mm256_set1_ps(0.125f));
    const __m256 r = _mm256_blendv_ps(_mm256_sub_ps(ax, c), _mm256_mul_ps(ax, ax), small);
    __m256 p = lookup16(kErfCoef[kErfDegree], idx, upper);
    for (int k = kErfDegree - 1; k >= 0; --k)
        p = _mm256_fmadd_ps(p, r, lookup16(kErfCoef[k], idx, upper));
    const __m256 a = _mm256_blendv_ps(_mm256_set1_ps(1.0f), ax, small);
    const __m256 b = _mm256_blendv_ps(lookup16(kErfHead, idx, upper), ax, small);
    __m256 y = _mm256_fmadd_ps(a, p, b);
    y = _mm256_blendv_ps(y, _mm256_set1_ps(1.0f),
                         _mm256_cmp_ps(ax, _mm256_set1_ps(4.0f), _CMP_GE_OQ));
    return _mm256_or_ps(y, _mm256_and_ps(x, sign));
}

PG_AVX2 inline __m256 tanh8(__m256 x) {
    const __m256 sign = _mm256_set1_ps(-0.0f);
    const __m256 ax = _mm256_andnot_ps(sign, x);
    const __m256 fi = _mm256_min_ps(_mm256_mul_ps(ax, _mm256_set1_ps(4.0f)), _mm256_set1_ps(3));
    const __m256i idx = _mm256_cvttps_epi32(fi);
    const __m256 small = _mm256_cmp_ps(ax, _mm256_set1_ps(0.5f), _CMP_LT_OQ);
    const __m256 c =
        _mm256_fmadd_ps(_mm256_cvtepi32_ps(idx), _mm256_set1_ps(0.25f), _mm256_set1_ps(0.125f));
    const __m256 r = _mm256_blendv_ps(_mm256_sub_ps(ax, c), _mm256_mul_ps(ax, ax), small);
    __m256 p = _mm256_permutevar8x32_ps(_mm256_loadu_ps(kTanhCoef[kTanhDegree]), idx);
    for (int k = kTanhDegree - 1; k >= 0; --k)
        p = _mm256_fmadd_ps(p, r, _mm256_permutevar8x32_ps(_mm256_loadu_ps(kTanhCoef[k]), idx));
    const __m256 a = _mm256_blendv_ps(_mm256_set1_ps(1.0f), ax, small);
    const __m256 b =
        _mm256_blendv_ps(_mm256_permutevar8x32_ps(_mm256_loadu_ps(kTanhHead), idx), ax, small);
    __m256 y = _mm256_fmadd_ps(a, p, b);
    const __m256 one = _mm256_set1_ps(1.0f);
    const __m256 big = _mm256_sub_ps(
        one, _mm256_div_ps(_mm256_set1_ps(2.0f), _mm256_add_ps(exp8(_mm256_add_ps(ax, ax)), one)));
    y = _mm256_blendv_ps(y, big, _mm256_cmp_ps(ax, one, _CMP_GE_OQ));
    return _mm256_or_ps(y, _mm256_and_ps(x, sign));
}

// Applies f to n values: whole vectors in place, the tail through a padded copy.
template <__m256 (*f)(__m256)>
PG_AVX2 inline void map8(const float* x, float* y, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, f(_mm256_loadu_ps(x + i)));
    if (i < n) {
        float buf[8] = {};
        std::memcpy(buf, x + i, static_cast<size_t>(n - i) * sizeof(float));
        _mm256_storeu_ps(buf, f(_mm256_loadu_ps(buf)));
        std::memcpy(y + i, buf, static_cast<size_t>(n - i) * sizeof(float));
    }
}

PG_AVX2 void exp_avx2(const float* x, float* y, int64_t n) {
    map8<exp8>(x, y, n);
}
PG_AVX2 void erf_avx2(const float* x, float* y, int64_t n) {
    map8<erf8>(x, y, n);
}
PG_AVX2 void tanh_avx2(const float* x, float* y, int64_t n) {
    map8<tanh8>(x, y, n);
}

template <RowScale K>
PG_AVX2 inline __m256 scaled8(__m256 v, __m256 s) {
    if constexpr (K == RowScale::kMul) return _mm256_mul_ps(v, s);
    if constexpr (K == RowScale::kDiv) return _mm256_div_ps(v, s);
    return v;
}

template <RowScale K>
PG_AVX2 double exp_sub_sum_avx2(const float* x, float scale, float shift, float* y, int64_t n) {
    const __m256 sc = _mm256_set1_ps(scale);
    const __m256 s = _mm256_set1_ps(shift);
    __m256d acc[4] = {_mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd(),
                      _mm256_setzero_pd()};
    auto add = [&](__m256 e, int half) PG_AVX2 {  // elements 8 * half .. 8 * half + 7 of 16
        acc[2 * half] = _mm256_add_pd(acc[2 * half], _mm256_cvtps_pd(_mm256_castps256_ps128(e)));
        acc[2 * half + 1] =
            _mm256_add_pd(acc[2 * half + 1], _mm256_cvtps_pd(_mm256_extractf128_ps(e, 1)));
    };
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        for (int h = 0; h < 2; ++h) {
            const __m256 e = exp8(_mm256_sub_ps(scaled8<K>(_mm256_loadu_ps(x + i + 8 * h), sc), s));
            _mm256_storeu_ps(y + i + 8 * h, e);
            add(e, h);
        }
    if (i < n) {  // the tail through a zero-padded copy, padding lanes adding 0
        float buf[16] = {};
        std::memcpy(buf, x + i, static_cast<size_t>(n - i) * sizeof(float));
        for (int h = 0; h < 2; ++h) {
            __m256 e = exp8(_mm256_sub_ps(scaled8<K>(_mm256_loadu_ps(buf + 8 * h), sc), s));
            const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
            const __m256i left = _mm256_set1_epi32(static_cast<int32_t>(n - i - 8 * h));
            e = _mm256_and_ps(e, _mm256_castsi256_ps(_mm256_cmpgt_epi32(left, lane)));
            _mm256_storeu_ps(buf + 8 * h, e);
            add(e, h);
        }
        std::memcpy(y + i, buf, static_cast<size_t>(n - i) * sizeof(float));
    }
    double lanes[8];
    _mm256_storeu_pd(lanes, _mm256_add_pd(acc[0], acc[2]));
    _mm256_storeu_pd(lanes + 4, _mm256_add_pd(acc[1], acc[3]));
    return sum_lanes(lanes);
}

template <RowScale K>
PG_AVX2 float max_avx2(const float* x, float scale, int64_t n) {
    const __m256 sc = _mm256_set1_ps(scale);
    int64_t i = 0;
    float m = scaled<K>(x[0], scale);
    if (n >= 8) {
        __m256 acc = scaled8<K>(_mm256_loadu_ps(x), sc);
        for (i = 8; i + 8 <= n; i += 8)
            acc = _mm256_max_ps(acc, scaled8<K>(_mm256_loadu_ps(x + i), sc));
        float buf[8];
        _mm256_storeu_ps(buf, acc);
        for (float v : buf) m = v > m ? v : m;
    }
    for (; i < n; ++i) {
        const float v = scaled<K>(x[i], scale);
        m = v > m ? v : m;
    }
    return m;
}

// ---- AVX-512F ----

#define PG_AVX512 __attribute__((target("avx512f")))

PG_AVX512 inline __m512 exp16(__m512 x) {
    x = _mm512_max_ps(_mm512_set1_ps(kExpLo), x);
    x = _mm512_min_ps(_mm512_set1_ps(kExpHi), x);
    const __m512 magic = _mm512_set1_ps(kMagic);
    const __m512 kf = _mm512_sub_ps(_mm512_fmadd_ps(x, _mm512_set1_ps(kLog2e), magic), magic);
    __m512 r = _mm512_fnmadd_ps(kf, _mm512_set1_ps(kLn2Hi), x);
    r = _mm512_fnmadd_ps(kf, _mm512_set1_ps(kLn2Lo), r);
    __m512 p = _mm512_set1_ps(kExpC[0]);
    for (int j = 1; j < 8; ++j) p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kExpC[j]));
    const __m512i k = _mm512_cvtps_epi32(kf);
    const __m512i k1 = _mm512_srai_epi32(k, 1), k2 = _mm512_sub_epi32(k, k1);
    const __m512i bias = _mm512_set1_epi32(127);
    const __m512 s1 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(k1, bias), 23));
    const __m512 s2 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(k2, bias), 23));
    return _mm512_mul_ps(_mm512_mul_ps(p, s1), s2);
}

PG_AVX512 inline __m512 erf16(__m512 x) {
    const __m512i sign = _mm512_set1_epi32(static_cast<int32_t>(0x80000000u));
    const __m512 ax = _mm512_castsi512_ps(_mm512_andnot_si512(sign, _mm512_castps_si512(x)));
    const __m512 fi = _mm512_min_ps(_mm512_mul_ps(ax, _mm512_set1_ps(4.0f)), _mm512_set1_ps(15));
    const __m512i idx = _mm512_cvttps_epi32(fi);
    const __mmask16 small = _mm512_cmp_ps_mask(ax, _mm512_set1_ps(0.5f), _CMP_LT_OQ);
    const __m512 c =
        _mm512_fmadd_ps(_mm512_cvtepi32_ps(idx), _mm512_set1_ps(0.25f), _mm512_set1_ps(0.125f));
    const __m512 r = _mm512_mask_mov_ps(_mm512_sub_ps(ax, c), small, _mm512_mul_ps(ax, ax));
    __m512 p = _mm512_permutexvar_ps(idx, _mm512_loadu_ps(kErfCoef[kErfDegree]));
    for (int k = kErfDegree - 1; k >= 0; --k)
        p = _mm512_fmadd_ps(p, r, _mm512_permutexvar_ps(idx, _mm512_loadu_ps(kErfCoef[k])));
    const __m512 a = _mm512_mask_mov_ps(_mm512_set1_ps(1.0f), small, ax);
    const __m512 b =
        _mm512_mask_mov_ps(_mm512_permutexvar_ps(idx, _mm512_loadu_ps(kErfHead)), small, ax);
    __m512 y = _mm512_fmadd_ps(a, p, b);
    y = _mm512_mask_mov_ps(y, _mm512_cmp_ps_mask(ax, _mm512_set1_ps(4.0f), _CMP_GE_OQ),
                           _mm512_set1_ps(1.0f));
    return _mm512_castsi512_ps(
        _mm512_or_si512(_mm512_castps_si512(y), _mm512_and_si512(_mm512_castps_si512(x), sign)));
}

PG_AVX512 inline __m512 tanh16(__m512 x) {
    const __m512i sign = _mm512_set1_epi32(static_cast<int32_t>(0x80000000u));
    const __m512 ax = _mm512_castsi512_ps(_mm512_andnot_si512(sign, _mm512_castps_si512(x)));
    const __m512 fi = _mm512_min_ps(_mm512_mul_ps(ax, _mm512_set1_ps(4.0f)), _mm512_set1_ps(3));
    const __m512i idx = _mm512_cvttps_epi32(fi);
    const __mmask16 small = _mm512_cmp_ps_mask(ax, _mm512_set1_ps(0.5f), _CMP_LT_OQ);
    const __m512 c =
        _mm512_fmadd_ps(_mm512_cvtepi32_ps(idx), _mm512_set1_ps(0.25f), _mm512_set1_ps(0.125f));
    const __m512 r = _mm512_mask_mov_ps(_mm512_sub_ps(ax, c), small, _mm512_mul_ps(ax, ax));
    __m512 p = _mm512_permutexvar_ps(idx, _mm512_loadu_ps(kTanhCoef[kTanhDegree]));
    for (int k = kTanhDegree - 1; k >= 0; --k)
        p = _mm512_fmadd_ps(p, r, _mm512_permutexvar_ps(idx, _mm512_loadu_ps(kTanhCoef[k])));
    const __m512 one = _mm512_set1_ps(1.0f);
    const __m512 a = _mm512_mask_mov_ps(one, small, ax);
    const __m512 b =
        _mm512_mask_mov_ps(_mm512_permutexvar_ps(idx, _mm512_loadu_ps(kTanhHead)), small, ax);
    __m512 y = _mm512_fmadd_ps(a, p, b);
    const __m512 big = _mm512_sub_ps(
        one, _mm512_div_ps(_mm512_set1_ps(2.0f), _mm512_add_ps(exp16(_mm512_add_ps(ax, ax)), one)));
    y = _mm512_mask_mov_ps(y, _mm512_cmp_ps_mask(ax, one, _CMP_GE_OQ), big);
    return _mm512_castsi512_ps(
        _mm512_or_si512(_mm512_castps_si512(y), _mm512_and_si512(_mm512_castps_si512(x), sign)));
}

inline __mmask16 tail_mask(int64_t left) {
    return static_cast<__mmask16>((1u << left) - 1u);
}

template <__m512 (*f)(__m512)>
PG_AVX512 inline void map16(const float* x, float* y, int64_t n) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, f(_mm512_loadu_ps(x + i)));
    if (i < n) {
        const __mmask16 m = tail_mask(n - i);
        _mm512_mask_storeu_ps(y + i, m, f(_mm512_maskz_loadu_ps(m, x + i)));
    }
}

PG_AVX512 void exp_avx512(const float* x, float* y, int64_t n) {
    map16<exp16>(x, y, n);
}
PG_AVX512 void erf_avx512(const float* x, float* y, int64_t n) {
    map16<erf16>(x, y, n);
}
PG_AVX512 void tanh_avx512(const float* x, float* y, int64_t n) {
    map16<tanh16>(x, y, n);
}

template <RowScale K>
PG_AVX512 inline __m512 scaled16(__m512 v, __m512 s) {
    if constexpr (K == RowScale::kMul) return _mm512_mul_ps(v, s);
    if constexpr (K == RowScale::kDiv) return _mm512_div_ps(v, s);
    return v;
}

template <RowScale K>
PG_AVX512 double exp_sub_sum_avx512(const float* x, float scale, float shift, float* y, int64_t n) {
    const __m512 s = _mm512_set1_ps(shift), sc = _mm512_set1_ps(scale);
    __m512d acc0 = _mm512_setzero_pd(), acc1 = _mm512_setzero_pd();
    auto add = [&](__m512 e) PG_AVX512 {
        acc0 = _mm512_add_pd(acc0, _mm512_cvtps_pd(_mm512_castps512_ps256(e)));
        acc1 = _mm512_add_pd(
            acc1,
            _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(e), 1))));
    };
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512 e = exp16(_mm512_sub_ps(scaled16<K>(_mm512_loadu_ps(x + i), sc), s));
        _mm512_storeu_ps(y + i, e);
        add(e);
    }
    if (i < n) {
        const __mmask16 m = tail_mask(n - i);
        const __m512 v = scaled16<K>(_mm512_maskz_loadu_ps(m, x + i), sc);
        const __m512 e = _mm512_maskz_mov_ps(m, exp16(_mm512_sub_ps(v, s)));
        _mm512_mask_storeu_ps(y + i, m, e);
        add(e);
    }
    double lanes[8];
    _mm512_storeu_pd(lanes, _mm512_add_pd(acc0, acc1));
    return sum_lanes(lanes);
}

template <RowScale K>
PG_AVX512 float max_avx512(const float* x, float scale, int64_t n) {
    const __m512 sc = _mm512_set1_ps(scale);
    __m512 acc = _mm512_set1_ps(scaled<K>(x[0], scale));
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) acc = _mm512_max_ps(acc, scaled16<K>(_mm512_loadu_ps(x + i), sc));
    if (i < n)
        acc = _mm512_mask_max_ps(acc, tail_mask(n - i), acc,
                                 scaled16<K>(_mm512_maskz_loadu_ps(tail_mask(n - i), x + i), sc));
    return _mm512_reduce_max_ps(acc);
}

// ---- selection ----

bool cpu_has(VecIsa isa) {
    switch (isa) {
        case VecIsa::kAvx512:
            return __builtin_cpu_supports("avx512f");
        case VecIsa::kAvx2:
            return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
        case VecIsa::kScalar:
            return true;
    }
    return false;
}

VecIsa best_isa() {
    static const VecIsa best = cpu_has(VecIsa::kAvx512) ? VecIsa::kAvx512
                               : cpu_has(VecIsa::kAvx2) ? VecIsa::kAvx2
                                                        : VecIsa::kScalar;
    return best;
}

std::atomic<int> g_forced{-1};

}  // namespace

bool vec_isa_available(VecIsa isa) {
    return cpu_has(isa);
}

VecIsa vec_current_isa() {
    const int f = g_forced.load(std::memory_order_relaxed);
    return f < 0 ? best_isa() : static_cast<VecIsa>(f);
}

VecIsa vec_force_isa(VecIsa isa) {
    const VecIsa before = vec_current_isa();
    g_forced.store(static_cast<int>(cpu_has(isa) ? isa : VecIsa::kScalar));
    return before;
}

void vec_reset_isa() {
    g_forced.store(-1);
}

void vec_exp(const float* x, float* y, int64_t n) {
    switch (vec_current_isa()) {
        case VecIsa::kAvx512:
            return exp_avx512(x, y, n);
        case VecIsa::kAvx2:
            return exp_avx2(x, y, n);
        case VecIsa::kScalar:
            break;
    }
    for (int64_t i = 0; i < n; ++i) y[i] = exp_scalar(x[i]);
}

void vec_erf(const float* x, float* y, int64_t n) {
    switch (vec_current_isa()) {
        case VecIsa::kAvx512:
            return erf_avx512(x, y, n);
        case VecIsa::kAvx2:
            return erf_avx2(x, y, n);
        case VecIsa::kScalar:
            break;
    }
    for (int64_t i = 0; i < n; ++i) y[i] = erf_scalar(x[i]);
}

void vec_tanh(const float* x, float* y, int64_t n) {
    switch (vec_current_isa()) {
        case VecIsa::kAvx512:
            return tanh_avx512(x, y, n);
        case VecIsa::kAvx2:
            return tanh_avx2(x, y, n);
        case VecIsa::kScalar:
            break;
    }
    for (int64_t i = 0; i < n; ++i) y[i] = tanh_scalar(x[i]);
}

namespace {

template <RowScale K>
float max_of(const float* x, float s, int64_t n) {
    switch (vec_current_isa()) {
        case VecIsa::kAvx512:
            return max_avx512<K>(x, s, n);
        case VecIsa::kAvx2:
            return max_avx2<K>(x, s, n);
        case VecIsa::kScalar:
            break;
    }
    float m = scaled<K>(x[0], s);
    for (int64_t i = 1; i < n; ++i) {
        const float v = scaled<K>(x[i], s);
        m = v > m ? v : m;
    }
    return m;
}

template <RowScale K>
double exp_sub_sum_of(const float* x, float s, float shift, float* y, int64_t n) {
    switch (vec_current_isa()) {
        case VecIsa::kAvx512:
            return exp_sub_sum_avx512<K>(x, s, shift, y, n);
        case VecIsa::kAvx2:
            return exp_sub_sum_avx2<K>(x, s, shift, y, n);
        case VecIsa::kScalar:
            break;
    }
    double acc[16] = {};
    for (int64_t i = 0; i < n; ++i) acc[i % 16] += y[i] = exp_scalar(scaled<K>(x[i], s) - shift);
    double lanes[8];
    for (int j = 0; j < 8; ++j) lanes[j] = acc[j] + acc[j + 8];
    return sum_lanes(lanes);
}

}  // namespace

float vec_max(const float* x, int64_t n) {
    return max_of<RowScale::kNone>(x, 1.0f, n);
}

float vec_max_scaled(const float* x, float s, bool divide, int64_t n) {
    return divide ? max_of<RowScale::kDiv>(x, s, n) : max_of<RowScale::kMul>(x, s, n);
}

double vec_exp_sub_sum(const float* x, float shift, float* y, int64_t n) {
    return exp_sub_sum_of<RowScale::kNone>(x, 1.0f, shift, y, n);
}

double vec_exp_scaled_sub_sum(const float* x, float s, bool divide, float shift, float* y,
                              int64_t n) {
    return divide ? exp_sub_sum_of<RowScale::kDiv>(x, s, shift, y, n)
                  : exp_sub_sum_of<RowScale::kMul>(x, s, shift, y, n);
}

__attribute__((target_clones("avx512f", "avx2", "default"))) void vec_scale(float* y, float s,
                                                                            int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] *= s;
}

__attribute__((target_clones("avx512f", "avx2", "default"))) void vec_sub_sub(const float* x,
                                                                              float shift,
                                                                              float sub, float* y,
                                                                              int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - shift) - sub;
}

constexpr int kLanes = 16;

__attribute__((target_clones("avx512f", "avx2", "default"))) double vec_sum_f64(const float* x,
                                                                                int64_t n) {
    double acc[kLanes] = {};
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes)
        for (int j = 0; j < kLanes; ++j) acc[j] += static_cast<double>(x[i + j]);
    for (int j = 0; i < n; ++i, ++j) acc[j] += static_cast<double>(x[i]);
    double sum = 0;
    for (double a : acc) sum += a;
    return sum;
}

__attribute__((target_clones("avx512f", "avx2", "default"))) double vec_sum_sq_dev_f64(
    const float* x, double mean, int64_t n) {
    double acc[kLanes] = {};
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes)
        for (int j = 0; j < kLanes; ++j) {
            const double d = static_cast<double>(x[i + j]) - mean;
            acc[j] += d * d;
        }
    for (int j = 0; i < n; ++i, ++j) {
        const double d = static_cast<double>(x[i]) - mean;
        acc[j] += d * d;
    }
    double sum = 0;
    for (double a : acc) sum += a;
    return sum;
}

__attribute__((target_clones("avx512f", "avx2", "default"))) void vec_norm_affine(
    const float* x, double mean, double inv, const double* scale, const double* bias, float* y,
    int64_t n) {
    for (int64_t i = 0; i < n; ++i)
        y[i] = static_cast<float>((static_cast<double>(x[i]) - mean) * inv * scale[i] + bias[i]);
}

}  // namespace pg::ops
