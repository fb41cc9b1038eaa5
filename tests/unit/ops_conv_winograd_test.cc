// Winograd F(2x2, 3x3) (ops/conv_winograd.h): conv_fast on geometries it takes, diffed against
// conv_reference under every GEMM ISA (the transforms follow the ISA: baseline or AVX-512), with
// bands, filter blocks, odd sizes, pads, batches and groups (small maps, with Winograd taking
// every size); the fused epilogue applied to each finished row; the geometries it must leave to
// the direct paths and the sizes where it pays.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "base/thread_pool.h"
#include "ops/conv_kernels.h"
#include "ops/conv_winograd.h"
#include "ops/nchwc_winograd.h"
#include "support/float_error.h"
#include "support/gemm_isa.h"

namespace pg {
namespace {

struct Case {
    int64_t n, c, m, group, h, w, pt, pl, pb, pr;
};

ops::ConvShape shape_of(const Case& k) {
    ops::WindowAttrs wa;
    wa.pads = {k.pt, k.pl, k.pb, k.pr};
    ops::ConvShape s;
    s.n = k.n, s.c = k.c, s.m = k.m, s.group = k.group;
    s.w = ops::make_window(wa, {k.h, k.w}, {3, 3}, "Conv");
    return s;
}

std::vector<float> random_values(size_t n, std::mt19937& rng) {
    std::uniform_real_distribution<float> val(-1.0f, 1.0f);
    std::vector<float> v(n);
    for (float& e : v) e = val(rng);
    return v;
}

// Random x, w and b for `s`.
struct ConvData {
    std::vector<float> x, w, b;
};
ConvData random_conv(const ops::ConvShape& s, std::mt19937& rng) {
    return {random_values(size_t(s.n * s.c * s.w.in_size()), rng),
            random_values(size_t(s.m * s.c / s.group * 9), rng), random_values(size_t(s.m), rng)};
}

// Winograd on every geometry it takes while in scope (the kernel tests run small maps, which it
// does not pay to take in models), and conv_fast's plain tensors kept out of the blocked
// Winograd (ops_nchwc_winograd_test), which would take most of these shapes first.
struct AnySize {
    bool was = ops::set_winograd_any_size(true);
    bool blocked = ops::set_nchwc_winograd(false);
    ~AnySize() {
        ops::set_winograd_any_size(was);
        ops::set_nchwc_winograd(blocked);
    }
};

// Largest |fast - ref| / (1 + |ref|) of conv_fast against `ref`.
double winograd_error(const ops::ConvShape& s, const ConvData& d, const float* bias,
                      const std::vector<float>& ref, ThreadPool* pool) {
    std::vector<float> fast(ref.size(), std::numeric_limits<float>::quiet_NaN());
    ops::conv_fast(s, d.x.data(), d.w.data(), bias, fast.data(), pool);
    return test::worst_relative_error(fast, ref);
}

TEST(OpsConvWinograd, MatchesReferenceOnTheGeometriesItTakes) {
    const AnySize any_size;
    // Odd and even sizes (partial last tiles), pads 0-2 on each side, several bands (64 x 64 at
    // 40 x 60), several filter blocks (256 -> 160), batches and groups, 49 tiles with 256
    // channels, and pads far wider than the image (most tiles all padding).
    const Case cases[] = {
        {1, 64, 64, 1, 20, 20, 1, 1, 1, 1},   {1, 64, 80, 1, 21, 19, 1, 1, 1, 1},
        {2, 96, 64, 1, 21, 25, 0, 0, 0, 0},   {1, 64, 64, 1, 25, 22, 2, 0, 1, 2},
        {1, 64, 64, 1, 40, 60, 1, 1, 1, 1},   {1, 256, 160, 1, 14, 14, 1, 1, 1, 1},
        {1, 256, 256, 1, 13, 13, 1, 1, 1, 1}, {2, 128, 128, 2, 22, 22, 1, 1, 1, 1},
        {1, 70, 100, 1, 24, 30, 0, 2, 2, 0},  {1, 64, 64, 1, 8, 9, 20, 19, 21, 22}};
    std::mt19937 rng(21);
    ThreadPool pool(2);
    for (size_t t = 0; t < std::size(cases); ++t) {
        const ops::ConvShape s = shape_of(cases[t]);
        ASSERT_TRUE(ops::winograd_fits(s.w, s.c / s.group, s.m / s.group)) << "case " << t;
        const ConvData d = random_conv(s, rng);
        const float* bias = t % 2 ? d.b.data() : nullptr;
        std::vector<float> ref(size_t(s.n * s.m * s.w.out_size()));
        ops::conv_reference(s, d.x.data(), d.w.data(), bias, ref.data());
        // The direct sums' bound (ops_conv_test) for the same reduction length.
        const double tol = 1e-5 * std::sqrt(double(s.c / s.group * 9) + 1);
        test::for_each_gemm_isa([&] {
            EXPECT_LE(winograd_error(s, d, bias, ref, t % 3 ? &pool : nullptr), tol)
                << "case " << t;
        });
    }
}

// Several bands of 64 -> 64 (and 64 -> 96): every filter transformed once up front gives the
// very values of transforming them band by band.
TEST(OpsConvWinograd, FiltersTransformedOnceGiveTheBandByBandValues) {
    const AnySize any_size;
    std::mt19937 rng(23);
    ThreadPool pool(2);
    for (const Case& k :
         {Case{1, 64, 64, 1, 40, 60, 1, 1, 1, 1}, Case{1, 64, 96, 1, 57, 56, 1, 1, 1, 1}}) {
        const ops::ConvShape s = shape_of(k);
        const ConvData d = random_conv(s, rng);
        std::vector<float> once(size_t(s.m * s.w.out_size())), banded(once.size());
        ops::conv_fast(s, d.x.data(), d.w.data(), d.b.data(), once.data(), &pool);
        const bool before = ops::set_winograd_filters_once(false);
        ops::conv_fast(s, d.x.data(), d.w.data(), d.b.data(), banded.data(), &pool);
        ops::set_winograd_filters_once(before);
        EXPECT_EQ(once, banded) << k.m;
        std::vector<float> ref(once.size());
        ops::conv_reference(s, d.x.data(), d.w.data(), d.b.data(), ref.data());
        EXPECT_LE(winograd_error(s, d, d.b.data(), ref, nullptr),
                  1e-5 * std::sqrt(double(s.c * 9) + 1));
    }
}

// Switched off, conv_winograd declines and conv_fast sums directly: other roundings, the same
// values within the bound.
TEST(OpsConvWinograd, SwitchedOffLeavesTheDirectPath) {
    const AnySize any_size;
    const ops::ConvShape s = shape_of({1, 64, 64, 1, 20, 20, 1, 1, 1, 1});
    std::mt19937 rng(4);
    const auto x = random_values(size_t(64 * 400), rng),
               w = random_values(size_t(64 * 64 * 9), rng);
    std::vector<float> on(size_t(64 * 400)), off(on.size());
    ops::conv_fast(s, x.data(), w.data(), nullptr, on.data(), nullptr);
    const bool before = ops::set_conv_winograd(false);
    ops::GemmArgs<float> a;
    a.m = 64;
    EXPECT_FALSE(ops::conv_winograd(s.w, x.data(), 64, a, nullptr));
    ops::conv_fast(s, x.data(), w.data(), nullptr, off.data(), nullptr);
    ops::set_conv_winograd(before);
    EXPECT_NE(on, off);
    for (size_t i = 0; i < on.size(); ++i)
        ASSERT_NEAR(on[i], off[i], 1e-5 * std::sqrt(64.0 * 9 + 1) * (1 + std::fabs(off[i])));
}

// BatchNormalization, a residual and Relu fused: the same values as the plain Winograd result
// with the epilogue applied to each output row afterwards.
TEST(OpsConvWinograd, EpilogueSeesEachFinishedRow) {
    const AnySize any_size;
    const ops::ConvShape s = shape_of({1, 64, 72, 1, 19, 21, 1, 1, 1, 1});
    std::mt19937 rng(8);
    const auto x = random_values(size_t(64 * 19 * 21), rng);
    const auto w = random_values(size_t(72 * 64 * 9), rng);
    const auto bias = random_values(72, rng), sub = random_values(72, rng),
               mul = random_values(72, rng), add = random_values(72, rng);
    const size_t ny = size_t(72 * s.w.out_size());
    const auto res = random_values(ny, rng);
    std::vector<float> fused(ny), plain(ny);
    ops::GemmEpilogue ep;
    ep.sub = sub.data(), ep.mul = mul.data(), ep.add = add.data();
    ep.res = res.data(), ep.res_origin = fused.data();
    ep.clamp = true, ep.lo = 0.0f, ep.hi = std::numeric_limits<float>::infinity();
    ThreadPool pool(2);
    ops::conv_fast(s, x.data(), w.data(), bias.data(), fused.data(), &pool, &ep);
    ops::conv_fast(s, x.data(), w.data(), bias.data(), plain.data(), &pool);
    ep.res_origin = plain.data();
    const int64_t os = s.w.out_size();
    for (int64_t k = 0; k < 72; ++k) ep.apply(k, plain.data() + k * os, os);
    for (size_t i = 0; i < ny; ++i) ASSERT_EQ(fused[i], plain[i]) << "at " << i;
}

TEST(OpsConvWinograd, LeavesOtherGeometriesAlone) {
    auto window = [](std::vector<int64_t> in, std::vector<int64_t> kernel, int64_t stride,
                     int64_t dil) {
        ops::WindowAttrs wa;
        wa.strides.assign(in.size(), stride), wa.dilations.assign(in.size(), dil);
        wa.pads.assign(2 * in.size(), 1);
        return ops::make_window(wa, in, kernel, "Conv");
    };
    EXPECT_TRUE(ops::winograd_takes(window({28, 28}, {3, 3}, 1, 1), 64, 64));
    EXPECT_FALSE(ops::winograd_takes(window({28, 28}, {3, 3}, 2, 1), 64, 64));        // stride 2
    EXPECT_FALSE(ops::winograd_takes(window({28, 28}, {3, 3}, 1, 2), 64, 64));        // dilation 2
    EXPECT_FALSE(ops::winograd_takes(window({28, 28}, {5, 5}, 1, 1), 64, 64));        // 5x5
    EXPECT_FALSE(ops::winograd_takes(window({28}, {3}, 1, 1), 64, 64));               // 1-D
    EXPECT_FALSE(ops::winograd_takes(window({8, 28, 28}, {3, 3, 3}, 1, 1), 64, 64));  // 3-D
    EXPECT_FALSE(ops::winograd_takes(window({28, 28}, {3, 3}, 1, 1), 32, 64));        // few inputs
    EXPECT_FALSE(ops::winograd_takes(window({28, 28}, {3, 3}, 1, 1), 64, 32));        // few outputs
    // Where it pays: large maps, or 56x56 with many channels.
    EXPECT_TRUE(ops::winograd_fits(window({224, 224}, {3, 3}, 1, 1), 64, 64));
    EXPECT_TRUE(ops::winograd_fits(window({112, 112}, {3, 3}, 1, 1), 128, 128));
    EXPECT_TRUE(ops::winograd_fits(window({56, 56}, {3, 3}, 1, 1), 256, 256));
    EXPECT_FALSE(ops::winograd_fits(window({56, 56}, {3, 3}, 1, 1), 64, 128));
    EXPECT_FALSE(ops::winograd_fits(window({28, 28}, {3, 3}, 1, 1), 256, 256));
    EXPECT_FALSE(ops::winograd_fits(window({224, 224}, {3, 3}, 2, 1), 64, 64));  // not taken
    const AnySize any_size;
    EXPECT_TRUE(ops::winograd_fits(window({28, 28}, {3, 3}, 1, 1), 64, 64));
    EXPECT_FALSE(ops::winograd_fits(window({28, 28}, {3, 3}, 1, 1), 32, 64));
}

}  // namespace
}  // namespace pg
