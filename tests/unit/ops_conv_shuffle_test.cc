// conv_fast with a channel shuffle (ShuffleNet's Reshape -> Transpose -> Reshape folded into the
// Conv's output rows): every fast path (Winograd, direct, pointwise, strided pointwise, padded
// width, packed im2col) under every GEMM ISA, groups equal to, dividing and divided by the
// shuffle, with the bias and a fused epilogue; diffed against conv_reference followed by the
// shuffle written out plainly.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "base/error.h"
#include "base/thread_pool.h"
#include "ops/conv_kernels.h"
#include "ops/conv_winograd.h"
#include "support/gemm_isa.h"

namespace pg {
namespace {

struct Case {
    int64_t c, m, group, shuffle, h, w, k, stride, pad;
};

ops::ConvShape shape_of(const Case& k) {
    ops::WindowAttrs wa;
    wa.strides = {k.stride, k.stride};
    wa.pads = {k.pad, k.pad, k.pad, k.pad};
    ops::ConvShape s;
    s.c = k.c, s.m = k.m, s.group = k.group;
    s.w = ops::make_window(wa, {k.h, k.w}, {k.k, k.k}, "Conv");
    return s;
}

// y (n, m, plane) with channel o moved to (o % seg) * shuffle + o / seg, as the three ops do.
std::vector<float> shuffled(const std::vector<float>& y, int64_t n, int64_t m, int64_t plane,
                            int64_t shuffle) {
    std::vector<float> out(y.size());
    const int64_t seg = m / shuffle;
    for (int64_t i = 0; i < n; ++i)
        for (int64_t o = 0; o < m; ++o)
            std::copy_n(y.begin() + (i * m + o) * plane, plane,
                        out.begin() + (i * m + (o % seg) * shuffle + o / seg) * plane);
    return out;
}

// The epilogue of a fused BatchNormalization and Relu over m channels.
struct Epilogue {
    std::vector<float> sub, mul, add;
    ops::GemmEpilogue ep;
    Epilogue(int64_t m, std::mt19937& rng) {
        std::uniform_real_distribution<float> val(-1.0f, 1.0f);
        for (auto* v : {&sub, &mul, &add}) {
            v->resize(size_t(m));
            for (float& e : *v) e = val(rng);
        }
        ep.sub = sub.data(), ep.mul = mul.data(), ep.add = add.data();
        ep.clamp = true, ep.lo = 0.0f, ep.hi = std::numeric_limits<float>::infinity();
    }
};

void expect_shuffle_matches(const Case& k, ThreadPool* pool, std::mt19937& rng, size_t label) {
    const ops::ConvShape s = shape_of(k);
    std::uniform_real_distribution<float> val(-1.0f, 1.0f);
    const int64_t cg = s.c / s.group, plane = s.w.out_size();
    std::vector<float> x(size_t(s.c * s.w.in_size())), w(size_t(s.m * cg * s.w.kernel_size())),
        b(size_t(s.m));
    for (auto* v : {&x, &w, &b})
        for (float& e : *v) e = val(rng);
    const Epilogue e(s.m, rng);
    const size_t ny = size_t(s.m * plane);
    std::vector<float> fast(ny, std::numeric_limits<float>::quiet_NaN()), plain = fast, ref = fast;
    ops::conv_fast(s, x.data(), w.data(), b.data(), fast.data(), pool, &e.ep, k.shuffle);
    ops::conv_fast(s, x.data(), w.data(), b.data(), plain.data(), pool, &e.ep);
    ops::conv_reference(s, x.data(), w.data(), b.data(), ref.data());
    for (int64_t o = 0; o < s.m; ++o)  // the reference's BatchNormalization and Relu
        for (int64_t j = 0; j < plane; ++j) {
            float& v = ref[size_t(o * plane + j)];
            v = std::max(0.0f, (v - e.sub[size_t(o)]) * e.mul[size_t(o)] + e.add[size_t(o)]);
        }
    ref = shuffled(ref, 1, s.m, plane, k.shuffle);
    plain = shuffled(plain, 1, s.m, plane, k.shuffle);
    const double tol = 1e-5 * std::sqrt(double(cg * s.w.kernel_size()) + 1);
    for (size_t i = 0; i < ny; ++i) {
        ASSERT_LE(std::fabs(fast[i] - ref[i]), tol * (1 + std::fabs(ref[i])))
            << "case " << label << " at " << i;
        // A group inside one shuffle segment runs as one piece, the very GEMM of the unshuffled
        // Conv: the same bits (a group cut into pieces may take another path, e.g. not Winograd).
        if (k.group % k.shuffle == 0) {
            ASSERT_EQ(fast[i], plain[i]) << "case " << label << " at " << i;
        }
    }
}

TEST(OpsConvShuffle, EveryPathWritesTheShuffledChannels) {
    const Case cases[] = {
        {24, 112, 4, 4, 9, 11, 1, 1, 0},   // ShuffleNet's grouped pointwise Conv
        {24, 112, 4, 4, 17, 17, 1, 2, 0},  // strided pointwise
        {12, 36, 3, 6, 8, 8, 1, 1, 0},     // a group holds two shuffle segments
        {12, 36, 6, 3, 8, 8, 1, 1, 0},     // a segment holds two groups
        {8, 30, 1, 5, 15, 16, 3, 1, 1},    // ungrouped 3x3: padded width / direct
        {8, 20, 2, 4, 9, 7, 3, 2, 1},      // strided 3x3, uneven pieces (20 / 4 = 5 per group)
        {64, 64, 1, 4, 20, 20, 3, 1, 1},   // Winograd on the whole group, then pieces of 16
        {64, 128, 1, 1, 20, 20, 3, 1, 1},  // shuffle 1: the plain layout
    };
    // Winograd takes the 20x20 cases (in models it pays only on larger maps).
    const bool any_size = ops::set_winograd_any_size(true);
    struct Restore {
        bool was;
        ~Restore() { ops::set_winograd_any_size(was); }
    } restore{any_size};
    test::for_each_gemm_isa([&] {
        std::mt19937 rng(11);
        ThreadPool pool(2);
        for (size_t t = 0; t < std::size(cases); ++t) {
            expect_shuffle_matches(cases[t], &pool, rng, t);
            expect_shuffle_matches(cases[t], nullptr, rng, t);
        }
    });
}

TEST(OpsConvShuffle, UnsupportedShufflesAreInternalErrors) {
    std::vector<float> x(8 * 16), w(8 * 8), y(12 * 16);
    ops::ConvShape s = shape_of({8, 12, 1, 5, 4, 4, 1, 1, 0});  // 12 channels by 5
    EXPECT_THROW(ops::conv_fast(s, x.data(), w.data(), nullptr, y.data(), nullptr, nullptr, 5),
                 Error);
    s = shape_of({8, 8, 8, 2, 4, 4, 1, 1, 0});  // depthwise
    EXPECT_THROW(ops::conv_fast(s, x.data(), w.data(), nullptr, y.data(), nullptr, nullptr, 2),
                 Error);
    ops::GemmEpilogue ep;
    ep.res = y.data();
    s = shape_of({8, 12, 1, 2, 4, 4, 1, 1, 0});
    EXPECT_THROW(ops::conv_fast(s, x.data(), w.data(), nullptr, y.data(), nullptr, &ep, 2), Error);
}

}  // namespace
}  // namespace pg
