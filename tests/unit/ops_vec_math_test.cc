// ops/vec_math: float32 exp, erf and tanh against double-precision std::exp / std::erf /
// std::tanh on every 97th float bit pattern (at most 1 ulp of the correctly rounded result,
// overflow, underflow and subnormals included), the special values, bit-identity of the scalar,
// AVX2 and AVX-512 implementations, array tails, and the softmax / layer-norm helpers against plain
// loops.
#include "ops/vec_math.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace pg {
namespace {

using ops::VecIsa;

constexpr VecIsa kIsas[] = {VecIsa::kScalar, VecIsa::kAvx2, VecIsa::kAvx512};

// Forces an ISA for the scope of the object.
struct ForceIsa {
    explicit ForceIsa(VecIsa isa) { ops::vec_force_isa(isa); }
    ~ForceIsa() { ops::vec_reset_isa(); }
};

// The spacing of floats at the correctly rounded value of `want` (2^-149 in the subnormals).
double ulp_at(double want) {
    const float cr = std::fabs(static_cast<float>(want));
    if (cr < std::numeric_limits<float>::min()) return std::ldexp(1.0, -149);
    int e = 0;
    std::frexp(cr, &e);
    return std::ldexp(1.0, e - 24);
}

// The error of `got` in ulps of the correctly rounded `want` (0 for matching NaN / inf, a huge
// value for a mismatch there).
double ulp_error(float got, double want) {
    const float cr = static_cast<float>(want);
    if (std::isnan(cr) || std::isnan(got)) return std::isnan(cr) && std::isnan(got) ? 0 : 1e30;
    if (std::isinf(cr) || std::isinf(got)) return cr == got ? 0 : 1e30;
    return std::fabs(static_cast<double>(got) - want) / ulp_at(want);
}

using VecFn = void (*)(const float*, float*, int64_t);

// Runs fn over every `stride`-th bit pattern (offset `first`) in batches and returns the largest
// ulp error against ref (when ref is set) and whether `other` ISAs match bit for bit.
struct SweepResult {
    double max_ulp = 0;
    float worst_x = 0;
    int64_t mismatches = 0;
};

SweepResult sweep(VecFn fn, double (*ref)(double), uint64_t stride, VecIsa isa,
                  const std::vector<VecIsa>& others) {
    SweepResult res;
    constexpr size_t kBatch = 1 << 14;
    std::vector<float> x(kBatch), y(kBatch), z(kBatch);
    for (uint64_t b = 0; b < (1ull << 32);) {
        size_t n = 0;
        for (; n < kBatch && b < (1ull << 32); b += stride)
            x[n++] = std::bit_cast<float>(uint32_t(b));
        {
            ForceIsa f(isa);
            fn(x.data(), y.data(), static_cast<int64_t>(n));
        }
        if (ref)
            for (size_t i = 0; i < n; ++i) {
                const double e = ulp_error(y[i], ref(static_cast<double>(x[i])));
                if (e > res.max_ulp) res.max_ulp = e, res.worst_x = x[i];
            }
        for (VecIsa o : others) {
            ForceIsa f(o);
            fn(x.data(), z.data(), static_cast<int64_t>(n));
            for (size_t i = 0; i < n; ++i)
                if (std::bit_cast<uint32_t>(y[i]) != std::bit_cast<uint32_t>(z[i]) &&
                    !(std::isnan(y[i]) && std::isnan(z[i])))
                    ++res.mismatches;
        }
    }
    return res;
}

double ref_exp(double x) {
    return std::exp(x);
}
double ref_erf(double x) {
    return std::erf(x);
}
double ref_tanh(double x) {
    return std::tanh(x);
}

std::vector<VecIsa> available_except(VecIsa best) {
    std::vector<VecIsa> v;
    for (VecIsa i : kIsas)
        if (i != best && ops::vec_isa_available(i)) v.push_back(i);
    return v;
}

TEST(VecMath, ExpWithinOneUlpOnEvery97thFloat) {
    const VecIsa best = ops::vec_current_isa();
    const SweepResult r = sweep(ops::vec_exp, ref_exp, 97, best, {});
    std::printf("exp: max error %.4f ulp at %a\n", r.max_ulp, static_cast<double>(r.worst_x));
    EXPECT_LE(r.max_ulp, 1.0) << "at x = " << r.worst_x;  // measured: below 1 ulp
}

TEST(VecMath, ErfWithinOneUlpOnEvery97thFloat) {
    const VecIsa best = ops::vec_current_isa();
    const SweepResult r = sweep(ops::vec_erf, ref_erf, 97, best, {});
    std::printf("erf: max error %.4f ulp at %a\n", r.max_ulp, static_cast<double>(r.worst_x));
    EXPECT_LE(r.max_ulp, 1.0) << "at x = " << r.worst_x;  // measured: below 1 ulp
}

TEST(VecMath, TanhWithinOneUlpOnEvery97thFloat) {
    const VecIsa best = ops::vec_current_isa();
    const SweepResult r = sweep(ops::vec_tanh, ref_tanh, 97, best, {});
    std::printf("tanh: max error %.4f ulp at %a\n", r.max_ulp, static_cast<double>(r.worst_x));
    EXPECT_LE(r.max_ulp, 1.0) << "at x = " << r.worst_x;  // measured: below 1 ulp
}

TEST(VecMath, IsasAreBitIdentical) {
    const VecIsa best = ops::vec_current_isa();
    const std::vector<VecIsa> others = available_except(best);
    // The scalar one calls std::fma per operation: a sparser sweep keeps the test quick.
    EXPECT_EQ(sweep(ops::vec_exp, nullptr, 1009, best, others).mismatches, 0);
    EXPECT_EQ(sweep(ops::vec_erf, nullptr, 1009, best, others).mismatches, 0);
    EXPECT_EQ(sweep(ops::vec_tanh, nullptr, 1009, best, others).mismatches, 0);
}

// The softmax sum has the same lanes and order everywhere: bit-identical values (also where the
// double additions round, which an order change would expose).
TEST(VecMath, ExpSubSumIsBitIdenticalAcrossIsas) {
    std::mt19937 rng(6);
    std::normal_distribution<float> g(0.0f, 25.0f);  // wide exponents: inexact double sums
    for (int64_t n = 1; n <= 3000; n += (n < 40 ? 1 : 97)) {
        std::vector<float> x(static_cast<size_t>(n));
        for (float& v : x) v = g(rng);
        std::vector<float> y0(x.size()), y1(x.size());
        double s0 = 0;
        {
            ForceIsa f(VecIsa::kScalar);
            s0 = ops::vec_exp_sub_sum(x.data(), 1.5f, y0.data(), n);
        }
        for (VecIsa isa : kIsas) {
            if (!ops::vec_isa_available(isa)) continue;
            ForceIsa f(isa);
            EXPECT_EQ(std::bit_cast<uint64_t>(ops::vec_exp_sub_sum(x.data(), 1.5f, y1.data(), n)),
                      std::bit_cast<uint64_t>(s0))
                << n << " isa " << static_cast<int>(isa);
            EXPECT_EQ(y1, y0);
        }
    }
}

// The scaled softmax pieces read x[i] * s (or x[i] / s) as the plain ones read an array holding
// those products: the same bits on every ISA, tails, infinities, a NaN and a zero divisor included.
TEST(VecMath, ScaledMaxAndExpSumMatchAScaledCopy) {
    std::mt19937 rng(12);
    std::normal_distribution<float> g(0.0f, 30.0f);
    const float inf = std::numeric_limits<float>::infinity();
    for (VecIsa isa : kIsas) {
        if (!ops::vec_isa_available(isa)) continue;
        ForceIsa f(isa);
        for (int64_t n = 1; n <= 200; n += (n < 40 ? 1 : 23)) {
            std::vector<float> x(static_cast<size_t>(n));
            for (float& v : x) v = g(rng);
            if (n % 7 == 3) x[static_cast<size_t>(n / 2)] = n % 2 ? inf : -inf;
            if (n == 33) x[5] = std::numeric_limits<float>::quiet_NaN();
            for (const float s : {0.125f, -3.0f, 1e-30f, 0.0f})
                for (const bool divide : {false, true}) {
                    std::vector<float> scaled(x.size()), y0(x.size()), y1(x.size());
                    for (size_t i = 0; i < x.size(); ++i) scaled[i] = divide ? x[i] / s : x[i] * s;
                    const float m0 = ops::vec_max(scaled.data(), n);
                    const float m1 = ops::vec_max_scaled(x.data(), s, divide, n);
                    EXPECT_EQ(std::bit_cast<uint32_t>(m1), std::bit_cast<uint32_t>(m0))
                        << n << " s " << s << " divide " << divide;
                    const double s0 = ops::vec_exp_sub_sum(scaled.data(), m0, y0.data(), n);
                    const double s1 =
                        ops::vec_exp_scaled_sub_sum(x.data(), s, divide, m0, y1.data(), n);
                    EXPECT_EQ(std::bit_cast<uint64_t>(s1), std::bit_cast<uint64_t>(s0)) << n;
                    EXPECT_EQ(0, std::memcmp(y0.data(), y1.data(), y0.size() * sizeof(float)))
                        << n << " s " << s << " divide " << divide;
                }
        }
    }
}

float one(VecFn fn, float x) {
    float y = 0;
    fn(&x, &y, 1);
    return y;
}

TEST(VecMath, SpecialValues) {
    const float inf = std::numeric_limits<float>::infinity();
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float tiny = std::numeric_limits<float>::denorm_min();
    for (VecIsa isa : kIsas) {
        if (!ops::vec_isa_available(isa)) continue;
        ForceIsa f(isa);
        SCOPED_TRACE(static_cast<int>(isa));
        EXPECT_EQ(one(ops::vec_exp, 0.0f), 1.0f);
        EXPECT_EQ(one(ops::vec_exp, -0.0f), 1.0f);
        EXPECT_EQ(one(ops::vec_exp, inf), inf);
        EXPECT_EQ(one(ops::vec_exp, -inf), 0.0f);
        EXPECT_TRUE(std::isnan(one(ops::vec_exp, nan)));
        EXPECT_TRUE(std::isnan(one(ops::vec_exp, -nan)));
        EXPECT_EQ(one(ops::vec_exp, 88.72283172607421875f),
                  static_cast<float>(std::exp(88.72283172607421875)));
        EXPECT_EQ(one(ops::vec_exp, 88.7228393554687500f), inf);
        EXPECT_EQ(one(ops::vec_exp, 1e30f), inf);
        EXPECT_EQ(one(ops::vec_exp, -1e30f), 0.0f);
        EXPECT_EQ(one(ops::vec_exp, -103.9f), static_cast<float>(std::exp(-103.9)));  // 2^-149
        EXPECT_GT(one(ops::vec_exp, -103.9f), 0.0f);
        EXPECT_EQ(one(ops::vec_exp, -104.0f), 0.0f);
        EXPECT_LE(ulp_error(one(ops::vec_exp, -95.5f), std::exp(-95.5)), 2.0);  // subnormal
        EXPECT_EQ(one(ops::vec_exp, tiny), 1.0f);

        EXPECT_EQ(std::bit_cast<uint32_t>(one(ops::vec_erf, 0.0f)), 0u);
        EXPECT_EQ(std::bit_cast<uint32_t>(one(ops::vec_erf, -0.0f)), 0x80000000u);
        EXPECT_EQ(one(ops::vec_erf, inf), 1.0f);
        EXPECT_EQ(one(ops::vec_erf, -inf), -1.0f);
        EXPECT_EQ(one(ops::vec_erf, 5.0f), 1.0f);
        EXPECT_EQ(one(ops::vec_erf, -1e30f), -1.0f);
        EXPECT_TRUE(std::isnan(one(ops::vec_erf, nan)));
        EXPECT_TRUE(std::isnan(one(ops::vec_erf, -nan)));
        EXPECT_EQ(one(ops::vec_erf, tiny), static_cast<float>(std::erf(static_cast<double>(tiny))));
        EXPECT_EQ(one(ops::vec_erf, -3 * tiny), static_cast<float>(std::erf(-3.0 * tiny)));
        for (float v : {0.3f, 0.5f, 1.0f, 2.5f, 3.9f})
            EXPECT_EQ(one(ops::vec_erf, -v), -one(ops::vec_erf, v)) << v;

        EXPECT_EQ(std::bit_cast<uint32_t>(one(ops::vec_tanh, 0.0f)), 0u);
        EXPECT_EQ(std::bit_cast<uint32_t>(one(ops::vec_tanh, -0.0f)), 0x80000000u);
        EXPECT_EQ(one(ops::vec_tanh, inf), 1.0f);
        EXPECT_EQ(one(ops::vec_tanh, -inf), -1.0f);
        EXPECT_EQ(one(ops::vec_tanh, 9.5f), 1.0f);
        EXPECT_EQ(one(ops::vec_tanh, -3e38f), -1.0f);
        EXPECT_TRUE(std::isnan(one(ops::vec_tanh, nan)));
        EXPECT_TRUE(std::isnan(one(ops::vec_tanh, -nan)));
        EXPECT_EQ(one(ops::vec_tanh, tiny), tiny);
        EXPECT_EQ(one(ops::vec_tanh, -1e-20f), -1e-20f);
        for (float v : {0.3f, 0.5f, 0.99f, 1.0f, 2.5f, 8.0f})
            EXPECT_EQ(one(ops::vec_tanh, -v), -one(ops::vec_tanh, v)) << v;
    }
}

// Every length 0..70 (whole vectors and every tail) gives the per-element results and leaves
// the elements after n alone.
TEST(VecMath, TailsAndInPlace) {
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> u(-12.0f, 12.0f);
    for (VecIsa isa : kIsas) {
        if (!ops::vec_isa_available(isa)) continue;
        ForceIsa f(isa);
        for (int64_t n = 0; n <= 70; ++n) {
            std::vector<float> x(static_cast<size_t>(n) + 4), y(x.size(), -7.0f);
            for (float& v : x) v = u(rng);
            for (VecFn fn : {ops::vec_exp, ops::vec_erf, ops::vec_tanh}) {
                std::fill(y.begin(), y.end(), -7.0f);
                fn(x.data(), y.data(), n);
                for (int64_t i = 0; i < n; ++i) EXPECT_EQ(y[size_t(i)], one(fn, x[size_t(i)]));
                for (size_t i = size_t(n); i < y.size(); ++i) EXPECT_EQ(y[i], -7.0f);
                std::vector<float> z(x);
                fn(z.data(), z.data(), n);
                for (int64_t i = 0; i < n; ++i) EXPECT_EQ(z[size_t(i)], y[size_t(i)]);
            }
        }
    }
}

TEST(VecMath, SoftmaxAndLayerNormHelpersMatchPlainLoops) {
    std::mt19937 rng(9);
    std::normal_distribution<float> g(0.0f, 4.0f);
    for (VecIsa isa : kIsas) {
        if (!ops::vec_isa_available(isa)) continue;
        ForceIsa f(isa);
        for (int64_t n = 1; n <= 300; n += (n < 40 ? 1 : 37)) {
            std::vector<float> x(static_cast<size_t>(n)), y(x.size()), e(x.size());
            for (float& v : x) v = g(rng) + 3.0f;
            float m = x[0];
            for (float v : x) m = std::max(m, v);
            EXPECT_EQ(ops::vec_max(x.data(), n), m) << n;
            double sum = 0, s = 0, sq = 0;
            for (size_t i = 0; i < x.size(); ++i) sum += e[i] = one(ops::vec_exp, x[i] - m);
            EXPECT_NEAR(ops::vec_exp_sub_sum(x.data(), m, y.data(), n), sum, 1e-12 * sum) << n;
            EXPECT_EQ(y, e);
            for (float v : x) s += v;
            EXPECT_NEAR(ops::vec_sum_f64(x.data(), n), s, 1e-12 * std::fabs(s) + 1e-12);
            const double mean = s / static_cast<double>(n);
            for (float v : x) sq += (v - mean) * (v - mean);
            EXPECT_NEAR(ops::vec_sum_sq_dev_f64(x.data(), mean, n), sq, 1e-12 * sq + 1e-12);
            std::vector<double> scale(x.size()), bias(x.size());
            for (size_t i = 0; i < x.size(); ++i) scale[i] = g(rng), bias[i] = g(rng);
            ops::vec_norm_affine(x.data(), mean, 0.3, scale.data(), bias.data(), y.data(), n);
            for (size_t i = 0; i < x.size(); ++i)
                EXPECT_EQ(y[i], static_cast<float>((x[i] - mean) * 0.3 * scale[i] + bias[i]));
            std::vector<float> want(x);
            for (float& v : want) v *= 0.7f;
            ops::vec_scale(x.data(), 0.7f, n);
            EXPECT_EQ(x, want);
            ops::vec_sub_sub(x.data(), 1.5f, 0.25f, y.data(), n);
            for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(y[i], (x[i] - 1.5f) - 0.25f);
        }
    }
}

}  // namespace
}  // namespace pg
