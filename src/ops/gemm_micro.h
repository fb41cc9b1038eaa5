// The GEMM micro-kernels behind gemm_fast (internal to src/ops): each computes a tile of C
// = beta * C + alpha * A * Bp for one k-slice. A is a kGemmMr-tall panel (packed: kc x kGemmMr
// floats, p-major; or read in place: row 0 at ap, rows lda apart, rows past mr repeating row
// mr - 1). Bp is one kGemmNr-wide packed panel, or two side by side (the second bstride floats
// after the first) when the kernel set is wide. Every kernel accumulates each element over p in
// order with fused multiply-adds where the ISA has them, so all ISAs give the same sums.
#pragma once
#include <cstdint>

#include "ops/gemm_kernels.h"

namespace pg::ops {

constexpr int kGemmMr = 12;  // rows of a tile (the packed-A panel height)

// C[mr x nr] for one k-slice; nr <= kGemmNr, or <= 2 * kGemmNr for a wide set.
using GemmMicroFn = void (*)(int64_t kc, const float* ap, int64_t lda, const float* bp,
                             int64_t bstride, float* c, int64_t ldc, int mr, int nr, float alpha,
                             float beta);

struct GemmMicro {
    GemmMicroFn fn = nullptr;
    bool wide = false;  // handles two panels (nr up to 2 * kGemmNr) per call
    GemmIsa isa = GemmIsa::kBaseline;
};

// The AVX-512F set (wide); fn is nullptr when the compiler cannot build it.
GemmMicro gemm_micro_avx512();

}  // namespace pg::ops
