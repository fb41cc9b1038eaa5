// Blocked-layout regions (runtime/fuse_nchwc.cc): runs without a hook take them and give the
// plain steps' values within float32 rounding (the blocked Convs sum as gemm_direct does; the
// plain ones may take Winograd, gemm_dot or the packed GEMM, which sum in other orders), the
// same bits on one and two threads and run after run; values entering and leaving a region
// (graph outputs inside it, a reader outside it, a graph input feeding it) come out plain;
// Concats and BatchNormalization chains join a region (Concats written in place); channel
// counts that are not multiples of 16, single Convs and regions no longer than their reorders
// stay plain; a hook sees plain values. Skipped where the CPU has no AVX-512.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "ir/builder.h"
#include "ops/nchwc.h"
#include "runtime/session.h"
#include "support/fuse_check.h"
#include "support/subgraph_attr.h"
#include "zoo/zoo.h"

namespace pg {
namespace {

using test::random_fuse_feeds;
using test::random_tensor;

class SessionNchwc : public ::testing::Test {
  protected:
    void SetUp() override {
        if (!ops::nchwc_available()) GTEST_SKIP() << "no AVX-512 on this CPU";
        was_ = runtime::set_nchwc_layout(true);
    }
    void TearDown() override { runtime::set_nchwc_layout(was_); }
    bool was_ = true;
};

// A Conv `name` of x by random out x in x k x k weights, padded k / 2 on every side.
ir::Value* square_conv(ir::GraphBuilder& b, std::mt19937& rng, ir::Value* x, int64_t out,
                       int64_t in, int64_t k, const std::string& name, int64_t stride = 1) {
    return b.op("Conv",
                {x, b.constant(name + "_w",
                               random_tensor(DataType::kFloat32, {out, in, k, k}, false, rng))},
                ir::attrs(ir::Attribute::make_ints("pads", {k / 2, k / 2, k / 2, k / 2}),
                          ir::Attribute::make_ints("strides", {stride, stride})),
                name);
}

// Largest |a - b| over the largest |b| across every output (same names and dims required).
double relative_gap(const runtime::Results& a, const runtime::Results& b) {
    EXPECT_EQ(a.size(), b.size());
    double gap = 0.0, scale = 0.0;
    for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
        const Tensor& x = a[i].second.tensor();
        const Tensor& y = b[i].second.tensor();
        EXPECT_EQ(a[i].first, b[i].first);
        EXPECT_EQ(x.dims(), y.dims());
        if (x.dims() != y.dims()) return INFINITY;
        for (uint64_t k = 0; k < x.numel(); ++k) {
            const double u = x.data<float>()[k], v = y.data<float>()[k];
            if (std::isnan(u) != std::isnan(v)) return INFINITY;
            gap = std::max(gap, std::fabs(u - v));
            scale = std::max(scale, std::fabs(v));
        }
    }
    return scale > 0 ? gap / scale : gap;
}

// Runs m blocked (2 threads and 1), without blocking, and plain; returns the blocked gap.
double check_blocked(const ir::Model& m, bool expect_regions = true) {
    runtime::SessionOptions opt, one, plain_opt;
    opt.threads = 2, one.threads = 1, plain_opt.threads = 2;
    plain_opt.fuse = false;
    runtime::Session blocked(m, opt), single(m, one), plain(m, plain_opt);
    runtime::set_nchwc_layout(false);
    runtime::Session unblocked(m, opt);
    runtime::set_nchwc_layout(true);
    const runtime::Feeds feeds = random_fuse_feeds(m);
    const runtime::Results want = plain.run(feeds), got = blocked.run(feeds);
    test::expect_same_results(blocked.run(feeds), got);  // run after run
    test::expect_same_results(single.run(feeds), got);   // thread counts
    test::expect_same_results(unblocked.run(feeds), want);
    if (expect_regions) {
        EXPECT_GT(blocked.blocked_steps(), 0);
    } else {
        EXPECT_EQ(blocked.blocked_steps(), 0);
        test::expect_same_results(got, want);
    }
    EXPECT_EQ(unblocked.blocked_steps(), 0);
    return relative_gap(got, want);
}

// ResNet-50-style: a 3x3 Conv, then bottleneck blocks (1x1 down, 3x3 (one depthwise), 1x1 up +
// the block's input, Relu; BatchNormalization after every Conv), a strided one with a 1x1
// projection, GlobalAveragePool.
std::unique_ptr<ir::Model> bottleneck_model() {
    auto m = ir::new_model(13);
    ir::GraphBuilder b(*m->graph);
    std::mt19937 rng(4);
    int count = 0;
    auto conv = [&](ir::Value* x, int64_t out, int64_t in, int64_t k, int64_t stride,
                    int64_t group = 1) {
        const std::string n = "c" + std::to_string(count++);
        ir::Value* y = b.op(
            "Conv",
            {x, b.constant(n + "_w",
                           random_tensor(DataType::kFloat32, {out, in / group, k, k}, false, rng))},
            ir::attrs(ir::Attribute::make_ints("pads", {k / 2, k / 2, k / 2, k / 2}),
                      ir::Attribute::make_ints("strides", {stride, stride}),
                      ir::Attribute::make_int("group", group)),
            n);
        return test::batch_norm(b, y, DataType::kFloat32, out, rng, n + "_bn");
    };
    auto relu = [&](ir::Value* x) { return b.op("Relu", {x}); };
    ir::Value* x = b.input("x", DataType::kFloat32, {1, 16, 20, 20});
    ir::Value* h = relu(conv(x, 128, 16, 3, 1));
    for (int block = 0; block < 3; ++block) {  // block 1's 3x3 is depthwise (MobileNet-v2-like)
        const int64_t stride = block == 2 ? 2 : 1, out = block == 2 ? 256 : 128;
        ir::Value* t = relu(conv(h, 64, 128, 1, 1));
        t = relu(conv(t, 64, 64, 3, stride, block == 1 ? 64 : 1));
        t = conv(t, out, 64, 1, 1);
        ir::Value* skip = block == 2 ? conv(h, out, 128, 1, stride) : h;
        h = relu(b.op("Add", {t, skip}));
    }
    b.output(b.op("GlobalAveragePool", {h}), DataType::kFloat32, {});
    return m;
}

TEST_F(SessionNchwc, BottlenecksRunBlockedWithThePlainValues) {
    EXPECT_LT(check_blocked(*bottleneck_model()), 1e-5);
}

// A DenseNet-like block: pre-activation BatchNormalization + Relu (fused as a BatchNormalization
// chain, fuse_bn.cc) before each layer's 1x1 Conv, its 3x3 Conv's output concatenated to the
// features. With the normalizations blocked, the block is one region: the stem reads the image
// plain and only the pooled result leaves.
std::unique_ptr<ir::Model> dense_block_model() {
    auto m = ir::new_model(13);
    ir::GraphBuilder b(*m->graph);
    std::mt19937 rng(15);
    int count = 0;
    auto conv = [&](ir::Value* x, int64_t out, int64_t in, int64_t k) {
        return square_conv(b, rng, x, out, in, k, "c" + std::to_string(count++));
    };
    auto bn_relu = [&](ir::Value* x, int64_t c) {
        const std::string n = "bn" + std::to_string(count++);
        return b.op("Relu", {test::batch_norm(b, x, DataType::kFloat32, c, rng, n)});
    };
    ir::Value* x = b.input("x", DataType::kFloat32, {1, 3, 12, 12});
    ir::Value* f = conv(x, 64, 3, 3);
    int64_t c = 64;
    for (int layer = 0; layer < 2; ++layer) {
        ir::Value* t = conv(bn_relu(f, c), 64, c, 1);
        t = conv(bn_relu(t, 64), 32, 64, 3);
        f = b.op("Concat", {f, t}, ir::attrs(ir::Attribute::make_int("axis", 1)));
        c += 32;
    }
    b.output(b.op("GlobalAveragePool", {bn_relu(f, c)}), DataType::kFloat32, {});
    return m;
}

TEST_F(SessionNchwc, DenseBlocksRunBlockedWithThePlainValues) {
    auto m = dense_block_model();
    EXPECT_LT(check_blocked(*m), 1e-5);
    runtime::Session s(*m, runtime::SessionOptions{});
    // The stem; per layer the normalization, the 1x1 Conv (with the next normalization and Relu
    // fused), the 3x3 Conv and the Concat; the last normalization and the pool.
    EXPECT_EQ(s.blocked_steps(), 11);
}

// Depthwise-separable blocks, 64 channels and more: depthwise and 1x1 Convs (BatchNormalization,
// Clip) blocked.
TEST_F(SessionNchwc, MobileNetRunsBlockedWithThePlainValues) {
    auto m = zoo::mobilenet_style({.image = 64, .width = 64, .classes = 10});
    EXPECT_LT(check_blocked(*m), 1e-5);
}

// Basic blocks (3x3 Convs; 1x1 ones only to project) run blocked too.
TEST_F(SessionNchwc, BasicBlocksRunBlockedWithThePlainValues) {
    auto m = zoo::resnet_style({.image = 64, .width = 16, .classes = 10, .blocks = {2, 1}});
    EXPECT_LT(check_blocked(*m), 1e-5);
}

// x (64 channels, reordered in) -> 3x3 Conv -> 3x3 Conv -> output (reordered out): two Convs,
// two reorders.
TEST_F(SessionNchwc, ARegionNoLongerThanItsReordersStaysPlain) {
    auto m = ir::new_model(13);
    ir::GraphBuilder b(*m->graph);
    std::mt19937 rng(12);
    ir::Value* x = b.input("x", DataType::kFloat32, {1, 64, 8, 8});
    ir::Value* y = square_conv(b, rng, square_conv(b, rng, x, 64, 64, 3, "a"), 64, 64, 3, "b");
    b.output(y, DataType::kFloat32, {});
    check_blocked(*m, false);
}

// x (c channels) -> 1x1 Conv -> Relu -> 1x1 Conv (+ x) -> MaxPool -> 1x1 Conv -> AveragePool ->
// 3x3 Conv -> 3x3 Conv -> 1x1 Conv -> GlobalAveragePool, with the first Conv's output also a graph
// output and read by a Sigmoid outside the region; every value enters or leaves somewhere.
std::unique_ptr<ir::Model> chain_model(int64_t c) {
    auto m = ir::new_model(13);
    ir::GraphBuilder b(*m->graph);
    std::mt19937 rng(5);
    auto w = [&](const std::string& name, int64_t out, int64_t in, int64_t k) {
        return b.constant(name, random_tensor(DataType::kFloat32, {out, in, k, k}, false, rng));
    };
    auto bias = [&](const std::string& name, int64_t out) {
        return b.constant(name, random_tensor(DataType::kFloat32, {out}, false, rng));
    };
    auto pads = [] { return ir::attrs(ir::Attribute::make_ints("pads", {1, 1, 1, 1})); };
    ir::Value* x = b.input("x", DataType::kFloat32, {2, c, 12, 10});
    ir::Value* y1 = b.op("Conv", {x, w("w1", c, c, 1), bias("b1", c)}, {}, "conv1");
    ir::Value* r1 = b.op("Relu", {y1}, {}, "relu1");
    ir::Value* y2 = b.op("Conv", {r1, w("w2", c, c, 1)}, {}, "conv2");
    ir::Value* s = b.op("Add", {y2, x}, {}, "add");
    ir::Value* p1 = b.op("MaxPool", {s},
                         ir::attrs(ir::Attribute::make_ints("kernel_shape", {3, 3}),
                                   ir::Attribute::make_ints("strides", {2, 2}),
                                   ir::Attribute::make_ints("pads", {1, 1, 1, 1})),
                         "pool1");
    ir::Value* y3 = b.op("Conv", {p1, w("w3", 2 * c, c, 1)}, {}, "conv3");
    ir::Value* p2 = b.op("AveragePool", {y3},
                         ir::attrs(ir::Attribute::make_ints("kernel_shape", {2, 2}),
                                   ir::Attribute::make_int("ceil_mode", 1)),
                         "pool2");
    ir::Value* y4 = b.op("Conv", {p2, w("w4", 16, 2 * c, 3)},
                         ir::attrs(ir::Attribute::make_ints("strides", {2, 2})), "conv4");
    ir::Value* y5 = b.op("Conv", {y4, w("w5", c, 16, 3)}, pads(), "conv5");
    ir::Value* y6 = b.op("Conv", {y5, w("w6", c, c, 1)}, {}, "conv6");
    ir::Value* g = b.op("GlobalAveragePool", {y6}, {}, "gap");
    ir::Value* side = b.op("Sigmoid", {y1}, {}, "side");
    b.output(g, DataType::kFloat32, {});
    b.output(y1, DataType::kFloat32, {});
    b.output(side, DataType::kFloat32, {});
    b.output(p1, DataType::kFloat32, {});
    return m;
}

TEST_F(SessionNchwc, ValuesEnteringAndLeavingARegionComePlain) {
    EXPECT_LT(check_blocked(*chain_model(64)), 1e-5);
}

// Inception-style: two Conv branches and a pooled branch of x (a graph input) joined by a
// Concat, then a Conv; a second Concat takes the graph input itself as one part.
std::unique_ptr<ir::Model> concat_model() {
    auto m = ir::new_model(13);
    ir::GraphBuilder b(*m->graph);
    std::mt19937 rng(7);
    auto w = [&](const std::string& name, int64_t out, int64_t in, int64_t k) {
        return b.constant(name, random_tensor(DataType::kFloat32, {out, in, k, k}, false, rng));
    };
    ir::Value* x = b.input("x", DataType::kFloat32, {1, 64, 9, 9});
    ir::Value* a = b.op("Conv", {x, w("wa", 64, 64, 1)}, {}, "a");
    ir::Value* c = b.op("Conv", {x, w("wc", 32, 64, 3)},
                        ir::attrs(ir::Attribute::make_ints("pads", {1, 1, 1, 1})), "c");
    ir::Value* p = b.op("MaxPool", {c},
                        ir::attrs(ir::Attribute::make_ints("kernel_shape", {3, 3}),
                                  ir::Attribute::make_ints("pads", {1, 1, 1, 1})),
                        "p");
    ir::Value* cat =
        b.op("Concat", {a, c, p}, ir::attrs(ir::Attribute::make_int("axis", 1)), "cat");
    ir::Value* d = b.op("Conv", {cat, w("wd", 64, 128, 1)}, {}, "d");
    ir::Value* cat2 =
        b.op("Concat", {d, x}, ir::attrs(ir::Attribute::make_int("axis", -3)), "cat2");
    b.output(b.op("Relu", {cat2}, {}, "r"), DataType::kFloat32, {});
    return m;
}

TEST_F(SessionNchwc, ConcatsJoinTheRegion) {
    auto m = concat_model();
    EXPECT_LT(check_blocked(*m), 1e-5);
    runtime::Session s(*m, runtime::SessionOptions{});
    // a, c, p, cat and d; cat2 reads the graph input, whose channels the plan does not know.
    EXPECT_EQ(s.blocked_steps(), 5);
}

// SqueezeNet's fire module before its max pool: a 1x1 squeeze, 1x1 and 3x3 (Winograd, depthwise)
// expands written into one Concat, MaxPool 3x3 / 2. The expands that a pool reads store through
// the caches (set_nchwc_cached_for_pools) or stream around them: the same bits either way, and
// the plain values within rounding.
TEST_F(SessionNchwc, ConvsBeforeAPoolKeepTheirBitsCachedOrStreamed) {
    auto m = ir::new_model(13);
    ir::GraphBuilder b(*m->graph);
    std::mt19937 rng(31);
    ir::Value* x = b.input("x", DataType::kFloat32, {1, 32, 29, 29});
    ir::Value* s = b.op("Relu", {square_conv(b, rng, x, 16, 32, 1, "squeeze")});
    ir::Value* e1 = b.op("Relu", {square_conv(b, rng, s, 64, 16, 1, "e1")});
    ir::Value* e3 = b.op("Relu", {square_conv(b, rng, s, 64, 16, 3, "e3")});
    ir::Value* dw = b.op(
        "Conv", {s, b.constant("dw_w", random_tensor(DataType::kFloat32, {16, 1, 3, 3}, false, rng))},
        ir::attrs(ir::Attribute::make_ints("pads", {1, 1, 1, 1}), ir::Attribute::make_int("group", 16)),
        "dw");
    ir::Value* cat = b.op("Concat", {e1, e3, dw}, ir::attrs(ir::Attribute::make_int("axis", 1)));
    ir::Value* pool = b.op("MaxPool", {cat},
                           ir::attrs(ir::Attribute::make_ints("kernel_shape", {3, 3}),
                                     ir::Attribute::make_ints("strides", {2, 2})));
    b.output(square_conv(b, rng, pool, 16, 144, 1, "next"), DataType::kFloat32, {});
    const bool was = runtime::set_nchwc_cached_for_pools(true);
    runtime::SessionOptions opt;
    opt.threads = 2;
    runtime::Session cached(*m, opt);
    runtime::set_nchwc_cached_for_pools(false);
    runtime::Session streamed(*m, opt);
    runtime::set_nchwc_cached_for_pools(was);
    EXPECT_LT(check_blocked(*m), 1e-5);
    const runtime::Feeds feeds = random_fuse_feeds(*m);
    test::expect_same_results(cached.run(feeds), streamed.run(feeds));
    EXPECT_GE(cached.blocked_steps(), 6);
}

// SqueezeNet's tail: blocked Convs, then a classifier Conv of 40 channels + Relu read only by a
// GlobalAveragePool, which its step runs (set_nchwc_fold_global_averages): no step of the pool's
// own, the same bits as the pool run apart, the plain values within rounding. A second
// reader of the classifier's map, or a Concat reading the averages (which fuse_concat.cc would
// have the Conv's step write in place), keeps the pool apart.
TEST_F(SessionNchwc, AClassifiersGlobalAverageRunsInItsConvsStep) {
    for (const int kind : {0, 1, 2}) {
        auto m = ir::new_model(13);
        ir::GraphBuilder b(*m->graph);
        std::mt19937 rng(37);
        ir::Value* x = b.input("x", DataType::kFloat32, {1, 32, 13, 13});
        ir::Value* y = b.op("Relu", {square_conv(b, rng, x, 32, 32, 1, "a")});
        y = b.op("Relu", {square_conv(b, rng, y, 32, 32, 3, "b")});
        ir::Value* cls = b.op("Relu", {square_conv(b, rng, y, 40, 32, 1, "classifier")});
        ir::Value* avg = b.op("GlobalAveragePool", {cls}, {}, "gap");
        if (kind == 2)
            avg = b.op("Concat", {avg, b.op("GlobalMaxPool", {y})},
                       ir::attrs(ir::Attribute::make_int("axis", 1)));
        b.output(avg, DataType::kFloat32, {});
        if (kind == 1) b.output(b.op("Neg", {cls}), DataType::kFloat32, {});
        EXPECT_LT(check_blocked(*m), 1e-5);
        runtime::SessionOptions opt;
        opt.threads = 2;
        const bool was = runtime::set_nchwc_fold_global_averages(true);
        runtime::Session folded(*m, opt);
        runtime::set_nchwc_fold_global_averages(false);
        runtime::Session apart(*m, opt);
        runtime::set_nchwc_fold_global_averages(was);
        const runtime::Feeds feeds = random_fuse_feeds(*m);
        test::expect_same_results(folded.run(feeds), apart.run(feeds));
        std::vector<runtime::Session::StepTime> times;
        folded.run_timed(feeds, times);
        bool pool_step = false;
        for (const auto& t : times) pool_step = pool_step || t.node->name == "gap";
        EXPECT_EQ(pool_step, kind != 0) << kind;
    }
}

// A region value read only from inside an If's branches (an outer-scope value) leaves the
// region plain for them.
TEST_F(SessionNchwc, SubgraphsReadRegionValuesPlain) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    std::mt19937 rng(8);
    auto w = [&](const std::string& name) {
        return b.constant(name, random_tensor(DataType::kFloat32, {64, 64, 1, 1}, false, rng));
    };
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{1, 64, 6, 6});
    ir::Value* cond = b.input("cond", DataType::kBool, std::vector<int64_t>{});
    ir::Value* y1 = b.op("Conv", {x, w("w1")}, {}, "c1");
    ir::Value* y2 = b.op("Conv", {y1, w("w2")}, {}, "c2");
    ir::Value* y3 = b.op("Conv", {b.op("Conv", {y2, w("w3")}, {}, "c3"), w("w4")}, {}, "c4");
    ir::Node* iff = b.op_multi("If", {cond}, 1, {}, "if");
    for (const auto& [branch, op] : {std::pair{"then_branch", "Relu"}, {"else_branch", "Neg"}}) {
        ir::GraphBuilder sb(*test::add_branch(iff, branch));
        sb.output(sb.op(op, {y2}, {}, std::string(branch) + "_op"), DataType::kFloat32, {});
    }
    b.output(b.op("GlobalAveragePool", {y3}), DataType::kFloat32, {});
    b.output(iff->output(0), DataType::kFloat32, {});
    runtime::SessionOptions opt, plain_opt;
    plain_opt.fuse = false;
    runtime::Session blocked(*m, opt), plain(*m, plain_opt);
    EXPECT_GT(blocked.blocked_steps(), 0);
    for (const uint8_t c : {uint8_t(1), uint8_t(0)}) {
        runtime::Feeds feeds;
        feeds["x"] = ops::RtValue::of(random_tensor(DataType::kFloat32, {1, 64, 6, 6}, false, rng));
        feeds["cond"] = ops::RtValue::of(Tensor::from_values<uint8_t>(DataType::kBool, {}, {c}));
        EXPECT_LT(relative_gap(blocked.run(feeds), plain.run(feeds)), 1e-5);
    }
}

// A Dropout in inference between Convs is skipped (runtime/fuse.h, skip_identities), so the
// region runs on through it: the three Convs and the pool, no reorder in between.
TEST_F(SessionNchwc, RegionsRunOnThroughInferenceDropouts) {
    auto m = ir::new_model(13);
    ir::GraphBuilder b(*m->graph);
    std::mt19937 rng(12);
    ir::Value* x = b.input("x", DataType::kFloat32, {1, 32, 8, 8});
    ir::Value* y = square_conv(b, rng, x, 32, 32, 3, "a");
    y = b.op("Dropout", {y}, {}, "drop");
    y = square_conv(b, rng, square_conv(b, rng, y, 32, 32, 1, "b"), 32, 32, 1, "c");
    b.output(b.op("GlobalAveragePool", {y}, {}, "gap"), DataType::kFloat32, {});
    EXPECT_LT(check_blocked(*m), 1e-5);
    runtime::Session s(*m, runtime::SessionOptions{});
    EXPECT_EQ(s.blocked_steps(), 4);
}

// A 5x5 Conv (slower blocked) runs plain and splits the chain: a -> b and d alone are each no
// longer than their reorders, so everything stays plain.
TEST_F(SessionNchwc, AWideWindowRunsPlainAndSplitsTheChain) {
    auto m = ir::new_model(13);
    ir::GraphBuilder b(*m->graph);
    std::mt19937 rng(10);
    auto conv = [&](ir::Value* x, int64_t k, const std::string& name) {
        return square_conv(b, rng, x, 64, 64, k, name);
    };
    ir::Value* x = b.input("x", DataType::kFloat32, {1, 64, 8, 8});
    ir::Value* y = conv(conv(conv(conv(x, 1, "a"), 1, "b"), 5, "c"), 1, "d");
    b.output(b.op("GlobalAveragePool", {y}), DataType::kFloat32, {});
    check_blocked(*m, false);
}

// An Inception-style block: a 5x5 branch beside 1x1 ones, concatenated. The 5x5 Conv runs plain
// (its input leaves the region, its output enters it); the 1x1 Convs, the Concat and the pool
// run blocked.
TEST_F(SessionNchwc, RegionsFormAroundAWideWindow) {
    auto m = ir::new_model(13);
    ir::GraphBuilder b(*m->graph);
    std::mt19937 rng(12);
    ir::Value* x = b.input("x", DataType::kFloat32, {1, 32, 12, 12});
    ir::Value* a = square_conv(b, rng, x, 32, 32, 1, "a");
    ir::Value* c = square_conv(b, rng, square_conv(b, rng, a, 16, 32, 1, "b"), 32, 16, 5, "c");
    ir::Value* d = square_conv(b, rng, a, 32, 32, 1, "d");
    ir::Value* e = square_conv(b, rng, a, 32, 32, 1, "e");
    ir::Value* cat =
        b.op("Concat", {c, d, e}, ir::attrs(ir::Attribute::make_int("axis", 1)), "cat");
    ir::Value* f = square_conv(b, rng, cat, 32, 96, 1, "f");
    b.output(b.op("GlobalAveragePool", {f}, {}, "p"), DataType::kFloat32, {});
    EXPECT_LT(check_blocked(*m), 1e-5);
    runtime::Session s(*m, runtime::SessionOptions{});
    // a, b, d, e, cat, f and p; not c.
    EXPECT_EQ(s.blocked_steps(), 7);
}

// 40 channels: only conv3 (40 -> 80, a stem reading its input plain), pool2, conv4 (80 -> 16) and
// conv5 (16 -> 40, reading blocked and writing plain) run blocked; conv1, conv2 and conv6 stay
// plain.
TEST_F(SessionNchwc, ChannelsOutsideBlocksStayPlain) {
    auto m = chain_model(40);
    EXPECT_LT(check_blocked(*m), 1e-5);
    runtime::Session s(*m, runtime::SessionOptions{});
    EXPECT_EQ(s.blocked_steps(), 4);
}

// SqueezeNet's tail: a 1x1 Conv to 1000 classes (not whole blocks) with a bias and a Relu reads
// the region's last value blocked and writes plain, so the only reorder is the input's.
TEST_F(SessionNchwc, AClassifierConvReadsBlockedAndWritesPlain) {
    auto m = ir::new_model(13);
    ir::GraphBuilder b(*m->graph);
    std::mt19937 rng(21);
    ir::Value* x = b.input("x", DataType::kFloat32, {1, 32, 7, 6});
    ir::Value* y = b.op("Relu", {square_conv(b, rng, x, 64, 32, 1, "c1")}, {}, "r1");
    y = b.op("Relu", {square_conv(b, rng, y, 48, 64, 3, "c2")}, {}, "r2");
    ir::Value* classes = b.op(
        "Conv",
        {y, b.constant("cw", random_tensor(DataType::kFloat32, {1000, 48, 1, 1}, false, rng)),
         b.constant("cb", random_tensor(DataType::kFloat32, {1000}, false, rng))},
        {}, "classes");
    y = b.op("Relu", {classes}, {}, "r3");
    b.output(b.op("GlobalAveragePool", {y}, {}, "gap"), DataType::kFloat32, {});
    EXPECT_LT(check_blocked(*m), 1e-5);
    runtime::Session s(*m, runtime::SessionOptions{});
    EXPECT_EQ(s.blocked_steps(), 3);
    std::vector<runtime::Session::StepTime> times;
    s.run_timed(random_fuse_feeds(*m), times);
    int reorders = 0;
    for (const auto& t : times) reorders += t.reorder ? 1 : 0;
    EXPECT_EQ(reorders, 1);
    const bool was = runtime::set_nchwc_plain_outputs(false);  // the classifier beside the region
    runtime::Session beside(*m, runtime::SessionOptions{});
    runtime::set_nchwc_plain_outputs(was);
    EXPECT_EQ(beside.blocked_steps(), 0);  // two Convs, two reorders: not worth blocking
    EXPECT_LT(relative_gap(s.run(random_fuse_feeds(*m)), beside.run(random_fuse_feeds(*m))), 1e-5);
}

TEST_F(SessionNchwc, ASingleConvStaysPlain) {
    auto m = ir::new_model(13);
    ir::GraphBuilder b(*m->graph);
    std::mt19937 rng(6);
    ir::Value* x = b.input("x", DataType::kFloat32, {1, 32, 8, 8});
    ir::Value* y = b.op(
        "Conv", {x, b.constant("w", random_tensor(DataType::kFloat32, {32, 32, 1, 1}, false, rng))},
        {}, "conv");
    b.output(b.op("MaxPool", {y}, ir::attrs(ir::Attribute::make_ints("kernel_shape", {2, 2})), "p"),
             DataType::kFloat32, {});
    check_blocked(*m, false);
}

TEST_F(SessionNchwc, TimedRunsNameTheReorders) {
    auto m = bottleneck_model();
    runtime::Session s(*m, runtime::SessionOptions{});
    std::vector<runtime::Session::StepTime> times;
    s.run_timed(random_fuse_feeds(*m), times);
    int reorders = 0;
    for (const auto& t : times) reorders += t.reorder ? 1 : 0;
    EXPECT_EQ(reorders, 2);  // x entering, the pooled output leaving
}

// A stem (3 channels) reads the image plain and writes blocked: no reorder on the way in.
TEST_F(SessionNchwc, StemsReadTheImagePlain) {
    auto m = ir::new_model(13);
    ir::GraphBuilder b(*m->graph);
    std::mt19937 rng(12);
    auto conv = [&](ir::Value* x, int64_t out, int64_t in, int64_t k, int64_t stride,
                    const std::string& name) {
        return square_conv(b, rng, x, out, in, k, name, stride);
    };
    ir::Value* x = b.input("x", DataType::kFloat32, {1, 3, 33, 31});
    ir::Value* y = b.op("Relu", {conv(x, 64, 3, 3, 2, "stem")});
    y = b.op("MaxPool", {y},
             ir::attrs(ir::Attribute::make_ints("kernel_shape", {3, 3}),
                       ir::Attribute::make_ints("strides", {2, 2})));
    y = conv(conv(conv(y, 64, 64, 1, 1, "a"), 32, 64, 1, 1, "b"), 64, 32, 3, 1, "c");
    b.output(b.op("GlobalAveragePool", {y}), DataType::kFloat32, {});
    EXPECT_LT(check_blocked(*m), 1e-5);
    runtime::Session s(*m, runtime::SessionOptions{});
    EXPECT_EQ(s.blocked_steps(), 6);  // stem, pool, a, b, c, the global pool
    std::vector<runtime::Session::StepTime> times;
    s.run_timed(random_fuse_feeds(*m), times);
    int reorders = 0;
    for (const auto& t : times) reorders += t.reorder ? 1 : 0;
    EXPECT_EQ(reorders, 1);  // the pooled output leaving only
}

TEST_F(SessionNchwc, AHookSeesThePlainSteps) {
    auto m = bottleneck_model();
    runtime::SessionOptions opt;
    opt.threads = 2;
    runtime::Session s(*m, opt);
    ASSERT_GT(s.blocked_steps(), 0);
    struct Dims : runtime::NodeHook {
        bool blocked = false;
        void on_node(const ir::Node&, const std::vector<const ops::RtValue*>&,
                     const std::vector<ops::RtValue>& out) override {
            for (const auto& v : out)
                if (v.is_tensor() && v.tensor().rank() == 5) blocked = true;
        }
    } hook;
    s.run(random_fuse_feeds(*m), &hook);
    EXPECT_FALSE(hook.blocked);
}

}  // namespace
}  // namespace pg
