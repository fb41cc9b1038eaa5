// Internal to the AVX-512 GEMM and blocked-layout files (gemm_direct_avx512.cc,
// gemm_rowvec_avx512.cc, nchwc_conv_avx512.cc, nchwc_depthwise_avx512.cc,
// nchwc_winograd_avx512.cc; nchwc_pool.cc for the streamed stores): the parts of
// GemmEpilogue::apply that take one value per row, on 16 values of row i in a register (or on
// 16 rows' values, epilogue_channels_zmm), with apply's operations in apply's order (the including
// file is built with -ffp-contract=off, so the values are the same). The column bias (added before
// epilogue_rows_zmm) and the residual (after it, before epilogue_clamp_zmm) are read per column and
// stay with the caller.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#include <cstdint>

#include "ops/gemm_kernels.h"

// GCC 12's AVX-512 min / max intrinsics start from _mm512_undefined_ps() values, which
// -Wmaybe-uninitialized flags inside the headers (432 warnings in gemm_direct_avx512.cc).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace pg::ops {

// Whether a kernel writing the blocked output y (vectors 64 bytes apart from y) may stream its
// stores around the caches (MOVNTPS needs 64-byte aligned addresses). The blocked depthwise
// Conv, pools and Winograd output stream when it may: their output lines were mostly last
// written by the other core, and a store through the caches fetches each one from there first
// (docs/performance.md, session 25). A kernel that streams ends each part with _mm_sfence().
inline bool streamable(const float* y) {
    return reinterpret_cast<uintptr_t>(y) % 64 == 0;
}

// One output vector, streamed or stored through the caches.
__attribute__((target("avx512f"), always_inline)) inline void store_zmm(float* p, __m512 v,
                                                                        bool stream) {
    if (stream)
        _mm512_stream_ps(p, v);
    else
        _mm512_storeu_ps(p, v);
}

// Bias, then BatchNormalization's (v - sub) * mul + add, then scale, then shift, of row i.
__attribute__((target("avx512f"), always_inline)) inline __m512 epilogue_rows_zmm(
    __m512 v, const GemmEpilogue& ep, int64_t i) {
    if (ep.bias) v = _mm512_add_ps(v, _mm512_set1_ps(ep.bias[i]));
    if (ep.sub)
        v = _mm512_add_ps(
            _mm512_mul_ps(_mm512_sub_ps(v, _mm512_set1_ps(ep.sub[i])), _mm512_set1_ps(ep.mul[i])),
            _mm512_set1_ps(ep.add[i]));
    if (ep.scale) v = _mm512_mul_ps(v, _mm512_set1_ps(ep.scale[i]));
    if (ep.shift) v = _mm512_add_ps(v, _mm512_set1_ps(ep.shift[i]));
    return v;
}

// v < lo ? lo : v, then v > hi ? hi : v, when the epilogue clamps. vmaxps / vminps return their
// second operand when the two compare equal or either is NaN, so max(lo, v) is exactly the
// first (a NaN or a -0 against lo = 0 stays v) and min(hi, v) the second; an infinite hi (Relu)
// never clamps and is skipped.
__attribute__((target("avx512f"), always_inline)) inline __m512 epilogue_clamp_zmm(
    __m512 v, const GemmEpilogue& ep) {
    if (!ep.clamp) return v;
    v = _mm512_max_ps(_mm512_set1_ps(ep.lo), v);
    if (ep.hi != __builtin_inff()) v = _mm512_min_ps(_mm512_set1_ps(ep.hi), v);
    return v;
}

// The epilogue of 16 channels from `ch` held in v's lanes (a blocked layout's pixel, nchwc.h),
// GemmEpilogue::apply's operations in its order; res_at: the residual's 16 values there (read
// only when the epilogue has one).
__attribute__((target("avx512f"), always_inline)) inline __m512 epilogue_channels_zmm(
    __m512 v, const GemmEpilogue& ep, int64_t ch, const float* res_at) {
    if (ep.bias) v = _mm512_add_ps(v, _mm512_loadu_ps(ep.bias + ch));
    if (ep.sub)
        v = _mm512_add_ps(_mm512_mul_ps(_mm512_sub_ps(v, _mm512_loadu_ps(ep.sub + ch)),
                                        _mm512_loadu_ps(ep.mul + ch)),
                          _mm512_loadu_ps(ep.add + ch));
    if (ep.scale) v = _mm512_mul_ps(v, _mm512_loadu_ps(ep.scale + ch));
    if (ep.shift) v = _mm512_add_ps(v, _mm512_loadu_ps(ep.shift + ch));
    if (ep.res) v = _mm512_add_ps(v, _mm512_loadu_ps(res_at));
    return epilogue_clamp_zmm(v, ep);
}

// epilogue_channels_zmm for one block of 16 channels, its per-channel vectors loaded once: a
// kernel storing pixel after pixel of one block (nchwc_depthwise_avx512.cc) reads them from
// registers, where through the GemmEpilogue GCC reloaded every field after each vector store
// (a store may alias anything). Same operations in the same order, so the same bits.
struct BlockEpilogueZmm {
    bool bias = false, bn = false, scale = false, shift = false, res = false, clamp = false,
         hi_on = false;
    __m512 b, sub, mul, add, sc, sh, lo, hi;
    int64_t res_delta = 0;  // residual value of output address q: q[res_delta]
    // apply_store's stores bypass the caches (MOVNTPS; the outputs 64-byte aligned, and the
    // caller fences before others read them).
    bool stream = false;

    // No epilogue: apply_store only stores.
    __attribute__((target("avx512f"))) BlockEpilogueZmm() {
        b = sub = mul = add = sc = sh = lo = hi = _mm512_setzero_ps();
    }

    // Channels ch .. ch + 15 in the lanes; `one_channel`: channel ch in every lane (a plain
    // layout's plane, conv_depthwise_avx512.cc).
    __attribute__((target("avx512f")))
    BlockEpilogueZmm(const GemmEpilogue& ep, int64_t ch, bool one_channel = false) {
        bias = ep.bias != nullptr, bn = ep.sub != nullptr, scale = ep.scale != nullptr;
        shift = ep.shift != nullptr, res = ep.res != nullptr, clamp = ep.clamp;
        hi_on = clamp && ep.hi != __builtin_inff();
        const auto at = [&](bool on, const float* v) __attribute__((target("avx512f"))) {
            if (!on) return _mm512_setzero_ps();
            return one_channel ? _mm512_set1_ps(v[ch]) : _mm512_loadu_ps(v + ch);
        };
        b = at(bias, ep.bias);
        sub = at(bn, ep.sub), mul = at(bn, ep.mul), add = at(bn, ep.add);
        sc = at(scale, ep.scale), sh = at(shift, ep.shift);
        lo = _mm512_set1_ps(ep.lo), hi = _mm512_set1_ps(ep.hi);
        if (res) res_delta = ep.res - ep.res_origin;
    }

    // The epilogue of one vector whose lanes `m` go to dst (the other lanes' residual is not
    // read), the operations in apply_store's order.
    __attribute__((target("avx512f"), always_inline)) __m512 apply(__m512 v, const float* dst,
                                                                   __mmask16 m) const {
        if (bias) v = _mm512_add_ps(v, b);
        if (bn) v = _mm512_add_ps(_mm512_mul_ps(_mm512_sub_ps(v, sub), mul), add);
        if (scale) v = _mm512_mul_ps(v, sc);
        if (shift) v = _mm512_add_ps(v, sh);
        if (res) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, dst + res_delta));
        if (clamp) v = _mm512_max_ps(lo, v);
        if (hi_on) v = _mm512_min_ps(hi, v);
        return v;
    }

    // The epilogue of W vectors, the 16 channels of the output pixels at dst + j * step, then
    // their stores: one test per operation for all of them (tested per vector, a depthwise
    // Conv's eight outputs spent 56 tests and branches beside their 72 multiply-adds; its steps
    // in MobileNet took 1.03-1.04 of the time).
    template <int W>
    __attribute__((target("avx512f"), always_inline)) void apply_store(__m512 (&v)[W], float* dst,
                                                                       int64_t step) const {
#define PG_EACH(...)                                       \
    _Pragma("GCC unroll 12") for (int j = 0; j < W; ++j) { \
        __VA_ARGS__;                                       \
    }
        if (bias) PG_EACH(v[j] = _mm512_add_ps(v[j], b))
        if (bn) PG_EACH(v[j] = _mm512_add_ps(_mm512_mul_ps(_mm512_sub_ps(v[j], sub), mul), add))
        if (scale) PG_EACH(v[j] = _mm512_mul_ps(v[j], sc))
        if (shift) PG_EACH(v[j] = _mm512_add_ps(v[j], sh))
        if (res) PG_EACH(v[j] = _mm512_add_ps(v[j], _mm512_loadu_ps(dst + j * step + res_delta)))
        if (clamp) PG_EACH(v[j] = _mm512_max_ps(lo, v[j]))
        if (hi_on) PG_EACH(v[j] = _mm512_min_ps(hi, v[j]))
        if (stream) {
            PG_EACH(_mm512_stream_ps(dst + j * step, v[j]))
        } else {
            PG_EACH(_mm512_storeu_ps(dst + j * step, v[j]))
        }
#undef PG_EACH
    }
};

}  // namespace pg::ops

#endif
