// gemm_dot (gemm_direct's product with the lanes over k, for few useful columns): diffed against
// gemm_reference on random shapes (k chunks, a k tail, row / column tile edges, alpha / beta,
// B rows at any offsets), the column map against a dense product compacted by hand, the
// epilogue against GemmEpilogue::apply bit for bit, when gemm_dot_pays, and Convs that take it
// against conv_reference. Skipped where the CPU has no AVX-512.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "base/thread_pool.h"
#include "ops/conv_kernels.h"
#include "ops/gemm_direct.h"
#include "ops/gemm_kernels.h"
#include "support/direct_gemm_cases.h"
#include "support/random_values.h"

namespace pg {
namespace {

std::vector<float> random_values(size_t n, std::mt19937& rng) {
    return test::random_floats(n, rng);
}

// C = alpha * A * op(B) + beta * C by the plain loop, in double.
std::vector<float> reference(const test::DirectProblem& p, const std::vector<float>& c0,
                             float alpha, float beta) {
    std::vector<float> c(c0.size());
    for (int64_t i = 0; i < p.m; ++i)
        for (int64_t j = 0; j < p.n; ++j) {
            double s = 0;
            for (int64_t q = 0; q < p.k; ++q)
                s += double(p.a[size_t(i * p.lda + q)]) * p.b[size_t(p.off[size_t(q)] + j)];
            const size_t at = size_t(i * p.n + j);
            c[at] = float(alpha * s + (beta == 0.0f ? 0.0 : double(beta) * c0[at]));
        }
    return c;
}

class OpsGemmDot : public ::testing::Test {
  protected:
    void SetUp() override {
        if (!ops::gemm_direct_available()) GTEST_SKIP() << "no AVX-512 on this CPU";
    }
};

TEST_F(OpsGemmDot, MatchesReferenceOnRandomShapes) {
    std::mt19937 rng(31);
    std::uniform_int_distribution<int64_t> m_dim(1, 40), n_dim(1, 23), k_dim(1, 3000);
    ThreadPool pool(2);
    for (int t = 0; t < 40; ++t) {
        const int64_t m = m_dim(rng), n = n_dim(rng), k = t < 4 ? 2048 + 16 * t : k_dim(rng);
        test::DirectProblem p = test::make_direct_problem(m, n, k, rng);
        const float alpha = t % 3 == 0 ? 1.0f : 0.5f,
                    beta = t % 4 == 0 ? 0.0f : (t % 4 == 1 ? 1.0f : -0.25f);
        std::vector<float> c0 = random_values(size_t(m * n), rng), got = c0;
        if (beta == 0.0f) got.assign(got.size(), std::numeric_limits<float>::quiet_NaN());
        ops::DirectGemm d = test::direct_args(p, got.data(), n);
        d.alpha = alpha, d.beta = beta;
        ops::gemm_dot(d, t % 2 ? &pool : nullptr);
        const std::vector<float> want = reference(p, c0, alpha, beta);
        const double tol = 1e-6 * std::sqrt(double(k) + 1);
        for (size_t i = 0; i < want.size(); ++i)
            ASSERT_LE(std::fabs(got[i] - want[i]), tol * (1.0 + std::fabs(want[i])))
                << "m=" << m << " n=" << n << " k=" << k << " at " << i;
    }
}

// A padded-width product (rows of `pitch` columns, the first `len` kept) written into rows of
// `out_pitch`: the kept values are the dense product's, everything else is left untouched.
TEST_F(OpsGemmDot, ColumnMapWritesOnlyKeptColumns) {
    test::expect_column_map_writes_only_kept_columns(
        [](const ops::DirectGemm& d, ThreadPool* pool) { ops::gemm_dot(d, pool); },
        {{13, 7, 9, 7, 7, 300}, {30, 3, 15, 13, 14, 700}, {5, 2, 8, 1, 3, 257}}, 32);
}

// The epilogue gives the bytes of gemm_dot without it followed by GemmEpilogue::apply, with a
// residual, a clamp and a NaN row.
TEST_F(OpsGemmDot, EpilogueMatchesPlainArithmeticBitForBit) {
    test::expect_epilogue_matches_apply(
        [](const ops::DirectGemm& d, ThreadPool* pool) { ops::gemm_dot(d, pool); },
        [](int t) { return int64_t{6} + 5 * t; }, [](int t) { return int64_t{4} + 7 * t; },
        [](int t) { return int64_t{260} + 97 * t; }, false, 33);
}

TEST_F(OpsGemmDot, PaysOnlyForFewColumnsAndLongSums) {
    ops::DirectGemm d;
    d.m = 512, d.k = 4608, d.n = 6 * 9 + 7, d.row_pitch = 9, d.row_len = 7, d.out_pitch = 7;
    EXPECT_TRUE(ops::gemm_dot_pays(d));  // 3x3 at 7x7: 49 of 64 lanes
    d.row_pitch = d.row_len = d.out_pitch = 0, d.n = 49, d.k = 2048;
    EXPECT_TRUE(ops::gemm_dot_pays(d));  // 1x1 at 7x7
    d.k = 200;
    EXPECT_FALSE(ops::gemm_dot_pays(d));  // short sums
    d.k = 2048, d.m = 16;
    EXPECT_FALSE(ops::gemm_dot_pays(d));  // few rows: the copy costs too much
    d.m = 512, d.n = 64;
    EXPECT_FALSE(ops::gemm_dot_pays(d));  // whole vectors
    d.n = 13 * 16 + 14, d.row_pitch = 16, d.row_len = 14, d.out_pitch = 14, d.k = 2304;
    EXPECT_FALSE(ops::gemm_dot_pays(d));  // 3x3 at 14x14: 196 of 224 lanes
}

// Convs whose GEMM takes gemm_dot (7x7 maps, 1x1 and 3x3 with a column map) against the plain
// reference, with a bias, on the pool; and strided 1x1 Convs.
TEST_F(OpsGemmDot, ConvsOnSmallMapsMatchReference) {
    std::mt19937 rng(34);
    ThreadPool pool(2);
    struct Case {
        int64_t c, m, hw, k, stride;
    };
    // The last two: 1x1 with stride 2 (a compact copy of the used positions, then pointwise),
    // through gemm_dot and through gemm_direct.
    for (const Case& q :
         {Case{600, 256, 7, 1, 1}, Case{64, 256, 7, 3, 1}, Case{64, 256, 14, 3, 2},
          Case{1040, 256, 5, 1, 1}, Case{600, 256, 14, 1, 2}, Case{40, 30, 15, 1, 2}}) {
        ops::WindowAttrs wa;
        wa.strides = {q.stride, q.stride};
        const int64_t pad = q.k / 2;
        wa.pads = {pad, pad, pad, pad};
        ops::ConvShape s;
        s.c = q.c, s.m = q.m;
        s.w = ops::make_window(wa, {q.hw, q.hw}, {q.k, q.k}, "Conv");
        const int64_t k = q.c * q.k * q.k;
        std::vector<float> x = random_values(size_t(q.c * q.hw * q.hw), rng),
                           w = random_values(size_t(q.m * k), rng),
                           b = random_values(size_t(q.m), rng);
        const size_t ny = size_t(q.m * s.w.out_size());
        std::vector<float> fast(ny, std::numeric_limits<float>::quiet_NaN()), ref = fast;
        ops::conv_fast(s, x.data(), w.data(), b.data(), fast.data(), &pool);
        ops::conv_reference(s, x.data(), w.data(), b.data(), ref.data());
        const double tol = 1e-5 * std::sqrt(double(k) + 1);
        for (size_t i = 0; i < ny; ++i)
            ASSERT_LE(std::fabs(fast[i] - ref[i]), tol * (1 + std::fabs(ref[i])))
                << "c=" << q.c << " m=" << q.m << " at " << i;
    }
}

}  // namespace
}  // namespace pg
