// MatMul / Gemm / Einsum: the float32 fast GEMM diffed against the plain reference on random
// shapes, and ONNX semantics through the runtime (1-D operands, batch broadcasting, C, einsum).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "base/error.h"
#include "base/thread_pool.h"
#include "ops/gemm_kernels.h"
#include "support/gemm_isa.h"
#include "support/op_runner.h"
#include "support/random_values.h"

namespace pg {
namespace {

using test::f32;
using test::run_op;
using test::values_f32;

std::vector<float> random_values(size_t n, std::mt19937& rng) {
    return test::random_floats(n, rng);
}

// Runs gemm_fast and gemm_reference on the same random problem and compares every element.
void diff_gemm(int64_t m, int64_t n, int64_t k, bool ta, bool tb, float alpha, float beta,
               ThreadPool* pool, std::mt19937& rng) {
    const auto a = random_values(size_t(m * k), rng), b = random_values(size_t(k * n), rng);
    const auto c0 = random_values(size_t(m * n), rng);
    std::vector<float> fast = c0, ref = c0;
    if (beta == 0.0f) fast.assign(fast.size(), std::numeric_limits<float>::quiet_NaN());
    ops::GemmArgs<float> g;
    g.m = m, g.n = n, g.k = k, g.a = a.data(), g.lda = ta ? m : k, g.trans_a = ta;
    g.b = b.data(), g.ldb = tb ? k : n, g.trans_b = tb, g.ldc = n, g.alpha = alpha, g.beta = beta;
    g.c = fast.data();
    ops::gemm_fast(g, pool);
    g.c = ref.data();
    ops::gemm_reference(g);
    const double tol = 1e-5 * std::sqrt(double(k) + 1);
    for (size_t i = 0; i < ref.size(); ++i)
        ASSERT_LE(std::fabs(fast[i] - ref[i]), tol * (1.0 + std::fabs(ref[i])))
            << "m=" << m << " n=" << n << " k=" << k << " ta=" << ta << " tb=" << tb << " at " << i;
}

TEST(OpsMatMul, FastGemmMatchesReferenceOnRandomShapes) {
    test::for_each_gemm_isa([&] {
        std::mt19937 rng(7);
        std::uniform_int_distribution<int64_t> dim(1, 67);
        ThreadPool pool(2);
        for (int t = 0; t < 200; ++t) {
            const float alpha = t % 3 == 0 ? 1.0f : 0.5f,
                        beta = t % 4 == 0 ? 0.0f : (t % 4 == 1 ? 1.0f : -0.25f);
            diff_gemm(dim(rng), dim(rng), dim(rng), t % 2, (t / 2) % 2, alpha, beta,
                      t % 5 ? nullptr : &pool, rng);
        }
    });
}

TEST(OpsMatMul, FastGemmMatchesReferenceAcrossBlocks) {
    test::for_each_gemm_isa([&] {
        std::mt19937 rng(11);
        ThreadPool pool(2);
        diff_gemm(197, 1041, 600, false, false, 1.0f, 0.0f, &pool,
                  rng);  // several m, n and k blocks
        diff_gemm(101, 530, 257, true, true, 2.0f, 1.0f, &pool, rng);
        diff_gemm(1, 700, 300, false, true, 1.0f, 0.0f, nullptr, rng);  // matrix-vector
    });
}

// Each work split of gemm_fast: rows over the pool (few column blocks), columns over the pool
// (one or many blocks, few rows), and the matrix-vector loop (m = 1) in parallel.
TEST(OpsMatMul, FastGemmMatchesReferenceInEverySplit) {
    test::for_each_gemm_isa([&] {
        std::mt19937 rng(13);
        ThreadPool pool(2);
        diff_gemm(200, 200, 600, false, false, 1.0f, 0.0f, &pool, rng);  // rows split
        diff_gemm(200, 100, 600, true, true, 0.5f, -0.25f, &pool, rng);
        diff_gemm(13, 31, 300, false, true, 1.0f, 1.0f, &pool, rng);
        diff_gemm(200, 300, 600, false, false, 1.0f, 0.0f, &pool, rng);  // columns split
        diff_gemm(5, 2000, 300, false, false, 1.0f, 1.0f, &pool, rng);   // columns, few rows
        diff_gemm(40, 1500, 70, false, true, 1.0f, 0.0f, &pool, rng);
        diff_gemm(1, 3000, 1000, false, false, 1.0f, 0.5f, &pool, rng);  // matrix-vector
        diff_gemm(1, 3000, 1000, true, true, 2.0f, 0.0f, &pool, rng);
        diff_gemm(1, 5, 3, false, false, 1.0f, 0.0f, &pool, rng);
        ThreadPool pool3(3);  // rows split with uneven packing shares of the shared op(B)
        diff_gemm(50, 49, 700, false, false, 1.0f, 1.0f, &pool3, rng);
        diff_gemm(31, 17, 300, true, true, 1.0f, 0.0f, &pool3, rng);
    });
}

// m = 1 with a transposed B reads eight rows of B at a time (set_gemv_row_blocks); every row's
// sum is the one-row loop's, bit for bit, over widths and depths that leave partial blocks of
// eight rows and of eight columns, with and without the pool, and near the reference.
TEST(OpsMatMul, MatrixVectorRowBlocksGiveTheOneRowBits) {
    std::mt19937 rng(17);
    ThreadPool pool(2);
    for (int t = 0; t < 60; ++t) {
        const int64_t n = 1 + rng() % (t % 3 ? 40 : 3000), k = 1 + rng() % (t % 2 ? 70 : 1100);
        const auto a = random_values(size_t(k), rng), b = random_values(size_t(k * n), rng);
        std::vector<float> blocks(static_cast<size_t>(n)), rows(blocks), ref(blocks);
        ops::GemmArgs<float> g;
        g.m = 1, g.n = n, g.k = k, g.a = a.data(), g.lda = k, g.b = b.data(), g.ldb = k;
        g.trans_b = true, g.ldc = n;
        ThreadPool* p = t % 4 ? &pool : nullptr;
        g.c = blocks.data();
        ops::gemm_fast(g, p);
        const bool was = ops::set_gemv_row_blocks(false);
        g.c = rows.data();
        ops::gemm_fast(g, p);
        ops::set_gemv_row_blocks(was);
        g.c = ref.data();
        ops::gemm_reference(g);
        ASSERT_EQ(std::memcmp(blocks.data(), rows.data(), size_t(n) * sizeof(float)), 0)
            << "n=" << n << " k=" << k;
        for (int64_t j = 0; j < n; ++j)
            ASSERT_NEAR(blocks[size_t(j)], ref[size_t(j)],
                        1e-5 * std::sqrt(double(k) + 1) * (1 + std::fabs(ref[size_t(j)])));
    }
}

// The column-bias epilogue (MatMul + bias Add) gives gemm_fast's bytes followed by the plain
// per-column add, in every path: gemm_direct, packed (each ISA), matrix-vector, k = 0.
TEST(OpsMatMul, ColumnBiasEpilogueMatchesPlainAddBitForBit) {
    test::for_each_gemm_isa([&] {
        std::mt19937 rng(17);
        ThreadPool pool(2);
        struct Case {
            int64_t m, n, k;
            bool ta;
        };
        for (const Case& q :
             {Case{37, 70, 50, false}, Case{1, 90, 40, false}, Case{9, 33, 0, false},
              Case{1500, 40, 20, false}, Case{20, 45, 30, true}}) {
            const auto a = random_values(size_t(q.m * std::max<int64_t>(q.k, 1)), rng);
            const auto b = random_values(size_t(std::max<int64_t>(q.k, 1) * q.n), rng);
            const auto bias = random_values(size_t(q.n), rng);
            std::vector<float> fused(size_t(q.m * q.n)), plain(fused.size());
            ops::GemmArgs<float> g;
            g.m = q.m, g.n = q.n, g.k = q.k, g.a = a.data(), g.lda = q.ta ? q.m : q.k;
            g.trans_a = q.ta, g.b = b.data(), g.ldb = q.n, g.ldc = q.n;
            g.c = plain.data();
            ops::gemm_fast(g, &pool);
            for (int64_t i = 0; i < q.m; ++i)
                for (int64_t j = 0; j < q.n; ++j)
                    plain[size_t(i * q.n + j)] = plain[size_t(i * q.n + j)] + bias[size_t(j)];
            ops::GemmEpilogue ep;
            ep.col_bias = bias.data(), ep.col_origin = fused.data(), ep.col_ldc = q.n;
            g.c = fused.data(), g.epilogue = &ep;
            ops::gemm_fast(g, &pool);
            ASSERT_EQ(std::memcmp(fused.data(), plain.data(), fused.size() * sizeof(float)), 0)
                << "m=" << q.m << " n=" << q.n << " k=" << q.k;
        }
    });
}

TEST(OpsMatMul, OneDimensionalOperands) {
    auto v = run_op("MatMul", {f32({3}, {1, 2, 3}), f32({3}, {4, 5, 6})});
    EXPECT_TRUE(v[0].dims().empty());
    EXPECT_EQ(values_f32(v[0]), std::vector<float>{32});
    auto mv = run_op("MatMul", {f32({2, 3}, {1, 0, 0, 0, 1, 0}), f32({3}, {7, 8, 9})});
    EXPECT_EQ(mv[0].dims(), (std::vector<int64_t>{2}));
    EXPECT_EQ(values_f32(mv[0]), (std::vector<float>{7, 8}));
}

TEST(OpsMatMul, BatchDimsBroadcast) {
    std::mt19937 rng(3);
    const auto av = random_values(2 * 1 * 3 * 4, rng), bv = random_values(3 * 4 * 5, rng);
    auto out = run_op("MatMul", {f32({2, 1, 3, 4}, av), f32({3, 4, 5}, bv)});
    ASSERT_EQ(out[0].dims(), (std::vector<int64_t>{2, 3, 3, 5}));
    const auto y = values_f32(out[0]);
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 3; ++j)
            for (int r = 0; r < 3; ++r)
                for (int c = 0; c < 5; ++c) {
                    float acc = 0;
                    for (int p = 0; p < 4; ++p)
                        acc += av[(i * 3 + r) * 4 + p] * bv[(j * 4 + p) * 5 + c];
                    EXPECT_NEAR(y[((i * 3 + j) * 3 + r) * 5 + c], acc, 1e-5);
                }
}

// A batch of A matrices times one B (2-D, or with batch dims of 1) runs as one taller GEMM; on
// random shapes around the fast-GEMM threshold it must give the float64 products of every matrix.
TEST(OpsMatMul, BatchOfAWithOneBMatchesFloat64) {
    std::mt19937 rng(17);
    for (int t = 0; t < 60; ++t) {
        std::vector<int64_t> ad;
        for (int i = 0, rank = t % 4; i < rank; ++i) ad.push_back(1 + int64_t(rng() % 4));
        int64_t items = 1;
        for (int64_t d : ad) items *= d;
        const int64_t m = 1 + rng() % (t % 3 ? 5 : 40), k = 1 + rng() % 70, n = 1 + rng() % 40;
        std::vector<int64_t> bd = t % 5 == 1 ? std::vector<int64_t>{1, 1} : std::vector<int64_t>{};
        ad.push_back(m), ad.push_back(k), bd.push_back(k), bd.push_back(n);
        const auto av = random_values(size_t(items * m * k), rng);
        const auto bv = random_values(size_t(k * n), rng);
        const auto out = run_op("MatMul", {f32(ad, av), f32(bd, bv)});
        ASSERT_EQ(out[0].numel(),
                  uint64_t(std::max<size_t>(ad.size(), bd.size()) > 0 ? items * m * n : m * n));
        const auto y = values_f32(out[0]);
        for (int64_t i = 0; i < items * m; ++i)
            for (int64_t c = 0; c < n; ++c) {
                double acc = 0;
                for (int64_t p = 0; p < k; ++p)
                    acc += double(av[size_t(i * k + p)]) * bv[size_t(p * n + c)];
                ASSERT_NEAR(y[size_t(i * n + c)], acc, 1e-5 * std::sqrt(double(k)))
                    << "case " << t << " row " << i << " col " << c;
            }
    }
}

TEST(OpsMatMul, MismatchedInnerDimsAreInvalid) {
    EXPECT_THROW(run_op("MatMul", {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({2}, {1, 2})}), Error);
}

TEST(OpsGemm, TransposesScalesAndBroadcastsC) {
    using ir::Attribute;
    auto out =
        run_op("Gemm", {f32({2, 2}, {1, 3, 2, 4}), f32({2, 2}, {1, 0, 0, 1}), f32({2}, {10, 20})},
               ir::attrs(Attribute::make_int("transA", 1), Attribute::make_float("alpha", 2.0f),
                         Attribute::make_float("beta", 0.5f)));
    // A^T = [[1,2],[3,4]]; 2 * A^T + 0.5 * [10, 20]
    EXPECT_EQ(values_f32(out[0]), (std::vector<float>{7, 14, 11, 18}));
    auto no_c = run_op("Gemm", {f32({1, 2}, {1, 2}), f32({2, 1}, {3, 4})}, {}, 13);
    EXPECT_EQ(values_f32(no_c[0]), std::vector<float>{11});
}

TEST(OpsEinsum, DiagonalTraceTransposeAndImplicitOutput) {
    using ir::Attribute;
    const Tensor m = f32({2, 2}, {1, 2, 3, 4});
    auto eq = [](const char* e) { return ir::attrs(Attribute::make_string("equation", e)); };
    EXPECT_EQ(values_f32(run_op("Einsum", {m}, eq("ii->i"), 12)[0]), (std::vector<float>{1, 4}));
    EXPECT_EQ(values_f32(run_op("Einsum", {m}, eq("ii"), 12)[0]), std::vector<float>{5});
    EXPECT_EQ(values_f32(run_op("Einsum", {m}, eq("ji"), 12)[0]), (std::vector<float>{1, 3, 2, 4}));
    EXPECT_EQ(values_f32(run_op("Einsum", {m, m}, eq("ij,jk"), 12)[0]),
              (std::vector<float>{7, 10, 15, 22}));
    auto e = run_op("Einsum", {f32({2, 1, 2}, {1, 2, 3, 4})}, eq("...ij->...ji"), 12);
    EXPECT_EQ(e[0].dims(), (std::vector<int64_t>{2, 2, 1}));
    EXPECT_THROW(run_op("Einsum", {m}, eq("ijk->i"), 12), Error);
}

}  // namespace
}  // namespace pg
