// gemm_rowvec (gemm_direct's product with the vector lanes over rows of C): bit for bit against a
// scalar chain of fused multiply-adds over p in order (the arithmetic gemm_direct's tiles do) on
// random shapes (row blocks of 1 to 4 vectors, k pieces and tails, alpha / beta, B rows at any
// offsets), the column map, the epilogue against GemmEpilogue::apply, when gemm_rowvec_pays,
// and Convs taking it against the same chain written out per output. Skipped where the
// CPU has no AVX-512.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "base/thread_pool.h"
#include "ops/conv_kernels.h"
#include "ops/gemm_direct.h"
#include "ops/gemm_kernels.h"
#include "support/direct_gemm_cases.h"
#include "support/random_values.h"

namespace pg {
namespace {

// Each element as gemm_direct sums it: fused multiply-adds over p in order from zero, then
// alpha and beta as separate operations.
std::vector<float> fma_chain(const test::DirectProblem& p, const std::vector<float>& c0,
                             float alpha, float beta) {
    std::vector<float> c(c0.size());
    for (int64_t i = 0; i < p.m; ++i)
        for (int64_t j = 0; j < p.n; ++j) {
            float s = 0.0f;
            for (int64_t q = 0; q < p.k; ++q)
                s = std::fma(p.a[size_t(i * p.lda + q)], p.b[size_t(p.off[size_t(q)] + j)], s);
            const size_t at = size_t(i * p.n + j);
            if (alpha != 1.0f) s = alpha * s;
            if (beta != 0.0f) {
                const float old = beta == 1.0f ? c0[at] : beta * c0[at];
                s = old + s;
            }
            c[at] = s;
        }
    return c;
}

class OpsGemmRowvec : public ::testing::Test {
  protected:
    void SetUp() override {
        if (!ops::gemm_direct_available()) GTEST_SKIP() << "no AVX-512 on this CPU";
    }
};

TEST_F(OpsGemmRowvec, MatchesTheFusedMultiplyAddChainBitForBit) {
    std::mt19937 rng(41);
    std::uniform_int_distribution<int64_t> m_dim(1, 300), n_dim(1, 70), k_dim(1, 700);
    ThreadPool pool(2);
    for (int t = 0; t < 40; ++t) {
        const int64_t m = t < 4 ? 16 * (t + 1) : m_dim(rng), n = n_dim(rng),
                      k = t % 5 == 0 ? 64 * (1 + t % 3) : k_dim(rng);
        test::DirectProblem p = test::make_direct_problem(m, n, k, rng);
        const float alpha = t % 3 == 0 ? 1.0f : 0.5f,
                    beta = t % 4 == 0 ? 0.0f : (t % 4 == 1 ? 1.0f : -0.25f);
        std::vector<float> c0 = test::random_floats(size_t(m * n), rng), got = c0;
        if (beta == 0.0f) got.assign(got.size(), std::numeric_limits<float>::quiet_NaN());
        ops::DirectGemm d = test::direct_args(p, got.data(), n);
        d.alpha = alpha, d.beta = beta;
        ops::gemm_rowvec(d, t % 2 ? &pool : nullptr);
        const std::vector<float> want = fma_chain(p, c0, alpha, beta);
        ASSERT_EQ(std::memcmp(got.data(), want.data(), want.size() * sizeof(float)), 0)
            << "m=" << m << " n=" << n << " k=" << k;
    }
}

// An empty sum (k = 0) gives alpha * 0 + beta * C.
TEST_F(OpsGemmRowvec, EmptySumKeepsBetaTimesC) {
    std::mt19937 rng(42);
    test::DirectProblem p = test::make_direct_problem(70, 9, 0, rng);
    std::vector<float> c = test::random_floats(size_t(70 * 9), rng), want = c;
    for (float& v : want) v = 0.5f * v + 0.0f;
    ops::DirectGemm d = test::direct_args(p, c.data(), 9);
    d.beta = 0.5f;
    ops::gemm_rowvec(d, nullptr);
    EXPECT_EQ(c, want);
}

// A padded-width product (rows of `pitch` columns, the first `len` kept) written into rows of
// `out_pitch`: the kept values are the dense product's, everything else is left untouched.
TEST_F(OpsGemmRowvec, ColumnMapWritesOnlyKeptColumns) {
    test::expect_column_map_writes_only_kept_columns(
        [](const ops::DirectGemm& d, ThreadPool* pool) { ops::gemm_rowvec(d, pool); },
        {{130, 7, 9, 7, 7, 300}, {64, 3, 15, 13, 14, 70}, {75, 2, 8, 1, 3, 257}}, 43);
}

// The epilogue gives the bytes of gemm_rowvec without it followed by GemmEpilogue::apply, with
// a column bias, a residual, a clamp and a NaN row.
TEST_F(OpsGemmRowvec, EpilogueMatchesPlainArithmeticBitForBit) {
    test::expect_epilogue_matches_apply(
        [](const ops::DirectGemm& d, ThreadPool* pool) { ops::gemm_rowvec(d, pool); },
        [](int t) { return int64_t{64} + 37 * t; }, [](int t) { return int64_t{4} + 9 * t; },
        [](int t) { return int64_t{60} + 97 * t; }, true, 44);
}

// The clamp on the values where a vector max / min and the plain comparisons could differ
// (-0, +0, NaN, infinities, the bounds themselves), through gemm_direct's tiles and
// gemm_rowvec, against GemmEpilogue::apply bit for bit: Relu (hi infinite), Clip(0, 6), and a
// NaN bound.
TEST_F(OpsGemmRowvec, ClampKeepsThePlainComparisonsBits) {
    const float inf = std::numeric_limits<float>::infinity(),
                nan = std::numeric_limits<float>::quiet_NaN();
    const std::vector<float> edge = {-0.0f, 0.0f,   nan,     inf,  -inf, 6.0f,
                                     -6.0f, 1e-45f, -1e-45f, 3.0f, 7.0f, -1.0f};
    for (const auto& [lo, hi] : {std::pair{0.0f, inf}, std::pair{0.0f, 6.0f}, std::pair{-0.0f, nan},
                                 std::pair{nan, 6.0f}}) {
        for (const bool rowvec : {false, true}) {
            const int64_t m = rowvec ? 64 : 4, n = 48;
            std::vector<float> a(static_cast<size_t>(m), 1.0f), b(static_cast<size_t>(n), 0.0f);
            for (int64_t j = 0; j < n; ++j) b[size_t(j)] = edge[size_t(j) % edge.size()];
            const std::vector<int64_t> off = {0};
            ops::GemmEpilogue ep;
            ep.clamp = true, ep.lo = lo, ep.hi = hi;
            ops::DirectGemm d;
            d.m = m, d.n = n, d.k = 1, d.a = a.data(), d.lda = 1, d.b = b.data();
            d.b_off = off.data(), d.ldc = n;
            std::vector<float> fused(size_t(m * n)), plain(fused.size());
            d.c = fused.data(), d.epilogue = &ep;
            rowvec ? ops::gemm_rowvec(d, nullptr) : ops::gemm_direct(d, nullptr);
            d.c = plain.data(), d.epilogue = nullptr;
            rowvec ? ops::gemm_rowvec(d, nullptr) : ops::gemm_direct(d, nullptr);
            for (int64_t i = 0; i < m; ++i) ep.apply(i, plain.data() + i * n, n);
            ASSERT_EQ(std::memcmp(fused.data(), plain.data(), fused.size() * sizeof(float)), 0)
                << "lo " << lo << " hi " << hi << (rowvec ? " rowvec" : " direct");
        }
    }
}

TEST_F(OpsGemmRowvec, PaysForLongSumsOverFewColumns) {
    ops::DirectGemm d;
    d.m = 512, d.k = 4608, d.n = 6 * 9 + 7, d.row_pitch = 9, d.row_len = 7, d.out_pitch = 7;
    EXPECT_TRUE(ops::gemm_rowvec_pays(d));  // 3x3 at 7x7: 49 useful columns
    d.row_pitch = d.row_len = d.out_pitch = 0, d.n = 49, d.k = 512;
    EXPECT_TRUE(ops::gemm_rowvec_pays(d));  // 1x1 at 7x7
    d.k = 320;
    EXPECT_TRUE(ops::gemm_rowvec_pays(d));  // medium sums, many rows
    d.m = 192;
    EXPECT_FALSE(ops::gemm_rowvec_pays(d));  // medium sums, few rows
    d.m = 512, d.k = 192;
    EXPECT_FALSE(ops::gemm_rowvec_pays(d));  // short sums
    d.k = 512, d.m = 32;
    EXPECT_FALSE(ops::gemm_rowvec_pays(d));  // under one block of rows
    d.m = 512, d.n = 13 * 16 + 14, d.row_pitch = 16, d.row_len = 14, d.out_pitch = 14;
    EXPECT_TRUE(ops::gemm_rowvec_pays(d));  // 3x3 at 14x14: 196 useful columns
    d.row_pitch = d.row_len = d.out_pitch = 0, d.n = 392, d.k = 1024, d.m = 256;
    EXPECT_TRUE(ops::gemm_rowvec_pays(d));  // up to 512 columns with 256 rows and long sums
    d.m = 128;
    EXPECT_FALSE(ops::gemm_rowvec_pays(d));  // but 224 with fewer rows
    d.n = 196;
    EXPECT_TRUE(ops::gemm_rowvec_pays(d));
    d.m = 512, d.n = 784, d.k = 512;
    EXPECT_FALSE(ops::gemm_rowvec_pays(d));  // 28x28, long sums
    d.k = 256;
    EXPECT_FALSE(ops::gemm_rowvec_pays(d));  // 28x28, medium sums
    d.n = 3136, d.k = 512;
    EXPECT_FALSE(ops::gemm_rowvec_pays(d));  // 56x56
    d.n = 49;
    const bool was = ops::set_gemm_rowvec(false);
    EXPECT_FALSE(ops::gemm_rowvec_pays(d));  // switched off
    ops::set_gemm_rowvec(was);
}

// A 2-D Conv (square, symmetric padding) as gemm_rowvec sums it: per output, fused
// multiply-adds over (input channel, kernel row, kernel column) in order from zero, the padding's
// zeros included, then the bias added.
std::vector<float> conv_fma_chain(const ops::ConvShape& s, int64_t hw, int64_t kk, int64_t stride,
                                  int64_t pad, const std::vector<float>& x,
                                  const std::vector<float>& w, const std::vector<float>& b) {
    const int64_t o = s.w.out[2];
    std::vector<float> y(size_t(s.m * o * o));
    for (int64_t m = 0; m < s.m; ++m)
        for (int64_t oy = 0; oy < o; ++oy)
            for (int64_t ox = 0; ox < o; ++ox) {
                float acc = 0.0f;
                for (int64_t c = 0; c < s.c; ++c)
                    for (int64_t ky = 0; ky < kk; ++ky)
                        for (int64_t kx = 0; kx < kk; ++kx) {
                            const int64_t iy = oy * stride + ky - pad, ix = ox * stride + kx - pad;
                            const bool in = iy >= 0 && iy < hw && ix >= 0 && ix < hw;
                            const float v = in ? x[size_t((c * hw + iy) * hw + ix)] : 0.0f;
                            acc = std::fma(w[size_t(((m * s.c + c) * kk + ky) * kk + kx)], v, acc);
                        }
                y[size_t((m * o + oy) * o + ox)] = acc + b[size_t(m)];
            }
    return y;
}

// Convs whose GEMM takes gemm_rowvec (long sums on small maps: 1x1, 3x3 padded through a column
// map, 3x3 and 1x1 with stride 2, a ragged last block of rows, 14x14) give the bytes of the
// fused multiply-add chain, with a bias, on the pool.
TEST_F(OpsGemmRowvec, ConvsOnSmallMapsGiveTheChainsBits) {
    std::mt19937 rng(45);
    ThreadPool pool(2);
    struct Case {
        int64_t c, m, hw, k, stride;
    };
    for (const Case& q : {Case{520, 70, 7, 1, 1}, Case{64, 128, 7, 3, 1}, Case{60, 64, 14, 3, 2},
                          Case{600, 96, 13, 1, 2}, Case{512, 64, 14, 1, 1}}) {
        ops::WindowAttrs wa;
        wa.strides = {q.stride, q.stride};
        const int64_t pad = q.k / 2;
        wa.pads = {pad, pad, pad, pad};
        ops::ConvShape s;
        s.c = q.c, s.m = q.m;
        s.w = ops::make_window(wa, {q.hw, q.hw}, {q.k, q.k}, "Conv");
        const int64_t k = q.c * q.k * q.k;
        std::vector<float> x = test::random_floats(size_t(q.c * q.hw * q.hw), rng),
                           w = test::random_floats(size_t(q.m * k), rng),
                           b = test::random_floats(size_t(q.m), rng);
        const size_t ny = size_t(q.m * s.w.out_size());
        std::vector<float> got(ny);
        ops::conv_fast(s, x.data(), w.data(), b.data(), got.data(), &pool);
        const std::vector<float> want = conv_fma_chain(s, q.hw, q.k, q.stride, pad, x, w, b);
        ASSERT_EQ(want.size(), ny);
        ASSERT_EQ(std::memcmp(got.data(), want.data(), ny * sizeof(float)), 0)
            << "c=" << q.c << " m=" << q.m << " hw=" << q.hw << " k=" << q.k;
    }
}

}  // namespace
}  // namespace pg
