// The 3x3 depthwise planes with AVX-512F (conv_depthwise.h): sixteen outputs at a time from the
// zero-padded copy. Column stride 1: nine shifted loads; column stride 2: each kernel row's
// three taps deinterleaved from four loads with two-source permutes (even columns, odd columns,
// even columns two further), instead of a load pair and a shuffle per tap and eight outputs. Same
// taps in the same order with fused multiply-adds as the AVX2 path (conv_depthwise.cc); tests diff
// both against conv_reference. A fused epilogue is applied to each vector before its store with
// GemmEpilogue::apply's operations (built with -ffp-contract=off), not in a second pass over the
// plane: ShuffleNet's depthwise steps spent about as long in that pass as in their taps.
#include "ops/conv_depthwise.h"

#include <atomic>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#include "ops/gemm_epilogue_avx512.h"
#endif

namespace pg::ops {

namespace {
std::atomic<bool> g_plane_epilogue{true};  // set_depthwise_plane_epilogue
}  // namespace

bool set_depthwise_plane_epilogue(bool on) {
    return g_plane_epilogue.exchange(on);
}

#if defined(__x86_64__) && defined(__GNUC__)

namespace {

// Outputs [j, j + 16) of a row of `width`, the part inside it, through the epilogue when given.
__attribute__((target("avx512f"), always_inline)) inline void store_row(
    float* yr, int64_t j, int64_t width, __m512 acc, const BlockEpilogueZmm* ep) {
    const int64_t left = width - j;
    const __mmask16 m = left >= 16 ? __mmask16(0xffff) : static_cast<__mmask16>((1u << left) - 1);
    if (ep) acc = ep->apply(acc, yr + j, m);
    if (left >= 16)
        _mm512_storeu_ps(yr + j, acc);
    else
        _mm512_mask_storeu_ps(yr + j, m, acc);
}

}  // namespace

bool depthwise_avx512_available() {
    static const bool has = [] {
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx512f") != 0;
    }();
    return has;
}

namespace {

// One plane, column stride S (1 or 2): bias, then the nine taps in order per 16 outputs.
template <int S>
__attribute__((target("avx512f"))) void plane_3x3(const Window& g, const float* buf, int64_t cols,
                                                  const float* wk, float b, float* yc,
                                                  const BlockEpilogueZmm* ep) {
    const __m512i even =
        _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
    __m512 w[9];
    for (int i = 0; i < 9; ++i) w[i] = _mm512_set1_ps(wk[i]);
    const __m512 bias = _mm512_set1_ps(b);
    for (int64_t oh = 0; oh < g.out[1]; ++oh) {
        const float* r0 = buf + oh * g.stride[1] * cols;
        float* yr = yc + oh * g.out[2];
        for (int64_t j = 0; j < g.out[2]; j += 16) {
            __m512 acc = bias;
            for (int kh = 0; kh < 3; ++kh) {
                const float* p = r0 + kh * cols + S * j;
                __m512 t0, t1, t2;  // the row's taps for the 16 outputs
                if constexpr (S == 1) {
                    t0 = _mm512_loadu_ps(p), t1 = _mm512_loadu_ps(p + 1);
                    t2 = _mm512_loadu_ps(p + 2);
                } else {
                    const __m512 a = _mm512_loadu_ps(p), c = _mm512_loadu_ps(p + 16);
                    const __m512 a2 = _mm512_loadu_ps(p + 2), c2 = _mm512_loadu_ps(p + 18);
                    t0 = _mm512_permutex2var_ps(a, even, c), t1 = _mm512_permutex2var_ps(a, odd, c);
                    t2 = _mm512_permutex2var_ps(a2, even, c2);
                }
                acc = _mm512_fmadd_ps(t0, w[3 * kh], acc);
                acc = _mm512_fmadd_ps(t1, w[3 * kh + 1], acc);
                acc = _mm512_fmadd_ps(t2, w[3 * kh + 2], acc);
            }
            store_row(yr, j, g.out[2], acc, ep);
        }
    }
}

}  // namespace

bool depthwise_3x3_avx512(const Window& g, const float* buf, int64_t cols, const float* wk, float b,
                          float* yc, const GemmEpilogue* epilogue, int64_t c) {
    if (epilogue && (epilogue->col_bias || !g_plane_epilogue.load(std::memory_order_relaxed)))
        epilogue = nullptr;  // left to the caller (a col_bias is not a Conv's)
    const BlockEpilogueZmm held =
        epilogue ? BlockEpilogueZmm(*epilogue, c, true) : BlockEpilogueZmm();
    const BlockEpilogueZmm* ep = epilogue ? &held : nullptr;
    if (g.stride[2] == 2)
        plane_3x3<2>(g, buf, cols, wk, b, yc, ep);
    else
        plane_3x3<1>(g, buf, cols, wk, b, yc, ep);
    return ep != nullptr;
}

#else

bool depthwise_avx512_available() {
    return false;
}

bool depthwise_3x3_avx512(const Window&, const float*, int64_t, const float*, float, float*,
                          const GemmEpilogue*, int64_t) {
    return false;
}

#endif

}  // namespace pg::ops
