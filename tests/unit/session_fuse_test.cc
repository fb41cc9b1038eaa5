// Plan-time Conv chain fusion (runtime/fuse.h): runs without a hook take the fused steps and
// must give bit-identical outputs to the plain steps (SessionOptions::fuse off); a hook still
// sees every node; chains whose intermediate value is a graph output, or whose types or shapes
// the fast path does not cover (float64, a broadcast residual), keep the plain semantics.
#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <string>

#include "ir/builder.h"
#include "runtime/session.h"
#include "support/fuse_check.h"
#include "zoo/zoo.h"

namespace pg {
namespace {

using test::batch_norm;
using test::check_fused_matches_plain;
using test::random_tensor;

TEST(SessionFuse, ZooModelsFuseAndMatchThePlainSteps) {
    auto resnet =
        zoo::resnet_style({.image = 32, .width = 8, .classes = 10, .blocks = {1, 1, 1, 1}});
    EXPECT_GT(check_fused_matches_plain(*resnet), 0);
    auto mobilenet = zoo::mobilenet_style({.image = 32, .width = 8, .classes = 10});
    EXPECT_GT(check_fused_matches_plain(*mobilenet), 0);  // Conv + BN + Clip
    auto transformer =
        zoo::transformer_encoder({.seq = 16, .d_model = 64, .heads = 4, .layers = 1, .ffn = 128});
    EXPECT_GT(check_fused_matches_plain(*transformer), 0);  // MatMul + bias Add, element-wise
}

// x -> Conv -> BatchNormalization -> act, in `dt`; `conv_out` also marks the Conv's output as a
// graph output.
std::unique_ptr<ir::Model> conv_chain(DataType dt, const std::string& act, bool conv_out) {
    auto m = ir::new_model(13);
    ir::GraphBuilder b(*m->graph);
    std::mt19937 rng(1);
    auto tensor = [&](std::vector<int64_t> dims, bool positive) {
        return random_tensor(dt, std::move(dims), positive, rng);
    };
    ir::Value* x = b.input("x", dt, {1, 6, 9, 9});
    ir::Value* y = b.op("Conv", {x, b.constant("w", tensor({8, 6, 3, 3}, false))},
                        ir::attrs(ir::Attribute::make_ints("pads", {1, 1, 1, 1})), "conv");
    ir::Value* z = batch_norm(b, y, dt, 8, rng);
    if (act == "Clip")
        z = b.op("Clip",
                 {z, b.constant("lo", tensor({}, false)), b.constant("hi", tensor({}, true))}, {},
                 "clip");
    else if (!act.empty())
        z = b.op(act, {z}, {}, "act");
    b.output(z, dt, {1, 8, 9, 9});
    if (conv_out) b.output(y, dt, {1, 8, 9, 9});
    return m;
}

TEST(SessionFuse, ChainsFuseBatchNormAndActivation) {
    EXPECT_EQ(check_fused_matches_plain(*conv_chain(DataType::kFloat32, "Relu", false)), 2);
    EXPECT_EQ(check_fused_matches_plain(*conv_chain(DataType::kFloat32, "Clip", false)), 2);
    EXPECT_EQ(check_fused_matches_plain(*conv_chain(DataType::kFloat32, "", false)), 1);
    EXPECT_EQ(check_fused_matches_plain(*conv_chain(DataType::kFloat32, "Sigmoid", false)), 1);
}

// x -> Conv -> BatchNormalization -> Add / Sum with `other` -> Relu (act empty: none), where
// other is "early" (a Conv of x built before the chain), "input" (a graph input), or "bcast" (a
// [1, 8, 1, 1] initializer: fused, but the fast path needs the exact shape, so the fused step
// runs the plain kernels).
std::unique_ptr<ir::Model> residual_chain(const std::string& add, const std::string& other,
                                          const std::string& act) {
    auto m = ir::new_model(13);
    ir::GraphBuilder b(*m->graph);
    std::mt19937 rng(2);
    auto tensor = [&](std::vector<int64_t> dims, bool positive) {
        return random_tensor(DataType::kFloat32, std::move(dims), positive, rng);
    };
    auto pads = [] { return ir::attrs(ir::Attribute::make_ints("pads", {1, 1, 1, 1})); };
    ir::Value* x = b.input("x", DataType::kFloat32, {1, 6, 9, 9});
    ir::Value* r = nullptr;
    if (other == "early")
        r = b.op("Conv", {x, b.constant("w0", tensor({8, 6, 3, 3}, false))}, pads());
    if (other == "input") r = b.input("r", DataType::kFloat32, {1, 8, 9, 9});
    if (other == "bcast") r = b.constant("r", tensor({1, 8, 1, 1}, false));
    ir::Value* y = b.op("Conv", {x, b.constant("w", tensor({8, 6, 3, 3}, false))}, pads(), "conv");
    ir::Value* z = batch_norm(b, y, DataType::kFloat32, 8, rng);
    z = add == "Sum" ? b.op("Sum", {z, r}, {}, "sum") : b.op("Add", {r, z}, {}, "add");
    if (!act.empty()) z = b.op(act, {z}, {}, "act");
    b.output(z, DataType::kFloat32, {1, 8, 9, 9});
    return m;
}

TEST(SessionFuse, ResidualAddFusesWhenTheOtherAddendIsReady) {
    EXPECT_EQ(check_fused_matches_plain(*residual_chain("Add", "early", "Relu")), 3);
    EXPECT_EQ(check_fused_matches_plain(*residual_chain("Sum", "early", "")), 2);
    EXPECT_EQ(check_fused_matches_plain(*residual_chain("Add", "input", "Relu")), 3);
    EXPECT_EQ(check_fused_matches_plain(*residual_chain("Sum", "bcast", "Relu")), 3);
}

TEST(SessionFuse, GraphOutputIntermediateIsNotFused) {
    // The Conv's output is a graph output: only BatchNormalization -> Relu fuses.
    EXPECT_EQ(check_fused_matches_plain(*conv_chain(DataType::kFloat32, "Relu", true)), 1);
}

// x -> BatchNormalization -> Relu (pre-activation, DenseNet style), in `dt`; `bn_out` also
// marks the BatchNormalization's output as a graph output.
std::unique_ptr<ir::Model> bn_relu(DataType dt, bool bn_out) {
    auto m = ir::new_model(13);
    ir::GraphBuilder b(*m->graph);
    std::mt19937 rng(5);
    ir::Value* x = b.input("x", dt, {2, 6, 7, 9});
    ir::Value* y = batch_norm(b, x, dt, 6, rng);
    b.output(b.op("Relu", {y}, {}, "relu"), dt, {2, 6, 7, 9});
    if (bn_out) b.output(y, dt, {2, 6, 7, 9});
    return m;
}

TEST(SessionFuse, BatchNormThenReluFuses) {
    EXPECT_EQ(check_fused_matches_plain(*bn_relu(DataType::kFloat32, false)), 1);
    EXPECT_EQ(check_fused_matches_plain(*bn_relu(DataType::kFloat32, true)), 0);
    EXPECT_EQ(check_fused_matches_plain(*bn_relu(DataType::kFloat64, false), DataType::kFloat64),
              1);  // fused, the plain kernels inside
}

TEST(SessionFuse, OtherTypesRunThePlainKernelsInsideTheFusedStep) {
    EXPECT_EQ(check_fused_matches_plain(*conv_chain(DataType::kFloat64, "Relu", false),
                                        DataType::kFloat64),
              2);
}

// x -> Conv -> BN -> Sub(scale, .) -> Sub(bias, .) -> Relu -> Sum(., Conv2(x)) -> Relu, with the
// per-channel scale and bias from Unsqueeze nodes ([8] -> [8, 1, 1]), in `dt` (the chain value
// second in both Subs: the operand order matters); `mid_out` also marks the second Sub's output
// as a graph output (the chain then stops there).
std::unique_ptr<ir::Model> eltwise_chain(DataType dt, bool mid_out) {
    auto m = ir::new_model(13);
    ir::GraphBuilder b(*m->graph);
    std::mt19937 rng(2);
    auto tensor = [&](std::vector<int64_t> dims, bool positive) {
        return random_tensor(dt, std::move(dims), positive, rng);
    };
    auto conv = [&](ir::Value* x, const std::string& name) {
        return b.op("Conv", {x, b.constant(name + "_w", tensor({8, 6, 3, 3}, false))},
                    ir::attrs(ir::Attribute::make_ints("pads", {1, 1, 1, 1})), name);
    };
    ir::Value* axes =
        b.constant("axes", Tensor::from_values<int64_t>(DataType::kInt64, {2}, {1, 2}));
    ir::Value* x = b.input("x", dt, {1, 6, 9, 9});
    ir::Value* z = batch_norm(b, conv(x, "conv"), dt, 8, rng);
    ir::Value* scale = b.op("Unsqueeze", {b.constant("sc", tensor({8}, false)), axes}, {}, "usc");
    z = b.op("Sub", {scale, z}, {}, "sub1");  // the broadcast operand first
    ir::Value* bias = b.op("Unsqueeze", {b.constant("bi", tensor({8}, false)), axes}, {}, "ubi");
    ir::Value* mid = b.op("Sub", {bias, z}, {}, "sub2");
    z = b.op("Relu", {mid}, {}, "relu1");
    z = b.op("Sum", {z, conv(x, "conv2")}, {}, "sum");
    z = b.op("Relu", {z}, {}, "relu2");
    b.output(z, dt, {1, 8, 9, 9});
    if (mid_out) b.output(mid, dt, {1, 8, 9, 9});
    return m;
}

TEST(SessionFuse, ElementwiseChainsFuseIntoOneStep) {
    // BN into the Conv; Sub, Sub, Relu, Sum, Relu into one step (4 absorbed).
    EXPECT_EQ(check_fused_matches_plain(*eltwise_chain(DataType::kFloat32, false)), 5);
    // The second Sub's output is read outside: Sub -> Sub and Relu -> Sum -> Relu fuse apart.
    EXPECT_EQ(check_fused_matches_plain(*eltwise_chain(DataType::kFloat32, true)), 4);
    EXPECT_EQ(
        check_fused_matches_plain(*eltwise_chain(DataType::kFloat64, false), DataType::kFloat64),
        5);
}

// GELU as exporters write it: x * 0.5 * (1 + erf(x / sqrt(2))), one step (Erf in the chain).
TEST(SessionFuse, GeluFusesWithItsErf) {
    auto m = ir::new_model(13);
    ir::GraphBuilder b(*m->graph);
    auto scalar = [&](const std::string& name, float v) {
        return b.constant(name, Tensor::from_values<float>(DataType::kFloat32, {}, {v}));
    };
    ir::Value* x = b.input("x", DataType::kFloat32, {2, 16, 24});
    ir::Value* z = b.op("Div", {x, scalar("sqrt2", 1.4142135f)}, {}, "div");
    z = b.op("Erf", {z}, {}, "erf");
    z = b.op("Add", {z, scalar("one", 1.0f)}, {}, "add");
    z = b.op("Mul", {x, z}, {}, "mul");
    z = b.op("Mul", {z, scalar("half", 0.5f)}, {}, "half");
    b.output(z, DataType::kFloat32, {2, 16, 24});
    EXPECT_EQ(check_fused_matches_plain(*m), 4);
}

// y = Mul(Mul(c, x), Sum(d, x)): the chain Sum -> Mul takes the last Mul; the first Mul, whose
// only reader is that Mul too, is left alone (a node belongs to one chain).
TEST(SessionFuse, ANodeJoinsOneElementwiseChain) {
    auto m = ir::new_model(13);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, {2, 3, 8, 8});
    ir::Value* c = b.constant("c", Tensor::from_values<float>(DataType::kFloat32, {}, {0.5f}));
    ir::Value* d = b.constant("d", Tensor::from_values<float>(DataType::kFloat32, {1}, {1.5f}));
    ir::Value* p = b.op("Sum", {d, x}, {}, "sum");
    ir::Value* q = b.op("Mul", {c, x}, {}, "mul1");
    b.output(b.op("Mul", {q, p}, {}, "mul2"), DataType::kFloat32, {2, 3, 8, 8});
    EXPECT_EQ(check_fused_matches_plain(*m), 1);
}

// x -> Conv -> BN -> Mul(scale) -> Add(shift) -> Relu, GoogLeNet-BN style, in `dt` at `opset`.
// `form`: "unsqueeze" (both factors Unsqueezes of [8] initializers, built before the Conv, so an
// Unsqueeze is its initializer's last reader before the fused step; the factor first in the Mul),
// "init" ([8, 1, 1] and [1, 8, 1, 1] initializers), "column" (a [1, 1, 9] factor: not per
// channel, so the Mul and Add stay out of the Conv step).
std::unique_ptr<ir::Model> channel_affine_chain(DataType dt, const std::string& form,
                                                int64_t opset = 13) {
    auto m = ir::new_model(opset);
    ir::GraphBuilder b(*m->graph);
    std::mt19937 rng(4);
    auto tensor = [&](std::vector<int64_t> dims, bool positive) {
        return random_tensor(dt, std::move(dims), positive, rng);
    };
    auto unsqueeze = [&](const std::string& name) {
        ir::Value* data = b.constant(name, tensor({8}, false));
        if (opset >= 13)
            return b.op("Unsqueeze",
                        {data, b.constant(name + "_axes", Tensor::from_values<int64_t>(
                                                              DataType::kInt64, {2}, {1, 2}))},
                        {}, "u_" + name);
        return b.op("Unsqueeze", {data}, ir::attrs(ir::Attribute::make_ints("axes", {1, 2})),
                    "u_" + name);
    };
    ir::Value* x = b.input("x", dt, {1, 6, 9, 9});
    ir::Value *scale = nullptr, *shift = nullptr;
    if (form == "unsqueeze") scale = unsqueeze("sc"), shift = unsqueeze("sh");
    if (form == "init")
        scale = b.constant("sc", tensor({8, 1, 1}, false)),
        shift = b.constant("sh", tensor({1, 8, 1, 1}, false));
    if (form == "column")
        scale = b.constant("sc", tensor({1, 1, 9}, false)),
        shift = b.constant("sh", tensor({1, 1, 9}, false));
    ir::Value* y = b.op("Conv", {x, b.constant("w", tensor({8, 6, 3, 3}, false))},
                        ir::attrs(ir::Attribute::make_ints("pads", {1, 1, 1, 1})), "conv");
    ir::Value* z = batch_norm(b, y, dt, 8, rng);
    z = b.op("Mul", {scale, z}, {}, "mul");
    z = b.op("Add", {z, shift}, {}, "add");
    b.output(b.op("Relu", {z}, {}, "relu"), dt, {1, 8, 9, 9});
    return m;
}

TEST(SessionFuse, PerChannelMulAndAddFuseIntoTheConv) {
    // BN, Mul, Add, Relu and both Unsqueezes absorbed.
    EXPECT_EQ(check_fused_matches_plain(*channel_affine_chain(DataType::kFloat32, "unsqueeze")), 6);
    EXPECT_EQ(check_fused_matches_plain(*channel_affine_chain(DataType::kFloat32, "unsqueeze", 11)),
              6);  // Unsqueeze's axes as an attribute
    EXPECT_EQ(check_fused_matches_plain(*channel_affine_chain(DataType::kFloat32, "init")), 4);
    // float64: fused, the plain kernels inside the step on the factors viewed as [8, 1, 1].
    EXPECT_EQ(check_fused_matches_plain(*channel_affine_chain(DataType::kFloat64, "unsqueeze"),
                                        DataType::kFloat64),
              6);
    // Per column, not per channel: only BN joins the Conv (Mul -> Add -> Relu fuse apart).
    EXPECT_EQ(check_fused_matches_plain(*channel_affine_chain(DataType::kFloat32, "column")), 3);
}

// x -> BatchNormalization -> Mul(Unsqueeze(sc)) -> Add(Unsqueeze(sh)) -> [Relu], DenseNet's
// pre-activation, in `dt`, with x of `dims` (rank 3: the [8, 1, 1] factors do not broadcast per
// channel, so the fused step runs the plain kernels).
std::unique_ptr<ir::Model> bn_affine(DataType dt, std::vector<int64_t> dims, bool relu) {
    auto m = ir::new_model(13);
    ir::GraphBuilder b(*m->graph);
    std::mt19937 rng(6);
    auto tensor = [&](int64_t n, bool positive) { return random_tensor(dt, {n}, positive, rng); };
    auto unsqueeze = [&](const std::string& name) {
        return b.op("Unsqueeze",
                    {b.constant(name, tensor(8, false)),
                     b.constant(name + "_axes",
                                Tensor::from_values<int64_t>(DataType::kInt64, {2}, {1, 2}))},
                    {}, "u_" + name);
    };
    ir::Value* x = b.input("x", dt, dims);
    ir::Value* y = batch_norm(b, x, dt, 8, rng);
    y = b.op("Mul", {y, unsqueeze("sc")}, {}, "mul");
    y = b.op("Add", {unsqueeze("sh"), y}, {}, "add");
    if (relu) y = b.op("Relu", {y}, {}, "relu");
    b.output(y);
    return m;
}

TEST(SessionFuse, BatchNormThenPerChannelMulAddReluFuses) {
    // Mul, Add, Relu and both Unsqueezes absorbed.
    EXPECT_EQ(check_fused_matches_plain(*bn_affine(DataType::kFloat32, {2, 8, 7, 9}, true)), 5);
    EXPECT_EQ(check_fused_matches_plain(*bn_affine(DataType::kFloat32, {2, 8, 7, 9}, false)), 4);
    EXPECT_EQ(check_fused_matches_plain(*bn_affine(DataType::kFloat32, {1, 8, 9}, true)), 5);
    EXPECT_EQ(check_fused_matches_plain(*bn_affine(DataType::kFloat64, {2, 8, 7, 9}, true),
                                        DataType::kFloat64),
              5);
}

// run_timed runs the fused steps (one timed entry per executed step: the Conv chain as one) and
// gives run()'s outputs.
TEST(SessionFuse, TimedRunsTimeEachFusedStep) {
    auto m = conv_chain(DataType::kFloat32, "Relu", false);
    runtime::SessionOptions o;
    o.threads = 2;
    runtime::Session session(*m, o);
    const runtime::Feeds feeds = test::random_fuse_feeds(*m);
    std::vector<runtime::Session::StepTime> times;
    const runtime::Results timed = session.run_timed(feeds, times);
    test::expect_same_results(timed, session.run(feeds));
    ASSERT_EQ(times.size(), 1u);  // Conv -> BatchNormalization -> Relu in one step
    EXPECT_EQ(times[0].node->name, "conv");
    EXPECT_GE(times[0].ms, 0.0);
    session.run(feeds);  // not timed: nothing appended
    EXPECT_EQ(times.size(), 1u);
}

// x [2, 9, 32] -> MatMul(w [32, 24]) -> Add(bias) in `dt`; `bias_first`: Add(bias, y); `dims`:
// the bias's ([24], [1, 24], or [9, 24]: not a bias row, so nothing fuses).
std::unique_ptr<ir::Model> matmul_bias(DataType dt, std::vector<int64_t> dims, bool bias_first) {
    auto m = ir::new_model(13);
    ir::GraphBuilder b(*m->graph);
    std::mt19937 rng(7);
    ir::Value* x = b.input("x", dt, {2, 9, 32});
    ir::Value* y =
        b.op("MatMul", {x, b.constant("w", random_tensor(dt, {32, 24}, false, rng))}, {}, "mm");
    ir::Value* bias = b.constant("bias", random_tensor(dt, std::move(dims), false, rng));
    b.output(b.op("Add", bias_first ? std::vector{bias, y} : std::vector{y, bias}, {}, "add"));
    return m;
}

TEST(SessionFuse, MatMulThenBiasAddFuses) {
    EXPECT_EQ(check_fused_matches_plain(*matmul_bias(DataType::kFloat32, {24}, false)), 1);
    EXPECT_EQ(check_fused_matches_plain(*matmul_bias(DataType::kFloat32, {1, 24}, true)), 1);
    EXPECT_EQ(check_fused_matches_plain(*matmul_bias(DataType::kFloat32, {9, 24}, false)), 0);
    EXPECT_EQ(check_fused_matches_plain(*matmul_bias(DataType::kFloat64, {24}, false),
                                        DataType::kFloat64),
              1);  // fused, the plain kernels inside
}

// x [2, 3, 8, 24] -> `op` (Mul or Div) with a one-element constant (`constant_first`: as the
// first operand) -> `norm` (Softmax or LogSoftmax) at `opset` with `axis` (none: the default), in
// `dt`; `scaled_out` also marks the scaled value as a graph output.
struct ScaledSoftmaxCase {
    std::string op = "Mul", norm = "Softmax";
    bool constant_first = false;
    int64_t opset = 13;
    std::optional<int64_t> axis = std::nullopt;
    DataType dt = DataType::kFloat32;
    bool scaled_out = false;
};

std::unique_ptr<ir::Model> scaled_softmax(const ScaledSoftmaxCase& c) {
    auto m = ir::new_model(c.opset);
    ir::GraphBuilder b(*m->graph);
    std::mt19937 rng(9);
    ir::Value* x = b.input("x", c.dt, {2, 3, 8, 24});
    Tensor k = random_tensor(c.dt, {1}, true, rng);
    ir::Value* s = b.constant("scale", k.reshaped({}));
    ir::Value* y =
        b.op(c.op, c.constant_first ? std::vector{s, x} : std::vector{x, s}, {}, "scale");
    std::vector<ir::Attribute> attrs;
    if (c.axis) attrs = ir::attrs(ir::Attribute::make_int("axis", *c.axis));
    b.output(b.op(c.norm, {y}, std::move(attrs), "norm"));
    if (c.scaled_out) b.output(y);
    return m;
}

// Attention's scaled scores: the Mul or Div by a constant and the Softmax one step, the rows
// scaled in place before the row kernel, bit for bit the plain steps; a constant divided by x,
// a scaled value read outside, and an element-wise chain holding the Mul do not fuse; another
// axis, float64 and opset-11 (2-D coerced) softmaxes fuse, the first two running the plain
// kernels inside.
TEST(SessionFuse, ScaledSoftmaxFusesItsMulOrDiv) {
    const auto fused = [](const ScaledSoftmaxCase& c) {
        SCOPED_TRACE(c.op + (c.constant_first ? " (constant first) " : " ") + c.norm + " opset " +
                     std::to_string(c.opset) + " axis " + std::to_string(c.axis.value_or(-9)));
        return check_fused_matches_plain(*scaled_softmax(c), c.dt);
    };
    EXPECT_EQ(fused({}), 1);
    EXPECT_EQ(fused({.constant_first = true}), 1);
    EXPECT_EQ(fused({.norm = "LogSoftmax"}), 1);
    EXPECT_EQ(fused({.op = "Div"}), 1);
    EXPECT_EQ(fused({.op = "Div", .constant_first = true}), 0);
    EXPECT_EQ(fused({.scaled_out = true}), 0);
    EXPECT_EQ(fused({.axis = 1}), 1);
    EXPECT_EQ(fused({.opset = 11, .axis = 2}), 1);
    EXPECT_EQ(fused({.dt = DataType::kFloat64}), 1);
    auto chained = ir::new_model(13);  // Relu -> Mul is an element-wise chain; the Softmax alone
    ir::GraphBuilder b(*chained->graph);
    ir::Value* x = b.op("Relu", {b.input("x", DataType::kFloat32, {4, 32})}, {}, "relu");
    ir::Value* s = b.constant("s", Tensor::from_values<float>(DataType::kFloat32, {}, {0.125f}));
    b.output(b.op("Softmax", {b.op("Mul", {x, s}, {}, "mul")}, {}, "softmax"));
    EXPECT_EQ(check_fused_matches_plain(*chained), 1);
}

}  // namespace
}  // namespace pg
