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
#include <vector>

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
// gemm_rowvec when gemm_rowvec_pays, else gemm_dot when gemm_dot_pays.
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

// gemm_direct's product with the vector lanes over rows of C (gemm_rowvec_avx512.cc), for few
// useful columns and many rows (a 7x7 convolution map): each block of 64 rows of A is copied
// transposed, 64 values of k at a time (an L1-sized block), and tiles of 64 rows x 6 useful
// columns accumulate over the whole k axis, each element with fused multiply-adds over p in
// order from zero as gemm_direct's, then alpha, beta and the epilogue as gemm_direct applies
// them: the same bits as gemm_direct, with no lane spent on a dropped or ragged column.
// gemm_rowvec_pays: AVX-512, the switch on, m >= 64, and k >= 512 with at most 1024 useful
// columns or k >= 256 with m >= 256 and at most 256 useful columns (measured against gemm_direct /
// gemm_dot on ResNet, DenseNet, Inception, MobileNet, ShuffleNet and transformer shapes; see
// gemm_rowvec_avx512.cc).
bool gemm_rowvec_pays(const DirectGemm& g);
void gemm_rowvec(const DirectGemm& g, ThreadPool* pool);
// Tests and benches: turns gemm_rowvec off (process-wide); returns the previous setting.
bool set_gemm_rowvec(bool on);
// Tests and benches: gemm_direct's whole-column tasks go to the pool's threads as one
// contiguous range each (on, the default) or in dynamically claimed chunks (off); the values are
// the same. Returns the previous setting.
bool set_gemm_direct_static(bool on);
// Tests and benches: full 12-row tiles address A's rows from four row pointers plus scaled
// multiples of lda (on, the default) or from twelve row pointers (off); the same values.
// Returns the previous setting.
bool set_gemm_direct_row_bases(bool on);
// Tests and benches: a column tile whose rows of B are a multiple of 1 KiB apart (and k >= 128,
// two row tiles or more) copies them into a contiguous strip first (on, the default) or reads
// them in place (off); the same values. Returns the previous setting.
bool set_gemm_direct_b_strips(bool on);
// Tests and benches: each row tile fetches the next row tile's rows of A into L2 as it runs (on,
// the default) or leaves them to the hardware (off); the same values. Returns the previous
// setting.
bool set_gemm_direct_a_ahead(bool on);

// The useful columns of a DirectGemm (gemm_direct_columns.cc): product column src[u] of op(B)
// goes to C column dst[u] (the columns the map keeps; all n of them when C is dense).
struct DirectColumns {
    std::vector<int64_t> src, dst;
};
DirectColumns direct_columns(const DirectGemm& g);
// C rows [i0, i1) from their finished sums, sum(i, u) = part[(i - i0) * row_step + u * col_step]
// for useful column u: alpha, beta, then the epilogue on each run of adjacent C columns, with
// gemm_direct's operations (gemm_dot's last pass; gemm_rowvec does the same in registers).
void finish_direct_rows(const DirectGemm& g, const DirectColumns& c, const float* part,
                        int64_t row_step, int64_t col_step, int64_t i0, int64_t i1);

}  // namespace pg::ops
