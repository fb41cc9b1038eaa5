// The recurrent fast path's float32 kernels (ops/rnn_kernels.h), AVX-512, AVX2 and portable
// versions, diffed against their float64 definitions on random shapes and values (the whole ops
// against the float64 plain kernel: ops_fastpath_test.cc).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "ops/rnn_kernels.h"

namespace pg {
namespace {

// Runs body with the kernels of each instruction set (those the CPU lacks fall back to the next
// one down); body's argument names it.
template <typename F>
void for_each_version(F body) {
    for (const ops::RnnIsa isa :
         {ops::RnnIsa::kAvx512, ops::RnnIsa::kAvx2, ops::RnnIsa::kPortable}) {
        ops::rnn_limit_isa(isa);
        body(static_cast<int>(isa));
    }
    ops::rnn_limit_isa(ops::RnnIsa::kAvx512);
}

TEST(RnnKernels, MatvecAddMatchesFloat64OnRandomShapes) {
    std::mt19937 rng(31);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for_each_version([&](int isa) {
        for (int t = 0; t < 300; ++t) {
            const int64_t rows = 1 + rng() % 37, cols = 1 + rng() % (t % 10 ? 40 : 300);
            std::vector<float> m(static_cast<size_t>(rows * cols)), v(static_cast<size_t>(cols)),
                out(static_cast<size_t>(rows));
            for (float& x : m) x = u(rng);
            for (float& x : v) x = u(rng);
            for (float& x : out) x = u(rng);
            std::vector<float> got = out;
            ops::matvec_add_f32(m.data(), v.data(), rows, cols, got.data());
            for (int64_t r = 0; r < rows; ++r) {
                double want = out[size_t(r)], mag = std::fabs(want);
                for (int64_t k = 0; k < cols; ++k) {
                    want += double(m[size_t(r * cols + k)]) * v[size_t(k)];
                    mag += std::fabs(double(m[size_t(r * cols + k)]) * v[size_t(k)]);
                }
                ASSERT_NEAR(got[size_t(r)], want, 1e-6 * mag + 1e-30)
                    << "isa " << isa << " case " << t << " row " << r;
            }
        }
    });
}

// Any row range gives each row the value it has in the whole product, bit for bit (what lets the
// op split rows between threads).
TEST(RnnKernels, MatvecRowsDoNotDependOnTheRange) {
    std::mt19937 rng(32);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for_each_version([&](int isa) {
        for (int t = 0; t < 50; ++t) {
            const int64_t rows = 1 + rng() % 30, cols = 1 + rng() % 50;
            std::vector<float> m(static_cast<size_t>(rows * cols)), v(static_cast<size_t>(cols));
            for (float& x : m) x = u(rng);
            for (float& x : v) x = u(rng);
            std::vector<float> whole(size_t(rows), 0.0f), parts(size_t(rows), 0.0f);
            ops::matvec_add_f32(m.data(), v.data(), rows, cols, whole.data());
            for (int64_t r = 0; r < rows;) {
                const int64_t n = std::min<int64_t>(rows - r, 1 + rng() % 6);
                ops::matvec_add_f32(m.data() + r * cols, v.data(), n, cols, parts.data() + r);
                r += n;
            }
            for (int64_t r = 0; r < rows; ++r)
                ASSERT_EQ(whole[size_t(r)], parts[size_t(r)])
                    << "isa " << isa << " case " << t << " row " << r;
        }
    });
}

// matvecs_add_f32 over strided vectors and a strided output gives each value exactly as
// matvec_add_f32 does for that vector alone.
TEST(RnnKernels, MatvecsMatchOneVectorAtATime) {
    std::mt19937 rng(33);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for_each_version([&](int isa) {
        for (int t = 0; t < 50; ++t) {
            const int64_t rows = 1 + rng() % 30, cols = 1 + rng() % 50, nv = 1 + rng() % 7;
            const int64_t ldv = cols + rng() % 5, ldo = rows + rng() % 5;
            std::vector<float> m(static_cast<size_t>(rows * cols)),
                vs(static_cast<size_t>(nv * ldv));
            for (float& x : m) x = u(rng);
            for (float& x : vs) x = u(rng);
            std::vector<float> got(static_cast<size_t>(nv * ldo)), want;
            for (float& x : got) x = u(rng);
            want = got;
            ops::matvecs_add_f32(m.data(), rows, cols, vs.data(), nv, ldv, got.data(), ldo);
            for (int64_t j = 0; j < nv; ++j)
                ops::matvec_add_f32(m.data(), vs.data() + j * ldv, rows, cols,
                                    want.data() + j * ldo);
            for (size_t i = 0; i < got.size(); ++i)
                ASSERT_EQ(got[i], want[i]) << "isa " << isa << " case " << t << " at " << i;
        }
    });
}

// Values over the whole float range: tiny, around the polynomial switch of tanh, saturating,
// infinities and NaN, in random lengths (vector bodies and tails).
std::vector<float> activation_inputs(std::mt19937& rng, size_t n) {
    const float special[] = {0.0f,
                             -0.0f,
                             1e-30f,
                             -1e-8f,
                             0.2499f,
                             0.25f,
                             0.2501f,
                             -0.25f,
                             1.0f,
                             -3.5f,
                             9.0f,
                             -20.0f,
                             44.0f,
                             88.5f,
                             -88.5f,
                             100.0f,
                             -100.0f,
                             std::numeric_limits<float>::infinity(),
                             -std::numeric_limits<float>::infinity(),
                             std::numeric_limits<float>::quiet_NaN()};
    std::uniform_real_distribution<float> wide(-30.0f, 30.0f), narrow(-1.0f, 1.0f);
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) {
        const uint32_t k = rng() % 4;
        v[i] = k == 0 ? special[rng() % std::size(special)] : k == 1 ? wide(rng) : narrow(rng);
    }
    return v;
}

// |got - want| within `ulps` float32 ulps of want (NaN must stay NaN).
void expect_close(float got, double want, double ulps, const char* what, size_t i, float x) {
    if (std::isnan(want)) {
        ASSERT_TRUE(std::isnan(got)) << what << "(" << x << ") element " << i;
        return;
    }
    const double ulp = std::max(std::fabs(want) * std::ldexp(1.0, -23), 1e-37);
    ASSERT_LE(std::fabs(got - want), ulps * ulp)
        << what << "(" << x << ") = " << got << ", want " << want << ", element " << i;
}

TEST(RnnKernels, SigmoidAndTanhMatchFloat64) {
    std::mt19937 rng(33);
    for_each_version([&](bool) {
        for (int t = 0; t < 200; ++t) {
            const std::vector<float> x = activation_inputs(rng, 1 + rng() % 40);
            std::vector<float> s = x, th = x;
            ops::sigmoid_f32(s.data(), int64_t(s.size()));
            ops::tanh_f32(th.data(), int64_t(th.size()));
            for (size_t i = 0; i < x.size(); ++i) {
                const double xd = x[i];
                expect_close(s[i], 1.0 / (1.0 + std::exp(-xd)), 4, "sigmoid", i, x[i]);
                expect_close(th[i], std::tanh(xd), 4, "tanh", i, x[i]);
            }
        }
    });
}

}  // namespace
}  // namespace pg
