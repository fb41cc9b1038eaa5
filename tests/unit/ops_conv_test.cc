// Conv / ConvTranspose: the float32 im2col + GEMM path diffed against the plain reference on
// random geometries (1-D..3-D, groups, depthwise, strides, dilations, pads), and ONNX semantics.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "base/error.h"
#include "base/thread_pool.h"
#include "ops/conv_kernels.h"
#include "support/gemm_isa.h"
#include "support/op_runner.h"

namespace pg {
namespace {

using test::f32;
using test::run_op;
using test::values_f32;

// conv_fast against conv_reference on random x, w and (with_bias) b for `s`: every output within
// tol * (1 + |ref|), tol defaulting to 1e-5 * sqrt(reduction length + 1).
void expect_fast_conv_matches(const ops::ConvShape& s, bool with_bias, ThreadPool* pool,
                              std::mt19937& rng, size_t label, double tol = 0) {
    std::uniform_real_distribution<float> val(-1.0f, 1.0f);
    const int64_t cg = s.c / s.group;
    std::vector<float> x(size_t(s.n * s.c * s.w.in_size())),
        w(size_t(s.m * cg * s.w.kernel_size())), b(size_t(s.m));
    for (auto* v : {&x, &w, &b})
        for (float& e : *v) e = val(rng);
    const size_t ny = size_t(s.n * s.m * s.w.out_size());
    std::vector<float> fast(ny, std::numeric_limits<float>::quiet_NaN()), ref = fast;
    const float* bias = with_bias ? b.data() : nullptr;
    ops::conv_fast(s, x.data(), w.data(), bias, fast.data(), pool);
    ops::conv_reference(s, x.data(), w.data(), bias, ref.data());
    if (tol == 0) tol = 1e-5 * std::sqrt(double(cg * s.w.kernel_size()) + 1);
    for (size_t i = 0; i < ny; ++i)
        ASSERT_LE(std::fabs(fast[i] - ref[i]), tol * (1 + std::fabs(ref[i])))
            << "case " << label << " at " << i;
}

TEST(OpsConv, FastConvMatchesReferenceOnRandomGeometries) {
    test::for_each_gemm_isa([&] {
        std::mt19937 rng(5);
        auto pick = [&](int64_t lo, int64_t hi) {
            return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
        };
        ThreadPool pool(2);
        for (int t = 0; t < 120; ++t) {
            const int nd = 1 + t % 3;
            ops::WindowAttrs wa;
            std::vector<int64_t> in, kernel;
            for (int i = 0; i < nd; ++i) {
                kernel.push_back(pick(1, 3));
                wa.strides.push_back(pick(1, 3));
                wa.dilations.push_back(pick(1, 2));
                in.push_back(pick((kernel.back() - 1) * wa.dilations.back() + 1, nd == 3 ? 7 : 13));
            }
            for (int i = 0; i < 2 * nd; ++i) wa.pads.push_back(pick(0, 2));
            if (t % 7 == 3) wa.auto_pad = "SAME_LOWER", wa.pads.clear();
            ops::ConvShape s;
            s.group = t % 4 == 0 ? pick(2, 4) : 1;
            s.n = pick(1, 2), s.c = s.group * pick(1, 5), s.m = s.group * pick(1, 6);
            if (t % 9 == 0) s.group = s.c = s.m = pick(2, 8);  // depthwise
            s.w = ops::make_window(wa, in, kernel, "Conv");
            expect_fast_conv_matches(s, t % 2, t % 3 ? &pool : nullptr, rng, size_t(t));
        }
    });
}

// Larger geometries: several k-slices and column blocks of the packed GEMM (im2col packed from
// the image, or the padded-width path for stride 1 with few output channels), the direct path
// under AVX-512 (stride phases, dilations, asymmetric pads, rows narrower than a tile, rows
// too narrow for it), pointwise convolutions, and depthwise planes with strides, dilations and
// pads. Each runs under every GEMM ISA the CPU has.
TEST(OpsConv, FastConvMatchesReferenceOnLargeGeometries) {
    test::for_each_gemm_isa([&] {
        struct Case {
            int64_t c, m, group, h, w, k, stride, dil, pad;
        };
        const Case cases[] = {{40, 20, 1, 40, 37, 3, 1, 1, 1},  {30, 70, 1, 23, 29, 3, 2, 1, 0},
                              {300, 13, 1, 9, 11, 1, 1, 1, 0},  {24, 24, 24, 33, 30, 3, 1, 1, 1},
                              {16, 16, 16, 31, 17, 3, 2, 2, 2}, {12, 12, 12, 20, 21, 5, 2, 1, 2},
                              {9, 30, 3, 19, 18, 3, 1, 1, 1},   {8, 600, 1, 5, 5, 2, 1, 1, 1},
                              {8, 8, 8, 14, 57, 3, 2, 1, 1},    {8, 8, 8, 10, 40, 3, 3, 1, 1},
                              {6, 6, 6, 9, 64, 3, 2, 1, 0},     {6, 6, 6, 12, 35, 7, 1, 2, 3},
                              {70, 40, 1, 7, 7, 3, 1, 1, 1},    {90, 30, 1, 14, 13, 3, 1, 1, 1},
                              {20, 24, 1, 20, 30, 3, 1, 2, 2},  {33, 16, 1, 15, 21, 5, 1, 1, 2},
                              {3, 64, 1, 40, 45, 7, 2, 1, 3},   {20, 40, 1, 30, 33, 3, 2, 2, 2},
                              {16, 200, 1, 9, 40, 3, 3, 1, 1},  {5, 20, 1, 60, 10, 5, 1, 1, 2},
                              {12, 30, 1, 6, 6, 3, 1, 1, 1}};
        std::mt19937 rng(9);
        ThreadPool pool(2);
        for (size_t t = 0; t < std::size(cases); ++t) {
            const Case& k = cases[t];
            ops::WindowAttrs wa;
            wa.strides = {k.stride, k.stride}, wa.dilations = {k.dil, k.dil};
            wa.pads = {k.pad, k.pad, k.pad + 1, k.pad};
            ops::ConvShape s;
            s.n = 1 + int64_t(t % 2), s.c = k.c, s.m = k.m, s.group = k.group;
            s.w = ops::make_window(wa, {k.h, k.w}, {k.k, k.k}, "Conv");
            expect_fast_conv_matches(s, t % 3, t % 4 ? &pool : nullptr, rng, t);
        }
    });
}

// Depthwise 3x3 planes with dilation 1 (the compile-time tap loop of the padded path): random
// sizes, row and column strides 1-2, pads 0-2, with and without bias, against the reference.
TEST(OpsConv, Depthwise3x3MatchesReferenceOnRandomShapes) {
    std::mt19937 rng(17);
    auto pick = [&](int64_t lo, int64_t hi) {
        return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
    };
    ThreadPool pool(2);
    for (int t = 0; t < 100; ++t) {
        ops::WindowAttrs wa;
        wa.strides = {pick(1, 2), pick(1, 2)}, wa.dilations = {1, 1};
        wa.pads = {pick(0, 2), pick(0, 2), pick(0, 2), pick(0, 2)};
        ops::ConvShape s;
        s.n = pick(1, 2), s.group = s.c = s.m = pick(1, 40);
        // Widths to 70: rows of one to five 16-wide AVX-512 blocks.
        s.w = ops::make_window(wa, {pick(3, 30), pick(3, t % 2 ? 40 : 70)}, {3, 3}, "Conv");
        expect_fast_conv_matches(s, t % 2, t % 3 ? &pool : nullptr, rng, size_t(t), 4e-5);
    }
}

// Depthwise Convs on narrow maps (ShuffleNet's 14 x 14 and 7 x 7), channels in blocks of 16:
// on one thread through the blocked kernel with reorders (set_blocked_depthwise), or the plain
// one, on two threads always the plain one; each against the reference, strides 1 and 2.
TEST(OpsConv, NarrowDepthwiseMapsMatchTheReferenceBlockedOrNot) {
    std::mt19937 rng(43);
    ThreadPool pool(2);
    int t = 0;
    for (const int64_t c : {16, 48, 272})
        for (const int64_t hw : {7, 14, 15, 33})
            for (const int64_t stride : {1, 2}) {
                ops::WindowAttrs wa;
                wa.strides = {stride, stride}, wa.pads = {1, 1, 1, 1};
                ops::ConvShape s;
                s.n = 1 + t % 2, s.group = s.c = s.m = c;
                s.w = ops::make_window(wa, {hw, hw}, {3, 3}, "Conv");
                for (const bool blocked : {true, false}) {
                    const bool was = ops::set_blocked_depthwise(blocked);
                    expect_fast_conv_matches(s, t % 2 == 0, nullptr, rng, size_t(t), 4e-5);
                    expect_fast_conv_matches(s, t % 2 == 0, &pool, rng, size_t(t), 4e-5);
                    ops::set_blocked_depthwise(was);
                }
                ++t;
            }
}

TEST(OpsConv, PadsStridesAndBias) {
    using ir::Attribute;
    // 1x1x3x3 input of ones, 2x2 kernel of ones, pads 1, stride 2: corner windows see 1 element.
    auto out = run_op("Conv",
                      {f32({1, 1, 3, 3}, std::vector<float>(9, 1)), f32({1, 1, 2, 2}, {1, 1, 1, 1}),
                       f32({1}, {10})},
                      ir::attrs(Attribute::make_ints("pads", {1, 1, 1, 1}),
                                Attribute::make_ints("strides", {2, 2})));
    ASSERT_EQ(out[0].dims(), (std::vector<int64_t>{1, 1, 2, 2}));
    EXPECT_EQ(values_f32(out[0]), (std::vector<float>{11, 12, 12, 14}));
}

TEST(OpsConv, GroupMismatchIsInvalid) {
    EXPECT_THROW(
        run_op("Conv", {f32({1, 3, 2, 2}, std::vector<float>(12, 1)), f32({1, 2, 1, 1}, {1, 1})}),
        Error);
}

TEST(OpsConvTranspose, OutputPaddingAndShape) {
    using ir::Attribute;
    const Tensor x = f32({1, 1, 2}, {1, 2}), w = f32({1, 1, 2}, {1, 1});
    auto plain = run_op("ConvTranspose", {x, w}, ir::attrs(Attribute::make_ints("strides", {2})));
    EXPECT_EQ(values_f32(plain[0]), (std::vector<float>{1, 1, 2, 2}));
    auto padded = run_op("ConvTranspose", {x, w},
                         ir::attrs(Attribute::make_ints("strides", {2}),
                                   Attribute::make_ints("output_padding", {1})));
    EXPECT_EQ(values_f32(padded[0]), (std::vector<float>{1, 1, 2, 2, 0}));
    auto shaped = run_op(
        "ConvTranspose", {x, w},
        ir::attrs(Attribute::make_ints("strides", {2}), Attribute::make_ints("output_shape", {5})));
    EXPECT_EQ(values_f32(shaped[0]), (std::vector<float>{1, 1, 2, 2, 0}));
}

TEST(OpsConvTranspose, GroupsUseTheirOwnChannels) {
    // Two groups, one channel each: output channel g only sees input channel g.
    auto out = run_op("ConvTranspose", {f32({1, 2, 1}, {1, 2}), f32({2, 1, 1}, {3, 5})},
                      ir::attrs(ir::Attribute::make_int("group", 2)));
    EXPECT_EQ(values_f32(out[0]), (std::vector<float>{3, 10}));
}

}  // namespace
}  // namespace pg
