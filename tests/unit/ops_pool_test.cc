// Pooling: window geometry (pads, ceil_mode, dilations), indices, divisors, unpooling.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include <limits>
#include <random>

#include "base/error.h"
#include "base/thread_pool.h"
#include "ir/builder.h"
#include "ops/pool_kernels.h"
#include "ops/pool_max_separable.h"
#include "runtime/session.h"
#include "support/gemm_isa.h"
#include "support/op_runner.h"

namespace pg {
namespace {

using ir::Attribute;
using test::f32;
using test::run_op;
using test::values_f32;

const Tensor k4x4 = f32({1, 1, 4, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});

// The float32 fast paths give exactly the reference's values on random geometries (1-D..3-D,
// strides, dilations, pads, ceil mode, count_include_pad), single- and multi-threaded.
TEST(OpsPool, FastPoolsMatchReferenceOnRandomGeometries) {
    std::mt19937 rng(3);
    auto pick = [&](int64_t lo, int64_t hi) {
        return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
    };
    std::uniform_real_distribution<float> val(-1.0f, 1.0f);
    ThreadPool pool(2);
    for (int t = 0; t < 150; ++t) {
        const int nd = 1 + t % 3;
        ops::WindowAttrs wa;
        std::vector<int64_t> in;
        for (int i = 0; i < nd; ++i) {
            wa.kernel_shape.push_back(pick(1, 4));
            wa.strides.push_back(pick(1, 3));
            wa.dilations.push_back(t % 5 == 0 ? pick(1, 2) : 1);
            in.push_back(
                pick((wa.kernel_shape.back() - 1) * wa.dilations.back() + 1, nd == 3 ? 8 : 20));
        }
        for (int i = 0; i < 2 * nd; ++i) wa.pads.push_back(pick(0, wa.kernel_shape[i % nd] - 1));
        wa.ceil_mode = t % 2 == 1;
        const ops::Window g = ops::make_window(wa, in, wa.kernel_shape, "MaxPool");
        const int64_t planes = pick(1, 6);
        std::vector<float> x(size_t(planes * g.in_size()));
        for (float& e : x) e = val(rng);
        const size_t ny = size_t(planes * g.out_size());
        ThreadPool* p = t % 3 ? &pool : nullptr;
        std::vector<float> fast(ny, std::numeric_limits<float>::quiet_NaN()), ref = fast;
        ops::max_pool_fast(g, planes, x.data(), fast.data(), p);
        ops::max_pool(g, planes, x.data(), ref.data(), nullptr, false, nullptr);
        for (size_t i = 0; i < ny; ++i) ASSERT_EQ(fast[i], ref[i]) << "max, case " << t;
        const bool include_pad = t % 4 < 2;
        ops::avg_pool_fast(g, planes, x.data(), fast.data(), include_pad, p);
        ops::avg_pool(g, planes, x.data(), ref.data(), include_pad, nullptr);
        for (size_t i = 0; i < ny; ++i) ASSERT_EQ(fast[i], ref[i]) << "avg, case " << t;
    }
}

// Wide rows (several eight-wide vector runs, strides 1 and 2) with NaNs among the inputs: the fast
// max and average pools keep the reference's values bit for bit (a NaN first tap stays).
TEST(OpsPool, FastPoolsMatchReferenceOnWideRowsWithNaN) {
    std::mt19937 rng(8);
    std::uniform_real_distribution<float> val(-1.0f, 1.0f);
    for (int64_t stride : {1, 2})
        for (int64_t pad : {0, 1}) {
            ops::WindowAttrs wa;
            wa.kernel_shape = {3, 3}, wa.strides = {stride, stride}, wa.pads = {pad, pad, pad, pad};
            const ops::Window g = ops::make_window(wa, {9, 45}, wa.kernel_shape, "MaxPool");
            std::vector<float> x(size_t(3 * g.in_size()));
            for (size_t i = 0; i < x.size(); ++i)
                x[i] = i % 37 == 5 ? std::numeric_limits<float>::quiet_NaN() : val(rng);
            const size_t ny = size_t(3 * g.out_size());
            std::vector<float> fast(ny), ref(ny);
            ops::max_pool_fast(g, 3, x.data(), fast.data(), nullptr);
            ops::max_pool(g, 3, x.data(), ref.data(), nullptr, false, nullptr);
            EXPECT_EQ(std::memcmp(fast.data(), ref.data(), ny * sizeof(float)), 0) << stride;
            ops::avg_pool_fast(g, 3, x.data(), fast.data(), pad == 1, nullptr);
            ops::avg_pool(g, 3, x.data(), ref.data(), pad == 1, nullptr);
            EXPECT_EQ(std::memcmp(fast.data(), ref.data(), ny * sizeof(float)), 0) << stride;
        }
}

// 2-D max pools through SeparableMax: kernels up to 7x7, strides 1-4, pads up to the kernel,
// ceil mode, planes of signed zeros, -inf and NaN (a plane with a NaN takes the exact loops),
// bit for bit against the reference, and the same with the separable path off.
TEST(OpsPool, SeparableMaxPoolMatchesReferenceOnRandomShapes) {
    std::mt19937 rng(21);
    auto pick = [&](int64_t lo, int64_t hi) {
        return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
    };
    std::uniform_real_distribution<float> val(-1.0f, 1.0f);
    ThreadPool pool(2);
    for (int t = 0; t < 120; ++t) {
        ops::WindowAttrs wa;
        wa.kernel_shape = {pick(1, 7), pick(1, 7)}, wa.strides = {pick(1, 4), pick(1, 4)};
        for (int i = 0; i < 4; ++i) wa.pads.push_back(pick(0, wa.kernel_shape[i % 2] - 1));
        wa.ceil_mode = t % 2 == 1;
        std::vector<int64_t> in = {pick(wa.kernel_shape[0], 40), pick(wa.kernel_shape[1], 70)};
        if (wa.strides[0] > 1 || wa.strides[1] > 1)  // strided: small planes only
            in = {pick(wa.kernel_shape[0], 24), pick(wa.kernel_shape[1], 40)};
        const ops::Window g = ops::make_window(wa, in, wa.kernel_shape, "MaxPool");
        ASSERT_TRUE(ops::SeparableMax::fits(g)) << "case " << t;
        const int64_t planes = pick(1, 5);
        std::vector<float> x(size_t(planes * g.in_size()));
        for (size_t i = 0; i < x.size(); ++i) {
            const int64_t plane = int64_t(i) / g.in_size();
            x[i] = t % 4 == 0 && plane == 1 && i % 17 == 2 ? std::numeric_limits<float>::quiet_NaN()
                   : t % 4 == 1                            ? (rng() % 2 ? 0.0f : -0.0f)
                   : t % 4 == 2 && i % 5 == 0              ? -std::numeric_limits<float>::infinity()
                                                           : val(rng);
        }
        const size_t ny = size_t(planes * g.out_size());
        std::vector<float> ref(ny, 8.0f);
        ops::max_pool(g, planes, x.data(), ref.data(), nullptr, false, nullptr);
        for (bool on : {true, false})
            test::for_each_gemm_isa([&] {  // the separable builds follow the GEMM ISA
                const bool before = ops::set_separable_max_pool(on);
                std::vector<float> fast(ny, 7.0f);
                ops::max_pool_fast(g, planes, x.data(), fast.data(), t % 2 ? &pool : nullptr);
                ops::set_separable_max_pool(before);
                ASSERT_EQ(std::memcmp(fast.data(), ref.data(), ny * sizeof(float)), 0)
                    << "case " << t << (on ? " separable" : " exact loops");
            });
    }
    ops::WindowAttrs wa;  // a large strided plane stays with the exact loops
    wa.kernel_shape = {3, 3}, wa.strides = {2, 2};
    EXPECT_FALSE(ops::SeparableMax::fits(ops::make_window(wa, {109, 109}, {3, 3}, "MaxPool")));
    wa.strides = {1, 1};
    EXPECT_TRUE(ops::SeparableMax::fits(ops::make_window(wa, {109, 109}, {3, 3}, "MaxPool")));
    EXPECT_FALSE(ops::SeparableMax::fits(ops::make_window(wa, {300, 300}, {3, 3}, "MaxPool")));
}

// 2-D 3x3 max pools (the nine-taps-at-once rows): random sizes, strides 1-2 per axis, pads 0-2,
// ceil mode, NaNs or signed zeros among the inputs, bit for bit against the reference.
TEST(OpsPool, FastMax3x3MatchesReferenceOnRandomShapes) {
    std::mt19937 rng(13);
    auto pick = [&](int64_t lo, int64_t hi) {
        return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
    };
    std::uniform_real_distribution<float> val(-1.0f, 1.0f);
    ThreadPool pool(2);
    for (int t = 0; t < 80; ++t) {
        ops::WindowAttrs wa;
        wa.kernel_shape = {3, 3}, wa.strides = {pick(1, 2), pick(1, 2)};
        wa.pads = {pick(0, 2), pick(0, 2), pick(0, 2), pick(0, 2)};
        wa.ceil_mode = t % 2 == 1;
        const ops::Window g = ops::make_window(wa, {pick(3, 20), pick(3, 60)}, {3, 3}, "MaxPool");
        const int64_t planes = pick(1, 5);
        std::vector<float> x(size_t(planes * g.in_size()));
        for (size_t i = 0; i < x.size(); ++i)
            x[i] = t % 3 == 0 && i % 29 == 3 ? std::numeric_limits<float>::quiet_NaN()
                   : t % 3 == 1              ? (rng() % 2 ? 0.0f : -0.0f)  // ties of signed zeros
                                             : val(rng);
        const size_t ny = size_t(planes * g.out_size());
        std::vector<float> fast(ny, 7.0f), ref(ny, 8.0f);
        ops::max_pool_fast(g, planes, x.data(), fast.data(), t % 2 ? &pool : nullptr);
        ops::max_pool(g, planes, x.data(), ref.data(), nullptr, false, nullptr);
        ASSERT_EQ(std::memcmp(fast.data(), ref.data(), ny * sizeof(float)), 0) << "case " << t;
    }
}

// 2-D average pools (the all-taps-at-once interior rows): random kernels up to 7x7, strides 1-3,
// dilations, pads, ceil mode and both divisors, with NaNs and negative zeros among the inputs,
// bit for bit against the reference (the kernel-sized input is ShuffleNet's 7x7 global pool).
TEST(OpsPool, FastAvg2dMatchesReferenceOnRandomShapes) {
    std::mt19937 rng(14);
    auto pick = [&](int64_t lo, int64_t hi) {
        return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
    };
    std::uniform_real_distribution<float> val(-1.0f, 1.0f);
    ThreadPool pool(2);
    for (int t = 0; t < 150; ++t) {
        ops::WindowAttrs wa;
        const int64_t kh = pick(1, t % 4 ? 4 : 7), kw = pick(1, t % 4 ? 4 : 7);
        wa.kernel_shape = {kh, kw}, wa.strides = {pick(1, 3), pick(1, 3)};
        wa.dilations = {t % 5 == 0 ? pick(1, 2) : 1, t % 7 == 0 ? pick(1, 2) : 1};
        wa.pads = {pick(0, kh - 1), pick(0, kw - 1), pick(0, kh - 1), pick(0, kw - 1)};
        wa.ceil_mode = t % 2 == 1;
        std::vector<int64_t> in = {pick((kh - 1) * wa.dilations[0] + 1, 20),
                                   pick((kw - 1) * wa.dilations[1] + 1, 70)};
        if (t % 10 == 9) in = {kh, kw}, wa.pads = {0, 0, 0, 0}, wa.dilations = {1, 1};
        const ops::Window g = ops::make_window(wa, in, wa.kernel_shape, "AveragePool");
        const int64_t planes = pick(1, 5);
        std::vector<float> x(size_t(planes * g.in_size()));
        for (size_t i = 0; i < x.size(); ++i)
            x[i] = t % 3 == 0 && i % 31 == 3 ? std::numeric_limits<float>::quiet_NaN()
                   : t % 3 == 1              ? -0.0f
                                             : val(rng);
        const size_t ny = size_t(planes * g.out_size());
        const bool include_pad = t % 4 < 2;
        std::vector<float> fast(ny, 7.0f), ref(ny, 8.0f);
        ops::avg_pool_fast(g, planes, x.data(), fast.data(), include_pad, t % 2 ? &pool : nullptr);
        ops::avg_pool(g, planes, x.data(), ref.data(), include_pad, nullptr);
        ASSERT_EQ(std::memcmp(fast.data(), ref.data(), ny * sizeof(float)), 0) << "case " << t;
    }
}

// Windows with no tap inside the input (1x1 kernels over pads of 1): NaN without
// count_include_pad, 0 with it, as the reference gives.
TEST(OpsPool, FastAvgPoolWindowsInsideThePadding) {
    std::mt19937 rng(15);
    std::uniform_real_distribution<float> val(-1.0f, 1.0f);
    for (const bool include_pad : {false, true})
        for (const int64_t stride : {1, 2}) {
            ops::WindowAttrs wa;
            wa.kernel_shape = {1, 1}, wa.strides = {stride, stride}, wa.pads = {1, 1, 1, 1};
            const ops::Window g = ops::make_window(wa, {5, 11}, wa.kernel_shape, "AveragePool");
            std::vector<float> x(size_t(2 * g.in_size()));
            for (float& e : x) e = val(rng);
            const size_t ny = size_t(2 * g.out_size());
            std::vector<float> fast(ny, 7.0f), ref(ny, 8.0f);
            ops::avg_pool_fast(g, 2, x.data(), fast.data(), include_pad, nullptr);
            ops::avg_pool(g, 2, x.data(), ref.data(), include_pad, nullptr);
            EXPECT_EQ(std::isnan(ref[0]), !include_pad);
            EXPECT_EQ(std::memcmp(fast.data(), ref.data(), ny * sizeof(float)), 0)
                << include_pad << " " << stride;
        }
}

TEST(OpsPool, MaxPoolWithIndicesRowAndColumnMajor) {
    auto attrs = [](int order) {
        return ir::attrs(Attribute::make_ints("kernel_shape", {2, 2}),
                         Attribute::make_ints("strides", {2, 2}),
                         Attribute::make_int("storage_order", order));
    };
    auto out = run_op("MaxPool", {k4x4}, attrs(0), 12, 2);
    EXPECT_EQ(values_f32(out[0]), (std::vector<float>{6, 8, 14, 16}));
    EXPECT_EQ(out[1].data<int64_t>()[1], 7);
    auto col = run_op("MaxPool", {k4x4}, attrs(1), 12, 2);
    EXPECT_EQ(col[1].data<int64_t>()[1], 3 * 4 + 1);  // (h=1, w=3) column-major
}

TEST(OpsPool, CeilModeDropsWindowStartingInEndPadding) {
    // in 4, kernel 2, stride 2, pad end 1: ceil gives 3 windows, the last starts at 4 (padding).
    auto out = run_op(
        "MaxPool", {f32({1, 1, 4}, {1, 2, 3, 4})},
        ir::attrs(Attribute::make_ints("kernel_shape", {2}), Attribute::make_ints("strides", {2}),
                  Attribute::make_ints("pads", {0, 1}), Attribute::make_int("ceil_mode", 1)));
    EXPECT_EQ(values_f32(out[0]), (std::vector<float>{2, 4}));
}

TEST(OpsPool, AveragePoolDivisorWithAndWithoutPads) {
    auto run = [](int include) {
        return values_f32(run_op("AveragePool", {f32({1, 1, 2}, {2, 4})},
                                 ir::attrs(Attribute::make_ints("kernel_shape", {2}),
                                           Attribute::make_ints("pads", {1, 1}),
                                           Attribute::make_int("count_include_pad", include)))[0]);
    };
    EXPECT_EQ(run(0), (std::vector<float>{2, 3, 4}));
    EXPECT_EQ(run(1), (std::vector<float>{1, 3, 2}));
}

TEST(OpsPool, DilatedMaxPool) {
    auto out = run_op("MaxPool", {f32({1, 1, 5}, {5, 1, 1, 1, 9})},
                      ir::attrs(Attribute::make_ints("kernel_shape", {2}),
                                Attribute::make_ints("dilations", {3})));
    EXPECT_EQ(values_f32(out[0]), (std::vector<float>{5, 9}));
}

TEST(OpsPool, GlobalPoolsAndLp) {
    const Tensor x = f32({1, 2, 2}, {3, 4, -1, 1});
    EXPECT_EQ(values_f32(run_op("GlobalAveragePool", {x})[0]), (std::vector<float>{3.5f, 0}));
    EXPECT_EQ(values_f32(run_op("GlobalMaxPool", {x})[0]), (std::vector<float>{4, 1}));
    EXPECT_NEAR(values_f32(run_op("GlobalLpPool", {x})[0])[0], 5.0f, 1e-6);
}

// Global pools with enough planes to be split over a 2-thread pool: each plane still reduced in
// order (the same bytes as a serial loop).
TEST(OpsPool, GlobalPoolsOverThePoolKeepEachPlanesOrder) {
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    const int64_t planes = 2 * 300, n = 11 * 13;
    std::vector<float> v(size_t(planes * n));
    for (float& e : v) e = u(rng);
    for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"}) {
        auto m = ir::new_model(13);
        ir::GraphBuilder b(*m->graph);
        b.output(b.op(op, {b.input("x", DataType::kFloat32, {2, 300, 11, 13})}));
        runtime::SessionOptions o;
        o.threads = 2;
        runtime::Session session(*m, o);
        runtime::Feeds feeds{
            {"x", ops::RtValue::of(Tensor::from_values(DataType::kFloat32, {2, 300, 11, 13}, v))}};
        const std::vector<float> got = values_f32(session.run(feeds).at(0).second.tensor());
        ASSERT_EQ(got.size(), size_t(planes));
        const bool avg = std::string(op) == "GlobalAveragePool";
        for (int64_t p = 0; p < planes; ++p) {
            float acc = avg ? 0.0f : -std::numeric_limits<float>::infinity();
            for (int64_t i = 0; i < n; ++i)
                acc = avg ? acc + v[size_t(p * n + i)] : std::max(acc, v[size_t(p * n + i)]);
            ASSERT_EQ(got[size_t(p)], avg ? acc / float(n) : acc) << op << " plane " << p;
        }
    }
}

TEST(OpsPool, MaxUnpoolInvertsMaxPoolIndices) {
    auto pooled = run_op("MaxPool", {k4x4},
                         ir::attrs(Attribute::make_ints("kernel_shape", {2, 2}),
                                   Attribute::make_ints("strides", {2, 2})),
                         12, 2);
    auto un = run_op("MaxUnpool", {pooled[0], pooled[1]},
                     ir::attrs(Attribute::make_ints("kernel_shape", {2, 2}),
                               Attribute::make_ints("strides", {2, 2})),
                     11);
    ASSERT_EQ(un[0].dims(), (std::vector<int64_t>{1, 1, 4, 4}));
    EXPECT_EQ(values_f32(un[0]),
              (std::vector<float>{0, 0, 0, 0, 0, 6, 0, 8, 0, 0, 0, 0, 0, 14, 0, 16}));
}

TEST(OpsPool, MaxRoiPool) {
    auto out = run_op("MaxRoiPool", {k4x4, f32({1, 5}, {0, 0, 0, 3, 3})},
                      ir::attrs(Attribute::make_ints("pooled_shape", {2, 2})));
    EXPECT_EQ(values_f32(out[0]), (std::vector<float>{6, 8, 14, 16}));
}

TEST(OpsPool, MissingKernelShapeIsInvalid) {
    EXPECT_THROW(run_op("MaxPool", {k4x4}), Error);
}

}  // namespace
}  // namespace pg
