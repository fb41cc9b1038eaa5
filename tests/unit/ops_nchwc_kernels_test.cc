// The blocked steps' kernels (ops/nchwc_kernels.h) on their own: the reorders block what they
// can and pass the rest through; a Conv takes a plain float32 input and still writes blocked;
// other types, mixed layouts and shapes the blocked kernels do not run go through the plain
// kernels on plain inputs and leave plain outputs with the plain values. Skipped where the CPU
// has no AVX-512.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "base/error.h"
#include "base/thread_pool.h"
#include "ir/builder.h"
#include "ops/attrs.h"
#include "ops/conv_kernels.h"
#include "ops/nchwc.h"
#include "ops/nchwc_kernels.h"
#include "ops/norm_fused.h"
#include "ops/op_table.h"
#include "support/fuse_check.h"

namespace pg {
namespace {

class OpsNchwcKernels : public ::testing::Test {
  protected:
    void SetUp() override {
        if (!ops::nchwc_available()) GTEST_SKIP() << "no AVX-512 on this CPU";
        model_ = ir::new_model(13);
    }
    // A node `op` with `inputs` graph inputs (for the kernels' contexts).
    const ir::Node& node(const std::string& op, size_t inputs, std::vector<ir::Attribute> a = {}) {
        ir::GraphBuilder b(*model_->graph);
        std::vector<ir::Value*> in;
        for (size_t i = 0; i < inputs; ++i)
            in.push_back(b.input(op + std::to_string(i) + std::to_string(count_++),
                                 DataType::kFloat32, std::vector<int64_t>{}));
        return *b.op(op, in, std::move(a))->producer();
    }
    // Runs k on `inputs`; returns output 0.
    Tensor run(const ops::KernelFn& k, const ir::Node& n, const std::vector<Tensor>& inputs) {
        std::vector<ops::RtValue> held;
        for (const Tensor& t : inputs) held.push_back(ops::RtValue::of(t));
        std::vector<const ops::RtValue*> ptrs;
        for (const ops::RtValue& v : held) ptrs.push_back(&v);
        ops::KernelContext ctx(n, ptrs, 1, &pool_, nullptr);
        k(ctx);
        return ctx.outputs()[0].tensor();
    }
    ops::KernelFn plain(const ir::Node& n) {
        return ops::op_table().find("", n.op_type, 13)->make(ops::Attrs(n), 13);
    }
    std::unique_ptr<ir::Model> model_;
    ThreadPool pool_{2};
    int count_ = 0;
    std::mt19937 rng_{9};
};

Tensor blocked(const Tensor& t) {
    Tensor y = Tensor::uninitialized(t.dtype(), ops::nchwc_dims(t.dims()));
    ops::to_nchwc(t.bytes(), t.dims()[0], t.dims()[1], t.dims()[2] * t.dims()[3],
                  t.nbytes() / t.numel(), y.mutable_bytes(), nullptr);
    return y;
}

// Largest |a - b| / max |b| (same dims required).
double gap(const Tensor& a, const Tensor& b) {
    EXPECT_EQ(a.dims(), b.dims());
    double g = 0, m = 0;
    for (uint64_t i = 0; i < a.numel() && i < b.numel(); ++i) {
        g = std::max(g, std::fabs(a.element_as_double(i) - b.element_as_double(i)));
        m = std::max(m, std::fabs(b.element_as_double(i)));
    }
    return m > 0 ? g / m : g;
}

TEST_F(OpsNchwcKernels, ReordersBlockWhatTheyCanAndPassTheRest) {
    const ir::Node& n = node("Identity", 1);
    const Tensor x = test::random_tensor(DataType::kFloat32, {1, 32, 3, 5}, false, rng_);
    const Tensor b = run(ops::make_to_nchwc(), n, {x});
    EXPECT_EQ(b.dims(), (std::vector<int64_t>{1, 2, 3, 5, 16}));
    EXPECT_TRUE(run(ops::make_from_nchwc(), n, {b}).same_contents(x));
    const Tensor ragged = test::random_tensor(DataType::kFloat32, {1, 24, 3, 5}, false, rng_);
    EXPECT_TRUE(run(ops::make_to_nchwc(), n, {ragged}).same_contents(ragged));
    const Tensor d = test::random_tensor(DataType::kFloat64, {2, 16, 2, 2}, false, rng_);
    EXPECT_TRUE(run(ops::make_to_nchwc(), n, {d}).same_contents(d));  // float32 only
    const Tensor db = blocked(d);  // made otherwise: unblocked whatever its type
    EXPECT_TRUE(run(ops::make_from_nchwc(), n, {db}).same_contents(d));
    EXPECT_TRUE(run(ops::make_from_nchwc(), n, {x}).same_contents(x));  // plain stays plain
}

TEST_F(OpsNchwcKernels, ConvTakesAPlainInputAndWritesBlocked) {
    const ir::Node& n = node("Conv", 3, ir::attrs(ir::Attribute::make_ints("pads", {1, 1, 1, 1})));
    const Tensor x = test::random_tensor(DataType::kFloat32, {1, 20, 9, 9}, false, rng_);
    const Tensor w = test::random_tensor(DataType::kFloat32, {32, 20, 3, 3}, false, rng_);
    const Tensor bias = test::random_tensor(DataType::kFloat32, {32}, false, rng_);
    const ops::KernelFn p = plain(n);
    ops::ConvChain chain;
    chain.conv = ops::read_conv_attrs(ops::Attrs(n));
    const Tensor want = run(p, n, {x, w, bias});
    const Tensor got = run(ops::make_nchwc_conv(chain, {0}, p), n, {x, w, bias});
    ASSERT_EQ(got.rank(), 5);
    EXPECT_LT(gap(ops::plain_of(got, nullptr), want), 1e-6);
}

TEST_F(OpsNchwcKernels, OtherTypesRunThePlainConvOnPlainInputs) {
    const ir::Node& n = node("Conv", 2);
    const Tensor x = test::random_tensor(DataType::kFloat64, {1, 16, 5, 5}, false, rng_);
    const Tensor w = test::random_tensor(DataType::kFloat64, {16, 16, 1, 1}, false, rng_);
    const ops::KernelFn p = plain(n);
    ops::ConvChain chain;
    const Tensor got = run(ops::make_nchwc_conv(chain, {0}, p), n, {blocked(x), w});
    EXPECT_TRUE(got.same_contents(run(p, n, {x, w})));  // plain, the plain kernel's bits
}

// A classifier Conv (output channels not in whole blocks) + Relu with its GlobalAveragePool in
// one kernel: on a blocked input the averages of conv_nchwc_plain_out's outputs bit for bit (a
// small map, whose groups a thread finishes whole, and a large one, split by pixels), on a plain
// input the plain Conv and pool.
TEST_F(OpsNchwcKernels, AClassifierConvWithItsAverageRunsBlockedOrPlain) {
    const ir::Node& n = node("Conv", 3);
    const ir::Node& avg = node("GlobalAveragePool", 1);
    ops::ConvChain chain;
    chain.conv = ops::read_conv_attrs(ops::Attrs(n));
    chain.act = ops::ConvChain::Act::kRelu;
    const ops::KernelFn conv = ops::make_conv_chain(chain, [](ops::KernelContext&) {
        throw Error(ErrorKind::kInternal, "the float32 chain runs its fast path");
    });
    const ops::KernelFn average = plain(avg);
    const ops::KernelFn both =
        ops::make_nchwc_conv_global_average(chain, {0}, conv, avg, average);
    for (const auto& [hw, m] : {std::pair<int64_t, int64_t>{7, 200}, {61, 40}}) {
        const Tensor x = test::random_tensor(DataType::kFloat32, {2, 32, hw, hw}, false, rng_);
        const Tensor w = test::random_tensor(DataType::kFloat32, {m, 32, 1, 1}, false, rng_);
        const Tensor bias = test::random_tensor(DataType::kFloat32, {m}, false, rng_);
        const Tensor map = run(ops::make_nchwc_conv(chain, {0}, conv), n, {blocked(x), w, bias});
        ASSERT_EQ(map.rank(), 4) << "the Conv writes its channels plain";
        const Tensor got = run(both, n, {blocked(x), w, bias});
        EXPECT_EQ(got.dims(), (std::vector<int64_t>{2, m, 1, 1}));
        EXPECT_TRUE(got.same_contents(run(average, avg, {map}))) << hw;
        const Tensor plain_got = run(both, n, {x, w, bias});
        EXPECT_TRUE(plain_got.same_contents(run(average, avg, {run(conv, n, {x, w, bias})})));
        EXPECT_LT(gap(got, plain_got), 1e-5);
    }
}

TEST_F(OpsNchwcKernels, PoolsRunBlockedOrPlain) {
    const ir::Node& n = node("MaxPool", 1,
                             ir::attrs(ir::Attribute::make_ints("kernel_shape", {2, 2}),
                                       ir::Attribute::make_ints("strides", {2, 2})));
    const Tensor x = test::random_tensor(DataType::kFloat32, {1, 16, 6, 6}, false, rng_);
    const ops::KernelFn p = plain(n);
    const ops::KernelFn k = ops::make_nchwc_pool("MaxPool", ops::Attrs(n), p);
    const Tensor want = run(p, n, {x});
    const Tensor got = run(k, n, {blocked(x)});
    ASSERT_EQ(got.rank(), 5);
    EXPECT_TRUE(ops::plain_of(got, nullptr).same_contents(want));
    EXPECT_TRUE(run(k, n, {x}).same_contents(want));  // a plain input: the plain kernel
}

// A BatchNormalization + Relu chain: blocked on a blocked input (the plain chain's bits), the
// plain chain on a plain input or when the factors do not hold a value per channel.
TEST_F(OpsNchwcKernels, BatchNormChainsRunBlockedOrPlain) {
    const ir::Node& n = node("BatchNormalization", 5);
    ops::BatchNormChain chain;
    chain.relu = true;
    const ops::KernelFn p = ops::make_batch_norm_chain(chain, plain(n));
    const ops::KernelFn k = ops::make_nchwc_batch_norm(chain, p);
    const Tensor x = test::random_tensor(DataType::kFloat32, {2, 32, 5, 3}, false, rng_);
    std::vector<Tensor> in{x};
    for (int i = 0; i < 4; ++i)
        in.push_back(test::random_tensor(DataType::kFloat32, {32}, i == 3, rng_));
    const Tensor want = run(p, n, in);
    in[0] = blocked(x);
    const Tensor got = run(k, n, in);
    ASSERT_EQ(got.rank(), 5);
    EXPECT_TRUE(ops::plain_of(got, nullptr).same_contents(want));
    in[0] = x;
    EXPECT_TRUE(run(k, n, in).same_contents(want));  // a plain input: the plain chain
    in[0] = blocked(x);
    in[1] = test::random_tensor(DataType::kFloat32, {16}, false, rng_);  // not one per channel
    EXPECT_THROW(run(k, n, in), Error);  // the plain chain's own check, on a plain input
}

TEST_F(OpsNchwcKernels, ConcatsOfMixedLayoutsRunPlain) {
    const ir::Node& n = node("Concat", 2, ir::attrs(ir::Attribute::make_int("axis", 1)));
    const Tensor a = test::random_tensor(DataType::kFloat32, {2, 16, 3, 3}, false, rng_);
    const Tensor c = test::random_tensor(DataType::kFloat32, {2, 32, 3, 3}, false, rng_);
    const ops::KernelFn p = plain(n);
    const ops::KernelFn k = ops::make_nchwc_concat(p);
    const Tensor want = run(p, n, {a, c});
    const Tensor both = run(k, n, {blocked(a), blocked(c)});
    EXPECT_EQ(both.dims(), (std::vector<int64_t>{2, 3, 3, 3, 16}));
    EXPECT_TRUE(ops::plain_of(both, nullptr).same_contents(want));
    EXPECT_TRUE(run(k, n, {blocked(a), c}).same_contents(want));
}

}  // namespace
}  // namespace pg
