// The blocked (NCHWc16) layout's kernels (ops/nchwc.h): the reorders element for element, any
// element size, ragged pixel tails; conv_nchwc bit for bit against a scalar chain of fused
// multiply-adds over (input channel, kh, kw) (the padding's zeros added, which for finite sums
// is skipping them, as the kernel does) on random geometries (kernels 1-5, strides, asymmetric
// pads, dilation, batches, 1-9 output blocks in groups, short and long sums), from blocked and
// from plain inputs (any channel count: a stem), the epilogue against GemmEpilogue::apply;
// depthwise_nchwc against its chain; the pools against the plain max_pool / avg_pool /
// global_pool_planes and batch_norm_nchwc against batch_norm_fast, bit for bit;
// conv_nchwc_plain_out (any output channel count, a plain output) against the same chains. Skipped
// where the CPU has no AVX-512.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "base/aligned.h"
#include "base/error.h"
#include "base/thread_pool.h"
#include "ops/conv_kernels.h"
#include "ops/nchwc.h"
#include "ops/nchwc_groups.h"
#include "ops/normalization_kernels.h"
#include "ops/pool_kernels.h"
#include "support/nchwc_values.h"
#include "support/random_values.h"
#include "tensor/tensor.h"

namespace pg {
namespace {

class OpsNchwc : public ::testing::Test {
  protected:
    void SetUp() override {
        if (!ops::nchwc_available()) GTEST_SKIP() << "no AVX-512 on this CPU";
    }
};

using test::blocked;
using test::unblocked;

TEST_F(OpsNchwc, ReordersPlaceEachChannelInItsLane) {
    std::mt19937 rng(3);
    ThreadPool pool(2);
    for (const int64_t plane : {1, 7, 16, 49, 300, 5000}) {
        const int64_t n = 2, c = 48;
        const std::vector<float> x = test::random_floats(size_t(n * c * plane), rng);
        std::vector<float> y(x.size()), back(x.size());
        ops::to_nchwc(x.data(), n, c, plane, sizeof(float), y.data(), &pool);
        for (int64_t i = 0; i < n; ++i)
            for (int64_t ch = 0; ch < c; ++ch)
                for (int64_t p = 0; p < plane; ++p)
                    ASSERT_EQ(y[size_t(((i * (c / 16) + ch / 16) * plane + p) * 16 + ch % 16)],
                              x[size_t((i * c + ch) * plane + p)])
                        << "plane " << plane;
        ops::from_nchwc(y.data(), n, c, plane, sizeof(float), back.data(), &pool);
        EXPECT_EQ(back, x);
    }
}

TEST_F(OpsNchwc, ReordersMoveAnyElementSize) {
    for (const size_t elem : {size_t(1), size_t(2), size_t(8)}) {
        const int64_t n = 1, c = 32, plane = 21;
        std::vector<char> x(size_t(n * c * plane) * elem), y(x.size()), back(x.size());
        for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<char>(i * 7 + 1);
        ops::to_nchwc(x.data(), n, c, plane, elem, y.data(), nullptr);
        EXPECT_EQ(
            std::memcmp(y.data() + (3 * 16 + 5) * elem, x.data() + (5 * plane + 3) * elem, elem),
            0);
        ops::from_nchwc(y.data(), n, c, plane, elem, back.data(), nullptr);
        EXPECT_EQ(back, x) << elem;
    }
}

// Unblocking any channel count: the last block's lanes past c are left behind.
TEST_F(OpsNchwc, UnblockingTakesAPartialLastBlock) {
    std::mt19937 rng(4);
    ThreadPool pool(2);
    for (const int64_t c : {1, 15, 17, 40, 1000})
        for (const int64_t plane : {1, 13, 169, 3000}) {
            const int64_t n = 2, blocks = (c + 15) / 16;
            const std::vector<float> xb = test::random_floats(size_t(n * blocks * 16 * plane), rng);
            std::vector<float> y(size_t(n * c * plane), std::nanf(""));
            ops::from_nchwc(xb.data(), n, c, plane, sizeof(float), y.data(), &pool);
            for (int64_t i = 0; i < n; ++i)
                for (int64_t ch = 0; ch < c; ++ch)
                    for (int64_t p = 0; p < plane; ++p)
                        ASSERT_EQ(y[size_t((i * c + ch) * plane + p)],
                                  xb[size_t(((i * blocks + ch / 16) * plane + p) * 16 + ch % 16)])
                            << "c " << c << " plane " << plane;
        }
}

TEST_F(OpsNchwc, DimsRoundTripAndRejectRaggedChannels) {
    EXPECT_EQ(ops::nchwc_dims({2, 64, 7, 9}), (std::vector<int64_t>{2, 4, 7, 9, 16}));
    EXPECT_EQ(ops::nchw_dims({2, 4, 7, 9, 16}), (std::vector<int64_t>{2, 64, 7, 9}));
    EXPECT_THROW(ops::nchwc_dims({1, 40, 3, 3}), Error);
    EXPECT_THROW(ops::nchw_dims({1, 4, 3, 3}), Error);
    std::vector<float> x(40), y(40);
    EXPECT_THROW(ops::to_nchwc(x.data(), 1, 40, 1, 4, y.data(), nullptr), Error);
}

struct ConvCase {
    int64_t n, c, m, h, w, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
};

ops::ConvShape shape_of(const ConvCase& q) {
    ops::WindowAttrs wa;
    wa.strides = {q.sh, q.sw};
    wa.dilations = {q.dh, q.dw};
    wa.pads = {q.pt, q.pl, q.pb, q.pr};
    ops::ConvShape s;
    s.n = q.n, s.c = q.c, s.m = q.m;
    s.w = ops::make_window(wa, {q.h, q.w}, {q.kh, q.kw}, "Conv");
    return s;
}

// NCHW: per output, fused multiply-adds in order from zero, the padding's zeros included:
// over (c, kh, kw) for a plain input; for a blocked one over (c / 16, kh, kw, c % 16), the
// order in which the kernel takes a block's lanes.
std::vector<float> fma_chain(const ConvCase& q, const ops::ConvShape& s,
                             const std::vector<float>& x, const std::vector<float>& w,
                             bool plain_input) {
    const int64_t ho = s.w.out[1], wo = s.w.out[2];
    const int64_t lanes = plain_input ? 1 : 16;  // channels taken per tap
    std::vector<float> y(size_t(q.n * q.m * ho * wo));
    for (int64_t i = 0; i < q.n; ++i)
        for (int64_t m = 0; m < q.m; ++m)
            for (int64_t oy = 0; oy < ho; ++oy)
                for (int64_t ox = 0; ox < wo; ++ox) {
                    float acc = 0.0f;
                    for (int64_t cb = 0; cb < q.c; cb += lanes)
                        for (int64_t ky = 0; ky < q.kh; ++ky)
                            for (int64_t kx = 0; kx < q.kw; ++kx)
                                for (int64_t c = cb; c < cb + lanes; ++c) {
                                    const int64_t iy = oy * q.sh + ky * q.dh - q.pt,
                                                  ix = ox * q.sw + kx * q.dw - q.pl;
                                    const bool in = iy >= 0 && iy < q.h && ix >= 0 && ix < q.w;
                                    const float v =
                                        in ? x[size_t(((i * q.c + c) * q.h + iy) * q.w + ix)]
                                           : 0.0f;
                                    acc = std::fma(
                                        w[size_t(((m * q.c + c) * q.kh + ky) * q.kw + kx)], v, acc);
                                }
                    y[size_t(((i * q.m + m) * ho + oy) * wo + ox)] = acc;
                }
    return y;
}

// Case q's random inputs and its expected output (NCHW): the chains, then GemmEpilogue::apply
// with the bias and, when `epilogue`, a batch normalization, a clamp and (when `residual`) a
// residual given NCHW.
struct ConvExpect {
    std::vector<float> x, w, bias, res, mean, k, want;
    ops::GemmEpilogue ep;
};

ConvExpect expect_conv(const ConvCase& q, const ops::ConvShape& s, std::mt19937& rng, bool epilogue,
                       bool residual, bool plain_input) {
    const int64_t plane_out = s.w.out_size();
    ConvExpect e;
    e.x = test::random_floats(size_t(q.n * q.c * q.h * q.w), rng);
    e.w = test::random_floats(size_t(q.m * q.c * q.kh * q.kw), rng);
    e.bias = test::random_floats(size_t(q.m), rng);
    e.res = test::random_floats(size_t(q.n * q.m * plane_out), rng);
    e.mean = test::random_floats(size_t(q.m), rng);
    e.k = test::random_floats(size_t(q.m), rng, 0.5f, 2.0f);
    e.want = fma_chain(q, s, e.x, e.w, plain_input);
    if (epilogue) {
        e.ep.sub = e.mean.data(), e.ep.mul = e.k.data(), e.ep.add = e.bias.data();
        if (residual) e.ep.res = e.res.data(), e.ep.res_origin = e.want.data();
        e.ep.clamp = true, e.ep.lo = 0.0f, e.ep.hi = 0.5f;
    }
    e.ep.bias = e.bias.data();
    for (int64_t i = 0; i < q.n; ++i)
        for (int64_t m = 0; m < q.m; ++m)
            e.ep.apply(m, e.want.data() + (i * q.m + m) * plane_out, plane_out);
    e.ep.bias = nullptr;  // the kernels take it apart
    return e;
}

std::string describe(const ConvCase& q) {
    return "n=" + std::to_string(q.n) + " c=" + std::to_string(q.c) + " m=" + std::to_string(q.m) +
           " " + std::to_string(q.h) + "x" + std::to_string(q.w) + " k " + std::to_string(q.kh) +
           "x" + std::to_string(q.kw) + " s " + std::to_string(q.sh) + "," + std::to_string(q.sw) +
           " d " + std::to_string(q.dh) + "," + std::to_string(q.dw) + " pads " +
           std::to_string(q.pt) + std::to_string(q.pl) + std::to_string(q.pb) +
           std::to_string(q.pr);
}

// conv_nchwc of case q (blocked in and out, through the reorders) with an epilogue (rows =
// output channels; the residual blocked for the kernel) against the chain + apply.
void check_conv(const ConvCase& q, std::mt19937& rng, ThreadPool* pool, bool epilogue,
                bool plain_input = false) {
    const ops::ConvShape s = shape_of(q);
    ASSERT_TRUE(ops::conv_nchwc_fits(s, plain_input));
    const int64_t plane_in = q.h * q.w, plane_out = s.w.out_size();
    const ConvExpect e = expect_conv(q, s, rng, epilogue, true, plain_input);
    const std::vector<float> xb = plain_input ? e.x : blocked(e.x, q.n, q.c, plane_in);
    const std::vector<float> rb = blocked(e.res, q.n, q.m, plane_out);
    std::vector<float> yb(e.want.size(), std::nanf(""));
    ops::GemmEpilogue kep = e.ep;
    if (epilogue) kep.res = rb.data(), kep.res_origin = yb.data();
    ops::conv_nchwc(s, xb.data(), e.w.data(), e.bias.data(), epilogue ? &kep : nullptr, yb.data(),
                    pool, plain_input);
    const std::vector<float> got = unblocked(yb, q.n, q.m, plane_out);
    ASSERT_EQ(std::memcmp(got.data(), e.want.data(), e.want.size() * sizeof(float)), 0)
        << describe(q);
}

// conv_nchwc_plain_out of case q (any m; blocked or plain in, plain out) against the chain +
// apply, with a batch normalization and a clamp when `epilogue` (no residual).
void check_conv_plain_out(const ConvCase& q, std::mt19937& rng, ThreadPool* pool, bool epilogue,
                          bool plain_input = false) {
    const ops::ConvShape s = shape_of(q);
    ASSERT_TRUE(ops::conv_nchwc_plain_out_fits(s, plain_input));
    const ConvExpect e = expect_conv(q, s, rng, epilogue, false, plain_input);
    const std::vector<float> xb = plain_input ? e.x : blocked(e.x, q.n, q.c, q.h * q.w);
    std::vector<float> got(e.want.size(), std::nanf(""));
    ops::conv_nchwc_plain_out(s, xb.data(), e.w.data(), e.bias.data(), epilogue ? &e.ep : nullptr,
                              got.data(), pool, plain_input);
    ASSERT_EQ(std::memcmp(got.data(), e.want.data(), e.want.size() * sizeof(float)), 0)
        << describe(q);
}

TEST_F(OpsNchwc, ConvGivesTheFusedMultiplyAddChainsBits) {
    std::mt19937 rng(11);
    ThreadPool pool(2);
    std::uniform_int_distribution<int64_t> blocks(1, 6), out_blocks(1, 9), hw(1, 17), kern(1, 5),
        stride(1, 3), dil(1, 2), pad(0, 2), batch(1, 2);
    for (int t = 0; t < 60; ++t) {
        ConvCase q{batch(rng), 16 * blocks(rng), 16 * out_blocks(rng),
                   hw(rng),    hw(rng),          kern(rng),
                   kern(rng),  stride(rng),      stride(rng),
                   dil(rng),   dil(rng),         pad(rng),
                   pad(rng),   pad(rng),         pad(rng)};
        q.h = std::max(q.h, (q.kh - 1) * q.dh + 1 - q.pt - q.pb);  // at least one output
        q.w = std::max(q.w, (q.kw - 1) * q.dw + 1 - q.pl - q.pr);
        check_conv(q, rng, t % 2 ? &pool : nullptr, t % 3 == 0);
    }
}

// A plain (n, c, h, w) input, any channel count: the first Conv of a region, a stem.
TEST_F(OpsNchwc, ConvFromAPlainInputGivesTheChainsBits) {
    std::mt19937 rng(15);
    ThreadPool pool(2);
    std::uniform_int_distribution<int64_t> chans(1, 40), out_blocks(1, 6), hw(3, 17), kern(1, 5),
        stride(1, 3), pad(0, 2);
    for (int t = 0; t < 30; ++t) {
        const int64_t k = kern(rng);
        ConvCase q{1 + t % 2, chans(rng),  16 * out_blocks(rng),
                   hw(rng),   hw(rng),     k,
                   k,         stride(rng), stride(rng),
                   1,         1,           pad(rng),
                   pad(rng),  pad(rng),    pad(rng)};
        q.h = std::max(q.h, q.kh), q.w = std::max(q.w, q.kw);
        check_conv(q, rng, t % 2 ? &pool : nullptr, t % 3 == 0, true);
    }
    check_conv({1, 3, 64, 40, 40, 7, 7, 2, 2, 1, 1, 3, 3, 3, 3}, rng, &pool, true, true);  // stem
    // One slice up to 160 values of p (10 channels x 16 taps), slices of 2 channels above it.
    check_conv({1, 10, 32, 12, 12, 4, 4, 1, 1, 1, 1, 1, 2, 2, 1}, rng, &pool, true, true);
    check_conv({2, 4, 48, 19, 17, 7, 7, 2, 2, 1, 1, 3, 3, 3, 3}, rng, &pool, true, true);
}

TEST_F(OpsNchwc, ConvCoversNetworkLayers) {
    std::mt19937 rng(12);
    ThreadPool pool(2);
    // 1x1 and 3x3 at the map sizes of ResNet / Inception (a segment and many), long sums
    // sliced, strided downsampling, a 5x5 and a 7x7.
    for (const ConvCase& q : {ConvCase{1, 64, 64, 56, 56, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
                              ConvCase{1, 256, 64, 28, 28, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},
                              ConvCase{1, 1024, 128, 7, 7, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},
                              ConvCase{1, 512, 80, 7, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
                              ConvCase{1, 128, 128, 28, 28, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},
                              ConvCase{1, 256, 512, 14, 14, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0},
                              ConvCase{2, 32, 48, 15, 15, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2},
                              ConvCase{1, 16, 64, 20, 20, 7, 7, 2, 2, 1, 1, 3, 3, 3, 3}})
        check_conv(q, rng, &pool, true);
}

// The epilogues of a folded BatchNormalization (a bias, then a residual or not, then Relu, a Clip
// or nothing: conv_tile's unrolled stores) and a bias-less Relu (its general path): apply's
// bits, on 1x1 and 3x3 tiles of every width.
TEST_F(OpsNchwc, ConvBiasEpiloguesGiveApplysBits) {
    std::mt19937 rng(19);
    ThreadPool pool(2);
    struct Kind {
        bool bias, res, clamp;
        float hi;
    };
    const float inf = std::numeric_limits<float>::infinity();
    for (const Kind k : {Kind{true, false, true, inf}, Kind{true, false, true, 0.5f},
                         Kind{true, true, false, inf}, Kind{true, true, true, inf},
                         Kind{true, true, true, 0.5f}, Kind{false, false, true, inf}}) {
        for (const ConvCase& q : {ConvCase{1, 32, 64, 9, 11, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},
                                  ConvCase{1, 48, 48, 7, 13, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
                                  ConvCase{1, 16, 32, 12, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},
                                  ConvCase{2, 16, 16, 6, 6, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1}}) {
            SCOPED_TRACE(describe(q) + " bias " + std::to_string(k.bias) + " res " +
                         std::to_string(k.res) + " hi " + std::to_string(k.hi));
            const ops::ConvShape s = shape_of(q);
            const int64_t plane_out = s.w.out_size();
            const ConvExpect e = expect_conv(q, s, rng, false, false, false);
            std::vector<float> want = fma_chain(q, s, e.x, e.w, false);
            ops::GemmEpilogue ep;
            ep.bias = k.bias ? e.bias.data() : nullptr;
            if (k.res) ep.res = e.res.data(), ep.res_origin = want.data();
            ep.clamp = k.clamp, ep.lo = 0.0f, ep.hi = k.hi;
            for (int64_t i = 0; i < q.n; ++i)
                for (int64_t m = 0; m < q.m; ++m)
                    ep.apply(m, want.data() + (i * q.m + m) * plane_out, plane_out);
            const std::vector<float> xb = blocked(e.x, q.n, q.c, q.h * q.w);
            const std::vector<float> rb = blocked(e.res, q.n, q.m, plane_out);
            std::vector<float> yb(want.size(), std::nanf(""));
            ops::GemmEpilogue kep = ep;
            kep.bias = nullptr;
            if (k.res) kep.res = rb.data(), kep.res_origin = yb.data();
            ops::conv_nchwc(s, xb.data(), e.w.data(), ep.bias, &kep, yb.data(), &pool);
            const std::vector<float> got = unblocked(yb, q.n, q.m, plane_out);
            ASSERT_EQ(std::memcmp(got.data(), want.data(), want.size() * sizeof(float)), 0);
        }
    }
}

TEST_F(OpsNchwc, ConvGivesTheSameBitsWithAPackBufferPerCall) {
    std::mt19937 rng(13);
    ThreadPool pool(2);
    const bool was = ops::set_nchwc_thread_pack_buffer(false);
    for (const ConvCase& q : {ConvCase{1, 256, 64, 28, 28, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},
                              ConvCase{1, 512, 80, 7, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}})
        check_conv(q, rng, &pool, true);
    ops::set_nchwc_thread_pack_buffer(was);
}

// The split between threads (nchwc_conv_split): by groups when there are two per thread, and on
// small maps from groups of two blocks on; else by pixels.
TEST_F(OpsNchwc, ConvSplitsSmallMapsByGroups) {
    EXPECT_TRUE(ops::nchwc_conv_split(1, 16, 3136, 2).by_groups);  // four groups of four
    EXPECT_EQ(ops::nchwc_conv_split(1, 16, 3136, 2).groups, 4);
    EXPECT_FALSE(ops::nchwc_conv_split(1, 10, 3136, 2).by_groups);  // three groups, large map
    const ops::NchwcConvSplit small = ops::nchwc_conv_split(1, 10, 49, 2);
    EXPECT_TRUE(small.by_groups);
    EXPECT_EQ(small.groups, 4);
    EXPECT_FALSE(ops::nchwc_conv_split(1, 3, 49, 2).by_groups);  // no two blocks per thread
}

// Small maps split by groups of two blocks or more, the blocks balanced between the threads
// first (set_nchwc_balanced_groups) or not: the chains' bits either way.
TEST_F(OpsNchwc, ConvGivesTheSameBitsInEverySplit) {
    std::mt19937 rng(17);
    ThreadPool pool(2);
    for (const bool balanced : {true, false}) {
        const bool was = ops::set_nchwc_balanced_groups(balanced);
        for (const ConvCase& q : {ConvCase{1, 1024, 160, 7, 7, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},
                                  ConvCase{1, 64, 80, 14, 14, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
                                  ConvCase{1, 128, 224, 7, 7, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},
                                  ConvCase{1, 32, 64, 16, 16, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0}})
            check_conv(q, rng, &pool, true);
        ops::set_nchwc_balanced_groups(was);
    }
}

// The next tile's input, residual and output lines fetched ahead (the default) or not, in each
// combination: the same values, from 1x1, 3x3 and 5x5 tiles with residual epilogues on maps of
// several tile classes.
TEST_F(OpsNchwc, ConvGivesTheSameBitsWithoutPrefetches) {
    std::mt19937 rng(14);
    ThreadPool pool(2);
    for (int on = 0; on < 4; ++on) {
        const bool in = ops::set_nchwc_input_prefetch(on & 1);
        const bool out = ops::set_nchwc_output_prefetch(on & 2);
        for (const ConvCase& q : {ConvCase{1, 256, 64, 14, 14, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},
                                  ConvCase{1, 64, 64, 13, 11, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},
                                  ConvCase{2, 32, 48, 15, 15, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2}})
            check_conv(q, rng, &pool, true);
        ops::set_nchwc_input_prefetch(in);
        ops::set_nchwc_output_prefetch(out);
    }
}

// Small maps' groups packed whole where their weights take at most 256 KiB (the default), or
// slice by slice: the chains' bits either way, packed whole (1x1 from 1024 inputs with a
// partial group; 3x3 from 48) or not (3x3 from 512, 1x1 from 2048), in batches, on one thread
// and two.
TEST_F(OpsNchwc, ConvGivesTheChainsBitsWithGroupsPackedWholeOrBySlice) {
    std::mt19937 rng(19);
    ThreadPool pool(2);
    for (const bool whole : {true, false}) {
        const bool was = ops::set_nchwc_group_pack(whole);
        for (ThreadPool* p : {&pool, static_cast<ThreadPool*>(nullptr)})
            for (const ConvCase& q : {ConvCase{1, 1024, 160, 7, 7, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},
                                      ConvCase{2, 512, 48, 7, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
                                      ConvCase{1, 2048, 64, 4, 4, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},
                                      ConvCase{1, 48, 48, 5, 6, 3, 3, 1, 1, 1, 1, 1, 0, 1, 0}})
                check_conv(q, rng, p, true);
        ops::set_nchwc_group_pack(was);
    }
}

// The weight pack's rows fetched ahead of each transposed block (the default) or not: the
// chains' bits either way: packed whole and by slice, rows of a partial block (160 outputs), and
// a plain input's 7x7 stem (rows of 147 values, not a multiple of 16, whose last fetches run past
// the weights' end).
TEST_F(OpsNchwc, ConvGivesTheChainsBitsWithThePackFetchingAheadOrNot) {
    std::mt19937 rng(29);
    ThreadPool pool(2);
    for (const bool ahead : {true, false}) {
        const bool was = ops::set_pack_prefetch_ahead(ahead);
        EXPECT_EQ(ops::set_pack_prefetch_ahead(ahead), ahead);
        for (const ConvCase& q : {ConvCase{1, 1024, 160, 7, 7, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},
                                  ConvCase{1, 256, 64, 28, 28, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0}})
            check_conv(q, rng, &pool, true);
        check_conv({1, 3, 48, 23, 23, 7, 7, 2, 2, 1, 1, 3, 3, 3, 3}, rng, &pool, true, true);
        ops::set_pack_prefetch_ahead(was);
    }
}

// conv_nchwc_plain_out's output copied group by group as threads finish them
// (set_nchwc_unblock_groups, the default: whole groups per thread, small maps and batches) or
// after the Conv (off; also where threads split the pixels: a large map, few blocks).
TEST_F(OpsNchwc, ConvToAPlainOutputUnblocksGroupsAsTheyFinish) {
    std::mt19937 rng(23);
    ThreadPool pool(2);
    for (const bool each : {true, false}) {
        const bool was = ops::set_nchwc_unblock_groups(each);
        for (const ConvCase& q : {ConvCase{1, 512, 1000, 13, 13, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},
                                  ConvCase{2, 64, 150, 7, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
                                  ConvCase{1, 32, 40, 60, 60, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0}})
            for (ThreadPool* p : {&pool, static_cast<ThreadPool*>(nullptr)})
                check_conv_plain_out(q, rng, p, true);
        ops::set_nchwc_unblock_groups(was);
    }
}

// Output channels not in whole blocks (conv_nchwc_plain_out): a plain y, each channel the chain's
// value with the epilogue (no residual), from blocked and plain inputs; 1000 classes at 13 x 13.
TEST_F(OpsNchwc, ConvToAPlainOutputTakesAnyChannelCount) {
    std::mt19937 rng(16);
    ThreadPool pool(2);
    std::uniform_int_distribution<int64_t> blocks(1, 5), outs(1, 150), hw(1, 15), kern(1, 3),
        pad(0, 1);
    for (int t = 0; t < 30; ++t) {
        const int64_t k = kern(rng);
        const bool plain_input = t % 4 == 3;
        ConvCase q{1 + t % 2, plain_input ? outs(rng) % 40 + 1 : 16 * blocks(rng),
                   outs(rng), hw(rng),
                   hw(rng),   k,
                   k,         1 + t % 2,
                   1 + t % 2, 1,
                   1,         pad(rng),
                   pad(rng),  pad(rng),
                   pad(rng)};
        q.h = std::max(q.h, q.kh), q.w = std::max(q.w, q.kw);
        check_conv_plain_out(q, rng, t % 2 ? &pool : nullptr, t % 3 == 0, plain_input);
    }
    check_conv_plain_out({1, 512, 1000, 13, 13, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0}, rng, &pool, true);
    const ops::ConvShape s = shape_of({1, 32, 40, 5, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0});
    EXPECT_FALSE(ops::conv_nchwc_fits(s));
    EXPECT_TRUE(ops::conv_nchwc_plain_out_fits(s));
    std::vector<float> buf(8192), res(8192);
    ops::GemmEpilogue ep;
    ep.res = res.data(), ep.res_origin = buf.data();
    EXPECT_THROW(
        ops::conv_nchwc_plain_out(s, buf.data(), buf.data(), nullptr, &ep, buf.data(), nullptr),
        Error);  // a residual
}

TEST_F(OpsNchwc, ConvFitsOnlyWhatItRuns) {
    const ops::ConvShape ok = shape_of({1, 32, 16, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1});
    EXPECT_TRUE(ops::conv_nchwc_fits(ok));
    ops::ConvShape s = ok;
    s.c = 24;
    EXPECT_FALSE(ops::conv_nchwc_fits(s));       // channels not in blocks
    EXPECT_TRUE(ops::conv_nchwc_fits(s, true));  // from a plain input
    s = ok, s.m = 40;
    EXPECT_FALSE(ops::conv_nchwc_fits(s));
    s = ok, s.group = 2;
    EXPECT_FALSE(ops::conv_nchwc_fits(s));
    s = ok, s.w.nd = 3;
    EXPECT_FALSE(ops::conv_nchwc_fits(s));
    s = ok, s.w.pad_begin[1] = -1;
    EXPECT_FALSE(ops::conv_nchwc_fits(s));
    std::vector<float> buf(4096);
    EXPECT_THROW(ops::conv_nchwc(s, buf.data(), buf.data(), nullptr, nullptr, buf.data(), nullptr),
                 Error);
}

// A depthwise Conv of n images of c channels, h x wd, a k x k window with stride st, padded by p0
// at the top and right and by p1 at the left and bottom (begin and end differ when p0 != p1).
ops::ConvShape depthwise_shape(int64_t n, int64_t c, int64_t h, int64_t wd, int64_t k, int64_t st,
                               int64_t p0, int64_t p1) {
    ops::WindowAttrs wa;
    wa.strides = {st, st}, wa.pads = {p0, p1, p1, p0};
    ops::ConvShape s;
    s.n = n, s.c = c, s.m = c, s.group = c;
    s.w = ops::make_window(wa, {h, wd}, {k, k}, "Conv");
    return s;
}

// A depthwise Conv's sums (NCHW, the planes of n x c channels): per output, fused multiply-adds
// over the taps inside the input (kh, kw in order from zero).
std::vector<float> depthwise_chains(const ops::ConvShape& s, const std::vector<float>& x,
                                    const std::vector<float>& w) {
    const ops::Window& g = s.w;
    const int64_t h = g.in[1], wd = g.in[2], ho = g.out[1], wo = g.out[2];
    const int64_t k = g.kernel[1], st = g.stride[1], p0 = g.pad_begin[1], p1 = g.pad_begin[2];
    std::vector<float> y(size_t(s.n * s.c * ho * wo));
    for (int64_t i = 0; i < s.n * s.c; ++i)
        for (int64_t oy = 0; oy < ho; ++oy)
            for (int64_t ox = 0; ox < wo; ++ox) {
                float acc = 0.0f;
                for (int64_t ky = 0; ky < k; ++ky)
                    for (int64_t kx = 0; kx < k; ++kx) {
                        const int64_t iy = oy * st + ky - p0, ix = ox * st + kx - p1;
                        if (iy >= 0 && iy < h && ix >= 0 && ix < wd)
                            acc = std::fma(w[size_t((i % s.c) * k * k + ky * k + kx)],
                                           x[size_t((i * h + iy) * wd + ix)], acc);
                    }
                y[size_t((i * ho + oy) * wo + ox)] = acc;
            }
    return y;
}

// Depthwise: per output, fused multiply-adds over the taps inside the input (kh, kw in order
// from zero), then the bias and the epilogue; blocked in and out; random windows, then 3x3 ones
// over rows long enough for runs of eight (dw_groups3), with and without their output lines
// fetched ahead.
TEST_F(OpsNchwc, DepthwiseGivesTheFusedMultiplyAddChainsBits) {
    std::mt19937 rng(16);
    ThreadPool pool(2);
    std::uniform_int_distribution<int64_t> blocks(1, 4), hw(3, 20), kern(1, 5), stride(1, 2),
        pad(0, 2);
    for (int t = 0; t < 34; ++t) {  // the last four: MobileNet's 3x3, strides 1 and 2, long rows
        const bool mobile = t >= 30;
        const int64_t c = 16 * blocks(rng), k = mobile ? 3 : kern(rng);
        const int64_t st = mobile ? 1 + t % 2 : stride(rng);
        const int64_t p0 = mobile ? 1 : std::min(pad(rng), k - 1);
        const int64_t p1 = mobile ? 1 : std::min(pad(rng), k - 1);
        const int64_t h = mobile ? 9 : std::max(hw(rng), k), n = 1 + t % 2;
        const int64_t wd = mobile ? 27 + t : std::max(hw(rng), k);
        const ops::ConvShape s = depthwise_shape(n, c, h, wd, k, st, p0, p1);
        ASSERT_TRUE(ops::depthwise_nchwc_fits(s));
        const int64_t ho = s.w.out[1], wo = s.w.out[2];
        const std::vector<float> x = test::random_floats(size_t(n * c * h * wd), rng),
                                 w = test::random_floats(size_t(c * k * k), rng),
                                 bias = test::random_floats(size_t(c), rng);
        std::vector<float> want = depthwise_chains(s, x, w);
        for (int64_t i = 0; i < n * c; ++i)
            for (int64_t q = 0; q < ho * wo; ++q) {
                const float r = want[size_t(i * ho * wo + q)] + bias[size_t(i % c)];
                want[size_t(i * ho * wo + q)] = r < 0.0f ? 0.0f : r;
            }
        ops::GemmEpilogue ep;
        ep.clamp = true, ep.lo = 0.0f, ep.hi = INFINITY;
        const std::vector<float> xb = blocked(x, n, c, h * wd);
        std::vector<float> yb(want.size());
        const bool was = ops::set_depthwise_nchwc_output_prefetch(t < 32);  // the last two: off
        ops::depthwise_nchwc(s, xb.data(), w.data(), bias.data(), &ep, yb.data(),
                             t % 2 ? &pool : nullptr);
        ops::set_depthwise_nchwc_output_prefetch(was);
        const std::vector<float> got = unblocked(yb, n, c, ho * wo);
        ASSERT_EQ(std::memcmp(got.data(), want.data(), want.size() * 4), 0)
            << "c " << c << " k " << k << " stride " << st << " " << h << "x" << wd;
    }
    ops::ConvShape s;
    s.c = 24, s.m = 24, s.group = 24;
    EXPECT_FALSE(ops::depthwise_nchwc_fits(s));
}

// 3x3 windows over every width from 1 to 19 (rows ending in groups of eight, four, two and one
// outputs), strides 1 and 2, paddings 0 to 2 at each side (the first or last output without a tap,
// or a single output without both, and patterns whole rows do not fit): whole rows
// (set_depthwise_nchwc_edges on) and the side outputs one at a time (off) give the chains' bits.
TEST_F(OpsNchwc, DepthwiseRowsWithTheirSideOutputsGiveTheChainsBits) {
    std::mt19937 rng(29);
    ThreadPool pool(2);
    for (int64_t wd = 1; wd <= 19; ++wd)
        for (int t = 0; t < 6; ++t) {
            const int64_t st = 1 + t % 2, p0 = t / 2, p1 = (t + wd) % 3, h = 3 + wd % 4;
            if (wd + p0 + p1 < 3) continue;  // no window fits
            const ops::ConvShape s = depthwise_shape(1, 16, h, wd, 3, st, p0, p1);
            const std::vector<float> x = test::random_floats(size_t(16 * h * wd), rng),
                                     w = test::random_floats(size_t(16 * 9), rng);
            const std::vector<float> want = depthwise_chains(s, x, w);
            const std::vector<float> xb = blocked(x, 1, 16, h * wd);
            for (const bool edges : {true, false}) {
                std::vector<float> yb(want.size(), std::nanf(""));
                const bool was = ops::set_depthwise_nchwc_edges(edges);
                ops::depthwise_nchwc(s, xb.data(), w.data(), nullptr, nullptr, yb.data(),
                                     wd % 2 ? &pool : nullptr);
                ops::set_depthwise_nchwc_edges(was);
                const std::vector<float> got = unblocked(yb, 1, 16, s.w.out[1] * s.w.out[2]);
                ASSERT_EQ(std::memcmp(got.data(), want.data(), want.size() * 4), 0)
                    << "width " << wd << " stride " << st << " pads " << p0 << "/" << p1
                    << " edges " << edges;
            }
        }
}

// Outputs streamed around the caches (64-byte aligned y, the default), written through them
// (switched off), and on a y one float off alignment (streaming skipped); the threads' work in
// bands of rows (set_depthwise_nchwc_row_bands, also with fewer rows than threads) or by block:
// the chains' bits every time, on 3x3 rows of runs of eight, other windows and two threads.
TEST_F(OpsNchwc, DepthwiseStreamedStoresGiveTheChainsBits) {
    std::mt19937 rng(23);
    ThreadPool pool(2), three(3);
    for (int t = 0; t < 14; ++t) {
        // The last two: 128 channels, one or two output rows over 201 columns (enough work for
        // the threads, fewer rows than threads).
        const int64_t c = t < 12 ? 16 * (1 + t % 3) : 128, k = t < 8 ? 3 : 1 + t % 4;
        const int64_t st = 1 + t % 2, n = t < 12 ? 1 + t % 2 : 1, p = std::min<int64_t>(1, k - 1);
        const int64_t wd = t < 12 ? 19 + 2 * t : 201, h = t < 12 ? 5 + t : k;
        const ops::ConvShape s = depthwise_shape(n, c, h, wd, k, st, p, p);
        const int64_t ho = s.w.out[1], wo = s.w.out[2];
        const std::vector<float> x = test::random_floats(size_t(n * c * h * wd), rng),
                                 w = test::random_floats(size_t(c * k * k), rng);
        const std::vector<float> want = depthwise_chains(s, x, w);
        const std::vector<float> xb = blocked(x, n, c, h * wd);
        for (const int mode : {0, 1, 2, 3}) {  // streamed, through the caches, misaligned;
                                               // 3: by block
            const AlignedArray<float> buf = aligned_array<float>(want.size() + 16);
            float* y = buf.get() + (mode == 2 ? 1 : 0);
            const bool was = ops::set_depthwise_nchwc_stream_stores(mode != 1);
            const bool bands = ops::set_depthwise_nchwc_row_bands(mode != 3);
            ops::depthwise_nchwc(s, xb.data(), w.data(), nullptr, nullptr, y,
                                 t % 2 ? &pool : &three);
            ops::set_depthwise_nchwc_stream_stores(was);
            ops::set_depthwise_nchwc_row_bands(bands);
            const std::vector<float> got =
                unblocked(std::vector<float>(y, y + want.size()), n, c, ho * wo);
            ASSERT_EQ(std::memcmp(got.data(), want.data(), want.size() * 4), 0)
                << "t " << t << " mode " << mode;
        }
    }
}

// Every part of the epilogue (bias, normalization, scale, shift, residual, a clamp on both
// sides) on 3x3 rows whose interior runs end in groups of eight, four, two and one outputs, and
// on a 5x5 window: the fused multiply-add chains with GemmEpilogue::apply, bit for bit.
TEST_F(OpsNchwc, DepthwiseEpilogueGivesApplysBits) {
    std::mt19937 rng(17);
    ThreadPool pool(2);
    for (int t = 0; t < 12; ++t) {
        const int64_t c = 16 * (1 + t % 3), k = t < 10 ? 3 : 5, st = 1 + t % 2, p = k / 2;
        const int64_t h = 6 + t % 4, wd = 9 + 2 * t + (st == 2 ? t % 3 : 0), n = 1;
        const ops::ConvShape s = depthwise_shape(n, c, h, wd, k, st, p, p);
        ASSERT_TRUE(ops::depthwise_nchwc_fits(s));
        const int64_t ho = s.w.out[1], wo = s.w.out[2], plane = ho * wo;
        const std::vector<float> x = test::random_floats(size_t(c * h * wd), rng),
                                 w = test::random_floats(size_t(c * k * k), rng),
                                 bias = test::random_floats(size_t(c), rng),
                                 mean = test::random_floats(size_t(c), rng),
                                 mul = test::random_floats(size_t(c), rng, 0.5f, 2.0f),
                                 add = test::random_floats(size_t(c), rng),
                                 scale = test::random_floats(size_t(c), rng, 0.5f, 2.0f),
                                 shift = test::random_floats(size_t(c), rng),
                                 res = test::random_floats(size_t(c * plane), rng);
        std::vector<float> want = depthwise_chains(s, x, w);
        ops::GemmEpilogue ep;
        ep.bias = bias.data(), ep.sub = mean.data(), ep.mul = mul.data(), ep.add = add.data();
        ep.scale = scale.data(), ep.shift = shift.data();
        ep.res = res.data(), ep.res_origin = want.data();
        ep.clamp = true, ep.lo = -0.5f, ep.hi = 0.5f;
        for (int64_t ch = 0; ch < c; ++ch) ep.apply(ch, want.data() + ch * plane, plane);
        const std::vector<float> xb = blocked(x, n, c, h * wd), rb = blocked(res, n, c, plane);
        std::vector<float> yb(want.size(), std::nanf(""));
        ops::GemmEpilogue kep = ep;
        kep.bias = nullptr, kep.res = rb.data(), kep.res_origin = yb.data();
        ops::depthwise_nchwc(s, xb.data(), w.data(), bias.data(), &kep, yb.data(),
                             t % 2 ? &pool : nullptr);
        const std::vector<float> got = unblocked(yb, n, c, plane);
        ASSERT_EQ(std::memcmp(got.data(), want.data(), want.size() * 4), 0)
            << "c " << c << " k " << k << " stride " << st << " " << h << "x" << wd;
    }
}

struct PoolCase {
    int64_t h, w, kh, kw, sh, sw, pt, pl, pb, pr;
    bool ceil;
};

ops::Window pool_window(const PoolCase& q) {
    ops::WindowAttrs wa;
    wa.strides = {q.sh, q.sw};
    wa.pads = {q.pt, q.pl, q.pb, q.pr};
    wa.ceil_mode = q.ceil;
    wa.kernel_shape = {q.kh, q.kw};
    return ops::make_window(wa, {q.h, q.w}, {q.kh, q.kw}, "Pool");
}

// Two and six blocks of two images: the work split by rows across the blocks and by block
// (nchwc_conv_splits_by_groups), and in claimed chunks (set_nchwc_pool_parts off); the outputs
// streamed, stored through the caches, and on a misaligned y (not streamed).
TEST_F(OpsNchwc, PoolsGiveThePlainPoolsBits) {
    ThreadPool pool(2);
    std::mt19937 rng(13);
    const int64_t n = 2;
    for (const auto& [c, parts] : {std::pair<int64_t, bool>{32, true}, {96, true}, {32, false}})
        for (const PoolCase& q : {PoolCase{9, 11, 3, 3, 2, 2, 1, 1, 1, 1, false},
                                  PoolCase{9, 11, 3, 3, 2, 2, 0, 0, 0, 0, true},
                                  PoolCase{7, 7, 2, 3, 1, 2, 1, 0, 0, 2, true},
                                  PoolCase{56, 56, 3, 3, 2, 2, 1, 1, 1, 1, false},
                                  PoolCase{5, 5, 5, 5, 1, 1, 2, 2, 2, 2, false},
                                  PoolCase{13, 21, 3, 5, 1, 1, 0, 2, 1, 2, true}}) {
            const ops::Window g = pool_window(q);
            std::vector<float> x = test::random_floats(size_t(n * c * q.h * q.w), rng);
            x[5] = std::nanf(""), x[40] = -0.0f, x[41] = std::numeric_limits<float>::infinity();
            const std::vector<float> xb = blocked(x, n, c, q.h * q.w);
            std::vector<float> want(size_t(n * c * g.out_size()));
            // Outputs streamed (aligned y), stored through the caches, and on a misaligned y.
            const AlignedArray<float> buf = aligned_array<float>(want.size() + 16);
            const auto out = [&](int mode) {
                return std::vector<float>(buf.get() + (mode == 2),
                                          buf.get() + (mode == 2) + want.size());
            };
            const bool before = ops::set_nchwc_pool_parts(parts);
            for (const int mode : {0, 1, 2}) {
                float* yb = buf.get() + (mode == 2 ? 1 : 0);
                const bool streamed = ops::set_nchwc_pool_stream_stores(mode != 1);
                ops::max_pool<float>(g, n * c, x.data(), want.data(), nullptr, false, nullptr);
                ops::max_pool_nchwc(g, n, c / 16, xb.data(), yb, &pool);
                std::vector<float> got = unblocked(out(mode), n, c, g.out_size());
                EXPECT_EQ(std::memcmp(got.data(), want.data(), want.size() * 4), 0)
                    << "max " << q.h << " c " << c << " parts " << parts << " mode " << mode;
                for (const bool include_pad : {false, true}) {
                    ops::avg_pool<float>(g, n * c, x.data(), want.data(), include_pad, nullptr);
                    ops::avg_pool_nchwc(g, n, c / 16, xb.data(), yb, include_pad, &pool);
                    got = unblocked(out(mode), n, c, g.out_size());
                    EXPECT_EQ(std::memcmp(got.data(), want.data(), want.size() * 4), 0)
                        << "avg " << q.h << " include_pad " << include_pad << " c " << c << " mode "
                        << mode;
                }
                ops::set_nchwc_pool_stream_stores(streamed);
            }
            ops::set_nchwc_pool_parts(before);
        }
}

TEST_F(OpsNchwc, GlobalPoolsGiveThePlainPoolsBits) {
    std::mt19937 rng(14);
    ThreadPool pool(2);
    const int64_t n = 2, c = 64, plane = 49;
    std::vector<float> x = test::random_floats(size_t(n * c * plane), rng);
    x[3] = std::nanf("");
    const std::vector<float> xb = blocked(x, n, c, plane);
    for (const bool max : {false, true}) {
        std::vector<float> want(size_t(n * c)), yb(want.size());
        ops::global_pool_planes<float>(x.data(), want.data(), n * c, plane, max ? 0 : 1, 2.0);
        ops::global_pool_nchwc(n, c / 16, plane, xb.data(), yb.data(), max, &pool);
        const std::vector<float> got = unblocked(yb, n, c, 1);
        EXPECT_EQ(std::memcmp(got.data(), want.data(), want.size() * 4), 0) << max;
    }
}

// Every combination of the fused Mul / Add / Relu, with NaN, -0, infinities and values that
// the Relu clamps; factors per channel differ, so a lane in the wrong channel shows.
TEST_F(OpsNchwc, BatchNormGivesThePlainKernelsBits) {
    std::mt19937 rng(21);
    ThreadPool pool(2);
    const int64_t n = 2, c = 48, h = 9, w = 7, plane = h * w;
    std::vector<float> x = test::random_floats(size_t(n * c * plane), rng);
    x[3] = std::nanf(""), x[70] = -0.0f, x[71] = std::numeric_limits<float>::infinity();
    x[200] = -std::numeric_limits<float>::infinity();
    const Tensor xt = Tensor::from_values(DataType::kFloat32, {n, c, h, w}, x);
    const std::vector<float> xb = blocked(x, n, c, plane);
    std::vector<float> scale = test::random_floats(size_t(c), rng), bias = scale, mean = scale,
                       var = scale, mul = scale, add = scale;
    for (auto* v : {&bias, &mean, &mul, &add}) *v = test::random_floats(size_t(c), rng);
    for (float& v : var) v = std::fabs(v) + 0.25f;
    for (int mode = 0; mode < 8; ++mode) {
        const bool relu = mode & 1, post_mul = mode & 2, post_add = mode & 4;
        std::vector<float> want(x.size()), yb(x.size());
        ops::batch_norm_fast(xt, scale.data(), bias.data(), mean.data(), var.data(), 1e-3,
                             want.data(), nullptr, relu, post_mul ? mul.data() : nullptr,
                             post_add ? add.data() : nullptr);
        const ops::BlockedNorm a{scale.data(),
                                 bias.data(),
                                 mean.data(),
                                 var.data(),
                                 1e-3,
                                 post_mul ? mul.data() : nullptr,
                                 post_add ? add.data() : nullptr,
                                 relu};
        ops::batch_norm_nchwc(a, n, c / 16, plane, xb.data(), yb.data(), &pool);
        const std::vector<float> got = unblocked(yb, n, c, plane);
        EXPECT_EQ(std::memcmp(got.data(), want.data(), want.size() * 4), 0) << "mode " << mode;
    }
}

}  // namespace
}  // namespace pg
