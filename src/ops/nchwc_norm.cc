// BatchNormalization (+ per-channel Mul / Add, Relu) on blocked tensors (nchwc.h):
// batch_norm_fast's arithmetic on 16 channels per vector, each operation rounded on its own (built
// with -ffp-contract=off), Relu as v < 0 ? 0 : v. Work: (image, block) planes, one contiguous
// range per thread (run_parts: densenet121 0.986-0.996 against claimed chunks).
#include <cmath>

#include "base/error.h"
#include "base/thread_pool.h"
#include "ops/gemm_kernels.h"
#include "ops/nchwc.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define PG_NCHWC_NORM_AVX512 1
#endif

namespace pg::ops {

#ifdef PG_NCHWC_NORM_AVX512
namespace {

constexpr int64_t kB = kNchwcBlock;

// One block plane: the factors of its 16 channels (c0 the first), then every pixel.
__attribute__((target("avx512f"))) void norm_plane(const BlockedNorm& a, int64_t c0, const float* x,
                                                   int64_t plane, float* y) {
    alignas(64) float k[kB];
    for (int64_t i = 0; i < kB; ++i)
        k[i] = static_cast<float>(a.scale[c0 + i] /
                                  std::sqrt(static_cast<double>(a.var[c0 + i]) + a.epsilon));
    const __m512 vk = _mm512_load_ps(k), vm = _mm512_loadu_ps(a.mean + c0),
                 vb = _mm512_loadu_ps(a.bias + c0);
    const __m512 vpm = a.post_mul ? _mm512_loadu_ps(a.post_mul + c0) : _mm512_set1_ps(1.0f);
    const __m512 vpa = a.post_add ? _mm512_loadu_ps(a.post_add + c0) : _mm512_setzero_ps();
    const __m512 zero = _mm512_setzero_ps();
    for (int64_t p = 0; p < plane; ++p) {
        __m512 v =
            _mm512_add_ps(_mm512_mul_ps(_mm512_sub_ps(_mm512_loadu_ps(x + p * kB), vm), vk), vb);
        if (a.post_mul) v = _mm512_mul_ps(v, vpm);
        if (a.post_add) v = _mm512_add_ps(v, vpa);
        if (a.relu) v = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, zero, _CMP_LT_OQ), v, zero);
        _mm512_storeu_ps(y + p * kB, v);
    }
}

}  // namespace

void batch_norm_nchwc(const BlockedNorm& a, int64_t n, int64_t cb, int64_t plane, const float* x,
                      float* y, ThreadPool* pool) {
    if (!nchwc_available())
        throw Error(ErrorKind::kInternal, "batch_norm_nchwc: not available on this CPU");
    const int64_t planes = n * cb;
    run_parts(planes > 1 && planes * plane * kB > (1 << 15) ? pool : nullptr, planes,
              [&](int64_t b, int64_t e) {
                  for (int64_t q = b; q < e; ++q)
                      norm_plane(a, (q % cb) * kB, x + q * plane * kB, plane, y + q * plane * kB);
              });
}

#else

void batch_norm_nchwc(const BlockedNorm&, int64_t, int64_t, int64_t, const float*, float*,
                      ThreadPool*) {
    throw Error(ErrorKind::kInternal, "batch_norm_nchwc: not built for this CPU");
}

#endif

}  // namespace pg::ops
