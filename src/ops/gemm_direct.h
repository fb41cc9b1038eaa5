// A float32 GEMM that never packs: A is row-major and read in place, each row p of op(B) is read
// where it lies (b + b_off[p]: a matrix with any row stride, or the shifted planes of a padded
// image, which makes a stride-1 convolution a GEMM with no im2col), and C's columns may be
// mapped (a padded-width convolution result goes straight into the output). AVX-512F only:
// gemm_direct_available() says whether this build and CPU have it and gemm_force_isa (tests)
// has not turned it off; callers otherwise pack (gemm_fast_packed). Sums like gemm_fast's:
// every element accumulated over p in order with fused multiply-adds (in one pass: no
// k-slices).
// Tests diff it against gemm_reference and conv_reference (tests/unit/ops_gemm_direct_test.cc).
#pragma once
#include <cstdint>

#include "ops/gemm_kernels.h"

namespace pg {
class ThreadPool;
}

namespace pg::ops {

struct DirectGemm {
    int64_t m = 0, n = 0, k = 0;
    const float* a = nullptr;  // m x k, row-major
    int64_t lda = 0;
    const float* b = nullptr;  // op(B)[p][j] = b[b_off[p] + j] for j < n
    const int64_t* b_off = nullptr;
    float* c = nullptr;  // row i of C at c + i * ldc
    int64_t ldc = 0;
    // Column map: 0 = dense (column j of the product is C column j). Otherwise column j is
    // row r = j / row_pitch, position w = j % row_pitch of a padded-width result: kept when
    // w < row_len, as C column r * out_pitch + w (row_len <= row_pitch, row_len <= out_pitch).
    int64_t row_pitch = 0, row_len = 0, out_pitch = 0;
    float alpha = 1.0f;
    float beta = 0.0f;                       // 0: C is written without being read
    const GemmEpilogue* epilogue = nullptr;  // rows = rows of C
};

bool gemm_direct_available();
// C = alpha * A * op(B) + beta * C, then the epilogue; requires gemm_direct_available(). Runs
// gemm_dot when gemm_dot_pays.
void gemm_direct(const DirectGemm& g, ThreadPool* pool);
// gemm_direct on a row-major, untransposed GemmArgs (B's rows ldb apart).
void gemm_direct_dense(const GemmArgs<float>& g, ThreadPool* pool);

// gemm_direct's product with the vector lanes over k (gemm_dot_avx512.cc): the useful columns
// of op(B) copied transposed, then dot products, so a 49-column plane fills every lane; sums in
// a different order (numeric contract, not bit for bit). gemm_dot_pays: AVX-512, k >= 256, at
// most 256 useful columns, and a cost estimate (copy, reductions) 10 % under gemm_direct's lanes.
// gemm_direct also copies an A whose rows are 4 KiB apart with a padded stride first (the rows of
// a tile would share L1 sets) and ends m = 12q + 4 with two 8-row tiles.
bool gemm_dot_pays(const DirectGemm& g);
void gemm_dot(const DirectGemm& g, ThreadPool* pool);

}  // namespace pg::ops
