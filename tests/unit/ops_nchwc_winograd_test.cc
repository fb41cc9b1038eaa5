// The blocked Winograd F(2x2, 3x3) (ops/nchwc_winograd.h): against conv_reference on blocked
// inputs of odd and even sizes, pads 0-2 on each side, batches, 1-9 output blocks (groups of 1 to
// 4, and of 1 or 2 with many input channels), input channels in whole and partial slices of 64,
// one band and many; the same bits on one thread and two, with the filters' taps gathered and
// without the input fetched ahead; the fused epilogue as GemmEpilogue::apply on the finished
// output; which Convs it takes and where the blocked path uses it. Skipped where the CPU has no
// AVX-512.
#include <gtest/gtest.h>

#include <cmath>
#include <initializer_list>
#include <limits>
#include <random>
#include <vector>

#include "base/aligned.h"
#include "base/error.h"
#include "base/thread_pool.h"
#include "ops/conv_kernels.h"
#include "ops/nchwc.h"
#include "ops/nchwc_winograd.h"
#include "support/float_error.h"
#include "support/nchwc_values.h"
#include "support/random_values.h"

namespace pg {
namespace {

class OpsNchwcWinograd : public ::testing::Test {
  protected:
    void SetUp() override {
        if (!ops::nchwc_available()) GTEST_SKIP() << "no AVX-512 on this CPU";
    }
};

struct Case {
    int64_t n, c, m, h, w, pt, pl, pb, pr;
};

ops::ConvShape shape_of(const Case& k, int64_t kernel = 3, int64_t stride = 1, int64_t dil = 1) {
    ops::WindowAttrs wa;
    wa.pads = {k.pt, k.pl, k.pb, k.pr};
    wa.strides = {stride, stride}, wa.dilations = {dil, dil};
    ops::ConvShape s;
    s.n = k.n, s.c = k.c, s.m = k.m;
    s.w = ops::make_window(wa, {k.h, k.w}, {kernel, kernel}, "Conv");
    return s;
}

using test::blocked;
using test::unblocked;

struct ConvData {
    std::vector<float> x, xb, w, b;
};

ConvData random_conv(const ops::ConvShape& s, std::mt19937& rng) {
    ConvData d;
    d.x = test::random_floats(size_t(s.n * s.c * s.w.in_size()), rng);
    d.xb = blocked(d.x, s.n, s.c, s.w.in_size());
    d.w = test::random_floats(size_t(s.m * s.c * 9), rng);
    d.b = test::random_floats(size_t(s.m), rng);
    return d;
}

// Winograd's plain (NCHW) output, NaN-filled first so that a value never written shows.
std::vector<float> winograd(const ops::ConvShape& s, const ConvData& d, const float* bias,
                            const ops::GemmEpilogue* ep, ThreadPool* pool) {
    std::vector<float> y(size_t(s.n * s.m * s.w.out_size()),
                         std::numeric_limits<float>::quiet_NaN());
    ops::conv_nchwc_winograd(s, d.xb.data(), d.w.data(), bias, ep, y.data(), pool);
    return unblocked(y, s.n, s.m, s.w.out_size());
}

// winograd() with the bias, no epilogue, and one of the kernel's switches set to `on` (its setting
// restored after): switches change how the work is done, never the values.
std::vector<float> winograd_switched(bool (*set)(bool), bool on, const ops::ConvShape& s,
                                     const ConvData& d, ThreadPool* pool) {
    const bool was = set(on);
    std::vector<float> y = winograd(s, d, d.b.data(), nullptr, pool);
    set(was);
    return y;
}

// For each case, random data (from `seed`) run with the switch on and off on two threads: the
// same bits expected.
void expect_switch_keeps_bits(bool (*set)(bool), unsigned seed, std::initializer_list<Case> cases) {
    std::mt19937 rng(seed);
    ThreadPool two(2);
    for (const Case& k : cases) {
        const ops::ConvShape s = shape_of(k);
        const ConvData d = random_conv(s, rng);
        EXPECT_EQ(winograd_switched(set, true, s, d, &two),
                  winograd_switched(set, false, s, d, &two))
            << "c " << k.c << ", m " << k.m;
    }
}

using test::worst_relative_error;

TEST_F(OpsNchwcWinograd, MatchesReferenceOnTheGeometriesItTakes) {
    // Odd sizes (partial last tiles), pads 0-2 and asymmetric, batches, many bands (30 x 44),
    // 1-9 output blocks, 16 to 528 input channels (slices of 64 and a partial one; groups of
    // one block at 528), and a map smaller than a tile.
    const Case cases[] = {{1, 16, 16, 20, 20, 1, 1, 1, 1},  {1, 32, 48, 21, 19, 1, 1, 1, 1},
                          {2, 64, 64, 13, 13, 1, 1, 1, 1},  {1, 80, 144, 15, 17, 0, 0, 0, 0},
                          {1, 64, 32, 25, 22, 2, 0, 1, 2},  {1, 48, 80, 30, 44, 1, 1, 1, 1},
                          {1, 528, 32, 14, 14, 1, 1, 1, 1}, {1, 272, 96, 9, 11, 1, 1, 1, 1},
                          {2, 16, 112, 3, 2, 2, 2, 2, 2},   {1, 128, 64, 28, 28, 1, 1, 1, 1},
                          {1, 16, 16, 1, 1, 1, 1, 1, 1}};
    std::mt19937 rng(31);
    ThreadPool pool(2);
    for (size_t t = 0; t < std::size(cases); ++t) {
        const ops::ConvShape s = shape_of(cases[t]);
        ASSERT_TRUE(ops::nchwc_winograd_takes(s)) << "case " << t;
        const ConvData d = random_conv(s, rng);
        const float* bias = t % 2 ? d.b.data() : nullptr;
        std::vector<float> ref(size_t(s.n * s.m * s.w.out_size()));
        ops::conv_reference(s, d.x.data(), d.w.data(), bias, ref.data());
        // The direct sums' bound (ops_conv_winograd_test) for the same reduction length.
        const double tol = 1e-5 * std::sqrt(double(s.c * 9) + 1);
        EXPECT_LE(worst_relative_error(winograd(s, d, bias, nullptr, &pool), ref), tol)
            << "case " << t;
        EXPECT_LE(worst_relative_error(winograd(s, d, bias, nullptr, nullptr), ref), tol)
            << "case " << t;
    }
}

// Each output's sums run over the input channels in order whatever the groups and parts, so the
// thread count (which sets them) does not change a bit; nor does a second call (the scratch
// kept from call to call).
TEST_F(OpsNchwcWinograd, ThreadsAndRepeatedCallsGiveTheSameBits) {
    std::mt19937 rng(5);
    ThreadPool two(2);
    for (const Case& k :
         {Case{1, 96, 192, 30, 26, 1, 1, 1, 1}, Case{2, 64, 48, 17, 14, 1, 1, 1, 1}}) {
        const ops::ConvShape s = shape_of(k);
        const ConvData d = random_conv(s, rng);
        const std::vector<float> one = winograd(s, d, d.b.data(), nullptr, nullptr);
        EXPECT_EQ(one, winograd(s, d, d.b.data(), nullptr, &two)) << k.m;
        EXPECT_EQ(one, winograd(s, d, d.b.data(), nullptr, &two)) << k.m;
    }
}

// A thread keeps the filters it transformed while it runs more of the same call's units (its
// chunks and stolen tails): a second call with other weights of the same shape must not reuse
// them.
TEST_F(OpsNchwcWinograd, ACallWithOtherWeightsTransformsItsOwnFilters) {
    std::mt19937 rng(23);
    ThreadPool two(2);
    const ops::ConvShape s = shape_of(Case{1, 64, 128, 28, 28, 1, 1, 1, 1});
    const ConvData first = random_conv(s, rng), second = random_conv(s, rng);
    const std::vector<float> alone = winograd(s, second, nullptr, nullptr, nullptr);
    winograd(s, first, nullptr, nullptr, &two);
    EXPECT_EQ(alone, winograd(s, second, nullptr, nullptr, &two));
    winograd(s, first, nullptr, nullptr, nullptr);
    EXPECT_EQ(alone, winograd(s, second, nullptr, nullptr, nullptr));
}

// The filter transform reads 16 input channels' taps through transposes or one gather per tap:
// the same values either way (one block, groups of one to four blocks, 16 to 528 channels).
TEST_F(OpsNchwcWinograd, TransposedAndGatheredFiltersGiveTheSameBits) {
    expect_switch_keeps_bits(
        ops::set_nchwc_winograd_transposed_filters, 17,
        {Case{1, 16, 16, 14, 14, 1, 1, 1, 1}, Case{1, 48, 144, 13, 15, 1, 1, 1, 1},
         Case{1, 528, 32, 14, 14, 1, 1, 1, 1}, Case{2, 64, 80, 9, 9, 0, 0, 0, 0}});
}

// The filter transform fetching its weight rows' lines a few blocks ahead (set_pack_prefetch_ahead,
// the default) or not: the same values (16 to 528 channels, the last fetches past the weights).
TEST_F(OpsNchwcWinograd, FiltersFetchedAheadOrNotGiveTheSameBits) {
    expect_switch_keeps_bits(
        ops::set_pack_prefetch_ahead, 29,
        {Case{1, 16, 16, 14, 14, 1, 1, 1, 1}, Case{1, 528, 32, 14, 14, 1, 1, 1, 1}});
}

// The input transform fetching the next block's lines ahead and the output transform the output
// and residual lines two tiles ahead, or not: the same values (several blocks per slice, pads 0-2
// and odd maps, so that the fetched rows and columns clamp at the edges; a residual epilogue).
TEST_F(OpsNchwcWinograd, PrefetchesGiveTheSameBits) {
    std::mt19937 rng(19);
    ThreadPool two(2);
    for (const Case& k : {Case{1, 64, 64, 13, 15, 1, 1, 1, 1}, Case{1, 96, 32, 17, 9, 2, 0, 1, 2},
                          Case{2, 48, 48, 10, 10, 0, 0, 0, 0}}) {
        const ops::ConvShape s = shape_of(k);
        const ConvData d = random_conv(s, rng);
        const std::vector<float> res = test::random_floats(size_t(s.n * s.m * s.w.out_size()), rng);
        const std::vector<float> rb = blocked(res, s.n, s.m, s.w.out_size());
        std::vector<float> y(res.size());
        ops::GemmEpilogue ep;
        ep.res = rb.data(), ep.res_origin = y.data();
        auto run = [&](bool in, bool out) {
            const bool was_in = ops::set_nchwc_winograd_input_prefetch(in);
            const bool was_out = ops::set_nchwc_winograd_output_prefetch(out);
            ops::conv_nchwc_winograd(s, d.xb.data(), d.w.data(), d.b.data(), &ep, y.data(), &two);
            ops::set_nchwc_winograd_input_prefetch(was_in);
            ops::set_nchwc_winograd_output_prefetch(was_out);
            return y;
        };
        const std::vector<float> ahead = run(true, true);
        EXPECT_EQ(ahead, run(false, false)) << "c " << k.c << ", m " << k.m;
        EXPECT_EQ(ahead, run(true, false)) << "c " << k.c << ", m " << k.m;
    }
}

// The output transform's stores streamed (64-byte aligned y, the default), through the caches
// (switched off) and on a misaligned y (not streamed), with a residual epilogue on two threads:
// the same bits.
TEST_F(OpsNchwcWinograd, StreamedStoresGiveTheSameBits) {
    std::mt19937 rng(29);
    ThreadPool two(2);
    for (const Case& k :
         {Case{1, 64, 64, 13, 15, 1, 1, 1, 1}, Case{2, 48, 96, 10, 11, 0, 1, 2, 0}}) {
        const ops::ConvShape s = shape_of(k);
        const ConvData d = random_conv(s, rng);
        const size_t size = size_t(s.n * s.m * s.w.out_size());
        const std::vector<float> rb = test::random_floats(size, rng);
        std::vector<std::vector<float>> got;
        for (const int mode : {0, 1, 2}) {  // streamed, through the caches, misaligned
            const AlignedArray<float> buf = aligned_array<float>(size + 16);
            float* y = buf.get() + (mode == 2 ? 1 : 0);
            ops::GemmEpilogue ep;
            ep.res = rb.data(), ep.res_origin = y;
            const bool was = ops::set_nchwc_winograd_stream_stores(mode != 1);
            ops::conv_nchwc_winograd(s, d.xb.data(), d.w.data(), d.b.data(), &ep, y, &two);
            ops::set_nchwc_winograd_stream_stores(was);
            got.emplace_back(y, y + size);
        }
        EXPECT_EQ(got[0], got[1]) << "c " << k.c << ", m " << k.m;
        EXPECT_EQ(got[0], got[2]) << "c " << k.c << ", m " << k.m;
    }
}

// Bias, BatchNormalization, a per-channel Mul and Add, a residual and a clamp fused: the values of
// the unfused result with GemmEpilogue::apply on each output channel afterwards.
TEST_F(OpsNchwcWinograd, EpilogueIsApplyOnTheFinishedOutput) {
    const ops::ConvShape s = shape_of({1, 64, 80, 19, 21, 1, 1, 1, 1});
    std::mt19937 rng(8);
    const ConvData d = random_conv(s, rng);
    const auto sub = test::random_floats(80, rng), mul = test::random_floats(80, rng),
               add = test::random_floats(80, rng), scale = test::random_floats(80, rng),
               shift = test::random_floats(80, rng);
    const int64_t os = s.w.out_size();
    const auto res = test::random_floats(size_t(80 * os), rng);
    const std::vector<float> res_b = blocked(res, 1, 80, os);
    for (const float hi : {std::numeric_limits<float>::infinity(), 0.5f}) {
        ops::GemmEpilogue ep;
        ep.sub = sub.data(), ep.mul = mul.data(), ep.add = add.data();
        ep.scale = scale.data(), ep.shift = shift.data();
        ep.clamp = true, ep.lo = 0.0f, ep.hi = hi;
        std::vector<float> yb(size_t(80 * os));
        ep.res = res_b.data(), ep.res_origin = yb.data();
        ThreadPool pool(2);
        ops::conv_nchwc_winograd(s, d.xb.data(), d.w.data(), d.b.data(), &ep, yb.data(), &pool);
        const std::vector<float> fused = unblocked(yb, 1, 80, os);
        std::vector<float> plain = winograd(s, d, nullptr, nullptr, &pool);
        ep.bias = d.b.data(), ep.res = res.data(), ep.res_origin = plain.data();
        for (int64_t k = 0; k < 80; ++k) ep.apply(k, plain.data() + k * os, os);
        for (size_t i = 0; i < plain.size(); ++i) ASSERT_EQ(fused[i], plain[i]) << "at " << i;
    }
}

// conv_fast on plain tensors takes it where it pays (reordering x in and y out): the bits of the
// blocked call; switched off, the plain path's own sums.
TEST_F(OpsNchwcWinograd, ConvFastTakesItForPlainTensors) {
    const ops::ConvShape s = shape_of({2, 64, 64, 17, 15, 1, 1, 1, 1});
    ASSERT_TRUE(ops::nchwc_winograd_pays(s));
    std::mt19937 rng(9);
    const ConvData d = random_conv(s, rng);
    ops::GemmEpilogue ep;
    ep.clamp = true, ep.lo = 0.0f, ep.hi = 6.0f;
    ThreadPool pool(2);
    std::vector<float> plain(size_t(s.n * s.m * s.w.out_size()));
    ops::conv_fast(s, d.x.data(), d.w.data(), d.b.data(), plain.data(), &pool, &ep);
    std::vector<float> yb(plain.size());
    ops::conv_nchwc_winograd(s, d.xb.data(), d.w.data(), d.b.data(), &ep, yb.data(), &pool);
    EXPECT_EQ(plain, unblocked(yb, s.n, s.m, s.w.out_size()));
    const bool was = ops::set_nchwc_winograd(false);
    std::vector<float> direct(plain.size());
    ops::conv_fast(s, d.x.data(), d.w.data(), d.b.data(), direct.data(), &pool, &ep);
    ops::set_nchwc_winograd(was);
    EXPECT_NE(direct, plain);
    for (size_t i = 0; i < plain.size(); ++i)
        ASSERT_NEAR(direct[i], plain[i],
                    1e-5 * std::sqrt(64.0 * 9 + 1) * (1 + std::fabs(direct[i])));
}

TEST_F(OpsNchwcWinograd, TakesOnlyWhatItRunsAndPaysFrom13x13Maps) {
    const Case base{1, 64, 64, 28, 28, 1, 1, 1, 1};
    EXPECT_TRUE(ops::nchwc_winograd_takes(shape_of(base)));
    EXPECT_FALSE(ops::nchwc_winograd_takes(shape_of(base, 3, 2)));     // stride 2
    EXPECT_FALSE(ops::nchwc_winograd_takes(shape_of(base, 3, 1, 2)));  // dilation 2
    EXPECT_FALSE(ops::nchwc_winograd_takes(shape_of(base, 5)));        // 5x5
    EXPECT_FALSE(ops::nchwc_winograd_takes(shape_of(base, 1)));        // 1x1
    EXPECT_FALSE(ops::nchwc_winograd_takes(shape_of({1, 64, 64, 28, 28, 3, 1, 1, 1})));  // pad 3
    EXPECT_FALSE(ops::nchwc_winograd_takes(shape_of({1, 24, 64, 28, 28, 1, 1, 1, 1})));  // ragged
    EXPECT_TRUE(ops::nchwc_winograd_takes(shape_of({1, 16, 16, 1, 4096, 1, 1, 1, 1})));
    EXPECT_FALSE(ops::nchwc_winograd_takes(shape_of({1, 16, 16, 1, 4097, 1, 1, 1, 1})));  // wide
    ops::ConvShape grouped = shape_of(base);
    grouped.group = 2;
    EXPECT_FALSE(ops::nchwc_winograd_takes(grouped));
    EXPECT_THROW(ops::conv_nchwc_winograd(shape_of(base, 5), nullptr, nullptr, nullptr, nullptr,
                                          nullptr, nullptr),
                 Error);
    EXPECT_TRUE(ops::nchwc_winograd_pays(shape_of(base)));
    EXPECT_TRUE(ops::nchwc_winograd_pays(shape_of({1, 64, 256, 13, 13, 1, 1, 1, 1})));
    EXPECT_FALSE(ops::nchwc_winograd_pays(shape_of({1, 512, 512, 7, 7, 1, 1, 1, 1})));
    EXPECT_FALSE(ops::nchwc_winograd_pays(shape_of({1, 128, 32, 56, 56, 1, 1, 1, 1})));
    const bool was = ops::set_nchwc_winograd(false);
    EXPECT_FALSE(ops::nchwc_winograd_pays(shape_of(base)));
    ops::set_nchwc_winograd(was);
}

}  // namespace
}  // namespace pg
