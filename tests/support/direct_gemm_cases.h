// Test support for the products over a DirectGemm (ops/gemm_direct.h: gemm_dot, gemm_rowvec):
// random problems with B's rows at shuffled offsets, and the checks both kernels must pass
// whatever their order of summation: a column map writes only the kept columns (and the dense
// product's values there), and the fused epilogue gives the bytes of the plain product followed
// by GemmEpilogue::apply.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include "ops/gemm_direct.h"

namespace pg {
class ThreadPool;
}

namespace pg::test {

// A is m x k (row stride lda = k + 3); row p of B lies at off[p] inside b (rows of ldb = n + 5
// floats, in a shuffled order: consecutive rows are not adjacent).
struct DirectProblem {
    int64_t m, n, k, lda, ldb;
    std::vector<float> a, b;
    std::vector<int64_t> off;
};
DirectProblem make_direct_problem(int64_t m, int64_t n, int64_t k, std::mt19937& rng);
// The DirectGemm of p writing C at c (rows ldc apart), alpha 1, beta 0, no column map.
ops::DirectGemm direct_args(const DirectProblem& p, float* c, int64_t ldc);

using DirectProduct = std::function<void(const ops::DirectGemm&, ThreadPool*)>;

// Padded-width products: `rows` rows of `pitch` columns, the first `len` kept, written into rows
// of `out_pitch` (with a sum of k terms over m rows of C).
struct ColumnMapCase {
    int64_t m, rows, pitch, len, out_pitch, k;
};
// Each case through `product` dense and with the map (on a 2-thread pool): the kept values are
// the dense product's, every other value of C is left untouched.
void expect_column_map_writes_only_kept_columns(const DirectProduct& product,
                                                const std::vector<ColumnMapCase>& cases,
                                                unsigned seed);

// Six products of m_of(t) x n_of(t) x k_of(t) with a bias, BatchNormalization on odd cases, a
// residual on cases not divisible by 3, a clamp but in case 4, a NaN in row t of A, beta 1 on
// odd cases, and (when col_bias) a column bias on even cases: the fused epilogue gives the bytes
// of the product without it followed by GemmEpilogue::apply on each row.
void expect_epilogue_matches_apply(const DirectProduct& product,
                                   const std::function<int64_t(int)>& m_of,
                                   const std::function<int64_t(int)>& n_of,
                                   const std::function<int64_t(int)>& k_of, bool col_bias,
                                   unsigned seed);

}  // namespace pg::test
