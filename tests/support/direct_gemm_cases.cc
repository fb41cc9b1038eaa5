// See direct_gemm_cases.h.
#include "support/direct_gemm_cases.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "base/thread_pool.h"
#include "support/random_values.h"

namespace pg::test {

DirectProblem make_direct_problem(int64_t m, int64_t n, int64_t k, std::mt19937& rng) {
    DirectProblem p{m, n, k, k + 3, n + 5, {}, {}, {}};
    p.a = random_floats(size_t(m * p.lda), rng);
    p.b = random_floats(size_t(k * p.ldb), rng);
    for (int64_t r = 0; r < k; ++r) p.off.push_back(((r * 7) % k) * p.ldb);
    return p;
}

ops::DirectGemm direct_args(const DirectProblem& p, float* c, int64_t ldc) {
    ops::DirectGemm d;
    d.m = p.m, d.n = p.n, d.k = p.k, d.a = p.a.data(), d.lda = p.lda, d.b = p.b.data();
    d.b_off = p.off.data(), d.c = c, d.ldc = ldc;
    return d;
}

void expect_column_map_writes_only_kept_columns(const DirectProduct& product,
                                                const std::vector<ColumnMapCase>& cases,
                                                unsigned seed) {
    std::mt19937 rng(seed);
    ThreadPool pool(2);
    for (const ColumnMapCase& q : cases) {
        const int64_t n = (q.rows - 1) * q.pitch + q.len;
        DirectProblem p = make_direct_problem(q.m, n, q.k, rng);
        std::vector<float> dense(size_t(q.m * n));
        product(direct_args(p, dense.data(), n), nullptr);
        const int64_t ldc = q.rows * q.out_pitch + 3;
        std::vector<float> mapped(size_t(q.m * ldc), -7.0f);
        ops::DirectGemm d = direct_args(p, mapped.data(), ldc);
        d.row_pitch = q.pitch, d.row_len = q.len, d.out_pitch = q.out_pitch;
        product(d, &pool);
        for (int64_t i = 0; i < q.m; ++i)
            for (int64_t j = 0; j < ldc; ++j) {
                const int64_t r = j / q.out_pitch, w = j % q.out_pitch;
                const float got = mapped[size_t(i * ldc + j)];
                if (r < q.rows && w < q.len)
                    ASSERT_EQ(got, dense[size_t(i * n + r * q.pitch + w)])
                        << "row " << i << " r " << r << " w " << w;
                else
                    ASSERT_EQ(got, -7.0f) << "column " << j << " written";
            }
    }
}

void expect_epilogue_matches_apply(const DirectProduct& product,
                                   const std::function<int64_t(int)>& m_of,
                                   const std::function<int64_t(int)>& n_of,
                                   const std::function<int64_t(int)>& k_of, bool col_bias,
                                   unsigned seed) {
    std::mt19937 rng(seed);
    ThreadPool pool(2);
    for (int t = 0; t < 6; ++t) {
        const int64_t m = m_of(t), n = n_of(t), k = k_of(t);
        DirectProblem p = make_direct_problem(m, n, k, rng);
        p.a[size_t(t * p.lda)] = std::numeric_limits<float>::quiet_NaN();
        auto bias = random_floats(size_t(m), rng), sub = random_floats(size_t(m), rng),
             mul = random_floats(size_t(m), rng), add = random_floats(size_t(m), rng),
             res = random_floats(size_t(m * n), rng), col = random_floats(size_t(n), rng);
        std::vector<float> fused = random_floats(size_t(m * n), rng), plain = fused;
        ops::GemmEpilogue ep;
        ep.bias = bias.data();
        if (col_bias && t % 2 == 0)
            ep.col_bias = col.data(), ep.col_origin = fused.data(), ep.col_ldc = n;
        if (t % 2) ep.sub = sub.data(), ep.mul = mul.data(), ep.add = add.data();
        if (t % 3) ep.res = res.data(), ep.res_origin = fused.data();
        ep.clamp = t != 4, ep.lo = -0.3f, ep.hi = t % 2 ? 0.4f : INFINITY;
        ops::DirectGemm d = direct_args(p, fused.data(), n);
        d.beta = t % 2 ? 1.0f : 0.0f, d.epilogue = &ep;
        product(d, &pool);
        d.c = plain.data(), d.epilogue = nullptr;
        product(d, &pool);
        ops::GemmEpilogue plain_ep = ep;
        plain_ep.res_origin = plain.data(), plain_ep.col_origin = plain.data();
        for (int64_t i = 0; i < m; ++i) plain_ep.apply(i, plain.data() + i * n, n);
        ASSERT_EQ(std::memcmp(fused.data(), plain.data(), fused.size() * sizeof(float)), 0)
            << "case " << t;
    }
}

}  // namespace pg::test
