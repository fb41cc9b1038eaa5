// gemm_direct (the AVX-512 GEMM reading A and B in place): diffed against gemm_reference on
// random dense shapes with row offsets of any stride, alpha / beta / epilogue against the plain
// arithmetic bit for bit, and the padded-width column map against a dense product compacted by
// hand. Skipped where the CPU has no AVX-512.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "base/error.h"
#include "base/thread_pool.h"
#include "ops/gemm_direct.h"
#include "ops/gemm_kernels.h"
#include "support/random_values.h"

namespace pg {
namespace {

std::vector<float> random_values(size_t n, std::mt19937& rng) {
    return test::random_floats(n, rng);
}

// B stored with row stride ldb >= n; gemm_direct reads row p at p * ldb.
struct Problem {
    int64_t m, n, k, ldb;
    std::vector<float> a, b, c0;
    std::vector<int64_t> off;
};

Problem make_problem(int64_t m, int64_t n, int64_t k, int64_t ldb, std::mt19937& rng) {
    Problem p{m,
              n,
              k,
              ldb,
              random_values(size_t(m * k), rng),
              random_values(size_t(std::max<int64_t>(k, 1) * ldb), rng),
              random_values(size_t(m * n), rng),
              {}};
    for (int64_t r = 0; r < k; ++r) p.off.push_back(r * ldb);
    return p;
}

ops::DirectGemm direct_args(const Problem& p, float* c) {
    ops::DirectGemm d;
    d.m = p.m, d.n = p.n, d.k = p.k, d.a = p.a.data(), d.lda = p.k, d.b = p.b.data();
    d.b_off = p.off.data(), d.c = c, d.ldc = p.n;
    return d;
}

class OpsGemmDirect : public ::testing::Test {
  protected:
    void SetUp() override {
        if (!ops::gemm_direct_available()) GTEST_SKIP() << "no AVX-512 on this CPU";
    }
};

TEST_F(OpsGemmDirect, MatchesReferenceOnRandomShapes) {
    std::mt19937 rng(21);
    std::uniform_int_distribution<int64_t> dim(1, 75);
    ThreadPool pool(2);
    for (int t = 0; t < 150; ++t) {
        const int64_t m = dim(rng), n = dim(rng), k = t % 25 == 0 ? 0 : dim(rng);
        Problem p = make_problem(m, n, k, n + t % 3, rng);
        const float alpha = t % 3 == 0 ? 1.0f : 0.5f,
                    beta = t % 4 == 0 ? 0.0f : (t % 4 == 1 ? 1.0f : -0.25f);
        std::vector<float> fast = p.c0, ref = p.c0;
        if (beta == 0.0f) fast.assign(fast.size(), std::numeric_limits<float>::quiet_NaN());
        ops::DirectGemm d = direct_args(p, fast.data());
        d.alpha = alpha, d.beta = beta;
        ops::gemm_direct(d, t % 2 ? &pool : nullptr);
        ops::GemmArgs<float> g;
        g.m = m, g.n = n, g.k = k, g.a = p.a.data(), g.lda = k, g.b = p.b.data(), g.ldb = p.ldb;
        g.c = ref.data(), g.ldc = n, g.alpha = alpha, g.beta = beta;
        ops::gemm_reference(g);
        const double tol = 1e-5 * std::sqrt(double(k) + 1);
        for (size_t i = 0; i < ref.size(); ++i)
            ASSERT_LE(std::fabs(fast[i] - ref[i]), tol * (1.0 + std::fabs(ref[i])))
                << "m=" << m << " n=" << n << " k=" << k << " at " << i;
    }
}

// Many column tiles (whole-column tasks): one contiguous range per pool index, or claimed in
// chunks, gives the same bytes, every column written, on pools of 2 and 3 threads.
TEST_F(OpsGemmDirect, StaticColumnRangesGiveTheDynamicSplitsBytes) {
    std::mt19937 rng(27);
    ThreadPool two(2), three(3);
    for (int t = 0; t < 6; ++t) {
        const int64_t m = 5 + 7 * t, n = 260 + 157 * t, k = 3 + 11 * t;
        Problem p = make_problem(m, n, k, n + 1, rng);
        ThreadPool* pool = t % 2 ? &three : &two;
        std::vector<float> fixed(size_t(m * n), std::numeric_limits<float>::quiet_NaN()),
            claimed = fixed;
        ops::DirectGemm d = direct_args(p, fixed.data());
        const bool was = ops::set_gemm_direct_static(true);
        ops::gemm_direct(d, pool);
        ops::set_gemm_direct_static(false);
        d.c = claimed.data();
        ops::gemm_direct(d, pool);
        ops::set_gemm_direct_static(was);
        for (float v : fixed) ASSERT_FALSE(std::isnan(v)) << "case " << t;
        ASSERT_EQ(std::memcmp(fixed.data(), claimed.data(), fixed.size() * sizeof(float)), 0)
            << "case " << t;
    }
}

// Full 12-row tiles addressing A from four row pointers (set_gemm_direct_row_bases) give the
// bytes of the twelve-pointer tile: m = 12, 24 + 8, 36 + 4 (the 8-row ends), 60 + 1; whole
// and partial column tiles, and a NaN in A.
TEST_F(OpsGemmDirect, RowBasesGiveTheRowPointersBytes) {
    std::mt19937 rng(31);
    ThreadPool pool(2);
    for (const int64_t m : {12, 32, 40, 61}) {
        const int64_t n = 70, k = 37;
        Problem p = make_problem(m, n, k, n + 3, rng);
        p.a[size_t(5 * k + 3)] = std::numeric_limits<float>::quiet_NaN();
        std::vector<float> bases(size_t(m * n)), pointers(bases.size());
        ops::DirectGemm d = direct_args(p, bases.data());
        const bool was = ops::set_gemm_direct_row_bases(true);
        ops::gemm_direct(d, &pool);
        ops::set_gemm_direct_row_bases(false);
        d.c = pointers.data();
        ops::gemm_direct(d, &pool);
        ops::set_gemm_direct_row_bases(was);
        ASSERT_EQ(std::memcmp(bases.data(), pointers.data(), bases.size() * sizeof(float)), 0)
            << "m " << m;
    }
}

// B's rows a multiple of 1 KiB apart: each column tile's first row tile copies them into a
// contiguous strip that the others read (set_gemm_direct_b_strips), giving the bytes of reading
// them in place: partial column tiles (70 = 32 + 32 + 6, 40 = 32 + 8), a pool's tasks of a few
// row tiles each (two column tiles, 9 row tiles), the 8-row ends of m = 12 q + 4, beta = 1, and
// a NaN in B.
TEST_F(OpsGemmDirect, StripsOfBGiveTheInPlaceBytes) {
    std::mt19937 rng(37);
    ThreadPool pool(2);
    struct Shape {
        int64_t m, n, k, ldb;
    };
    for (const Shape& q : {Shape{40, 70, 130, 256}, Shape{100, 40, 256, 512},
                           Shape{28, 96, 128, 1024}, Shape{64, 33, 200, 768}}) {
        Problem p = make_problem(q.m, q.n, q.k, q.ldb, rng);
        p.b[size_t(7 * q.ldb + 5)] = std::numeric_limits<float>::quiet_NaN();
        for (const float beta : {0.0f, 1.0f}) {
            std::vector<float> strips = p.c0, in_place = p.c0;
            ops::DirectGemm d = direct_args(p, strips.data());
            d.beta = beta;
            const bool was = ops::set_gemm_direct_b_strips(true);
            ops::gemm_direct(d, &pool);
            ops::set_gemm_direct_b_strips(false);
            d.c = in_place.data();
            ops::gemm_direct(d, &pool);
            ops::set_gemm_direct_b_strips(was);
            ASSERT_EQ(std::memcmp(strips.data(), in_place.data(), strips.size() * sizeof(float)), 0)
                << "m " << q.m << " n " << q.n << " k " << q.k << " beta " << beta;
        }
    }
}

// The next row tile's rows of A fetched ahead or not: the same bytes, every row written (row
// tiles of 12 ending in 10, 8 + 8 for m = 12 q + 4, and 4), on one thread and two.
TEST_F(OpsGemmDirect, RowsOfAFetchedAheadOrNotGiveTheSameBytes) {
    std::mt19937 rng(41);
    ThreadPool pool(2);
    for (const int64_t m : {34, 136, 28, 16, 12, 4}) {
        const int64_t n = 49, k = 136 - m / 2;
        Problem p = make_problem(m, n, k, n, rng);
        for (ThreadPool* team : {static_cast<ThreadPool*>(nullptr), &pool}) {
            std::vector<float> ahead(size_t(m * n), std::numeric_limits<float>::quiet_NaN()),
                plain = ahead;
            ops::DirectGemm d = direct_args(p, ahead.data());
            const bool was = ops::set_gemm_direct_a_ahead(true);
            ops::gemm_direct(d, team);
            ops::set_gemm_direct_a_ahead(false);
            d.c = plain.data();
            ops::gemm_direct(d, team);
            ops::set_gemm_direct_a_ahead(was);
            ASSERT_EQ(std::memcmp(ahead.data(), plain.data(), ahead.size() * sizeof(float)), 0)
                << "m " << m;
            for (const float v : ahead) ASSERT_FALSE(std::isnan(v)) << "m " << m;
        }
    }
}

// The epilogue in registers gives the bytes of gemm_direct without it followed by the plain
// BatchNormalization / clamp arithmetic (GemmEpilogue::apply), NaN included.
TEST_F(OpsGemmDirect, EpilogueMatchesPlainArithmeticBitForBit) {
    std::mt19937 rng(22);
    ThreadPool pool(2);
    for (int t = 0; t < 12; ++t) {
        const int64_t m = 5 + 7 * t, n = 3 + 11 * t, k = 9 + 5 * t;
        Problem p = make_problem(m, n, k, n, rng);
        p.a[size_t(t)] = std::numeric_limits<float>::quiet_NaN();  // a NaN row
        auto sub = random_values(size_t(m), rng), mul = random_values(size_t(m), rng),
             add = random_values(size_t(m), rng);
        ops::GemmEpilogue ep;
        if (t % 3 != 2) ep.sub = sub.data(), ep.mul = mul.data(), ep.add = add.data();
        if (t % 3 != 0) ep.clamp = true, ep.lo = -0.3f, ep.hi = t % 2 ? 0.4f : INFINITY;
        std::vector<float> fused = p.c0, plain = p.c0;
        ops::DirectGemm d = direct_args(p, fused.data());
        d.beta = t % 2 ? 1.0f : 0.0f, d.epilogue = &ep;
        ops::gemm_direct(d, &pool);
        d.c = plain.data(), d.epilogue = nullptr;
        ops::gemm_direct(d, &pool);
        for (int64_t i = 0; i < m; ++i) ep.apply(i, plain.data() + i * n, n);
        ASSERT_EQ(std::memcmp(fused.data(), plain.data(), fused.size() * sizeof(float)), 0)
            << "case " << t;
    }
}

// Column map: a padded-width product (rows of `pitch` columns, the first `len` kept) written
// into rows of `out_pitch`; columns dropped by the map and C past each row stay untouched.
TEST_F(OpsGemmDirect, ColumnMapWritesOnlyKeptColumns) {
    std::mt19937 rng(23);
    ThreadPool pool(2);
    struct Case {
        int64_t m, rows, pitch, len, out_pitch, k;
    };
    for (const Case& q :
         {Case{13, 5, 9, 7, 7, 20}, Case{30, 3, 40, 33, 35, 50}, Case{4, 9, 8, 8, 8, 3},
          Case{25, 1, 60, 17, 17, 70}, Case{12, 7, 10, 1, 4, 5}}) {
        const int64_t n = (q.rows - 1) * q.pitch + q.len;
        Problem p = make_problem(q.m, n, q.k, n, rng);
        std::vector<float> dense(size_t(q.m * n));
        ops::DirectGemm d = direct_args(p, dense.data());
        ops::gemm_direct(d, nullptr);
        const int64_t ldc = q.rows * q.out_pitch + 3;
        std::vector<float> mapped(size_t(q.m * ldc), -7.0f), bias = random_values(size_t(q.m), rng);
        for (int64_t i = 0; i < q.m; ++i)
            for (int64_t r = 0; r < q.rows; ++r)
                for (int64_t w = 0; w < q.len; ++w)
                    mapped[size_t(i * ldc + r * q.out_pitch + w)] = bias[i];
        d.c = mapped.data(), d.ldc = ldc, d.beta = 1.0f;
        d.row_pitch = q.pitch, d.row_len = q.len, d.out_pitch = q.out_pitch;
        ops::gemm_direct(d, &pool);
        for (int64_t i = 0; i < q.m; ++i)
            for (int64_t r = 0; r < q.rows; ++r)
                for (int64_t w = 0; w < q.out_pitch; ++w) {
                    const float got = mapped[size_t(i * ldc + r * q.out_pitch + w)];
                    if (w < q.len)
                        ASSERT_EQ(got, bias[i] + dense[size_t(i * n + r * q.pitch + w)])
                            << "row " << i << " r " << r << " w " << w;
                    else
                        ASSERT_EQ(got, -7.0f) << "dropped column written";
                }
        for (int64_t i = 0; i < q.m; ++i)
            for (int64_t j = q.rows * q.out_pitch; j < ldc; ++j)
                ASSERT_EQ(mapped[size_t(i * ldc + j)], -7.0f);
    }
}

// Rows of A 4 KiB apart (lda a multiple of 1024) are copied with a padded stride first; the
// product is the same.
TEST_F(OpsGemmDirect, RowsOfAFourKibApartGiveTheSameProduct) {
    std::mt19937 rng(25);
    ThreadPool pool(2);
    for (const int64_t k : {1024, 2048}) {
        Problem p = make_problem(30, 70, k, 70, rng);
        std::vector<float> fast(size_t(30 * 70)), ref(fast.size());
        ops::gemm_direct(direct_args(p, fast.data()), &pool);
        ops::GemmArgs<float> g;
        g.m = 30, g.n = 70, g.k = k, g.a = p.a.data(), g.lda = k, g.b = p.b.data(), g.ldb = 70;
        g.c = ref.data(), g.ldc = 70;
        ops::gemm_reference(g);
        const double tol = 1e-5 * std::sqrt(double(k) + 1);
        for (size_t i = 0; i < ref.size(); ++i)
            ASSERT_LE(std::fabs(fast[i] - ref[i]), tol * (1.0 + std::fabs(ref[i]))) << i;
    }
}

TEST_F(OpsGemmDirect, RejectsANarrowColumnMap) {
    std::mt19937 rng(24);
    Problem p = make_problem(3, 20, 4, 20, rng);
    std::vector<float> c(60);
    ops::DirectGemm d = direct_args(p, c.data());
    d.row_pitch = 5, d.row_len = 4, d.out_pitch = 4;
    EXPECT_THROW(ops::gemm_direct(d, nullptr), Error);
}

TEST(OpsGemmIsa, ForcingAnIsaIsReportedAndReset) {
    const ops::GemmIsa best = ops::gemm_current_isa();
    ops::gemm_force_isa(ops::GemmIsa::kBaseline);
    EXPECT_EQ(ops::gemm_current_isa(), ops::GemmIsa::kBaseline);
    EXPECT_FALSE(ops::gemm_direct_available());
    ops::gemm_reset_isa();
    EXPECT_EQ(ops::gemm_current_isa(), best);
}

}  // namespace
}  // namespace pg
