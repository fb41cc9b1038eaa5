// Concats written in place (runtime/fuse_concat.cc, ops/concat_slice.h): the Convs producing a
// Concat's inputs write into its output; bit-identical to the plain steps. Concats with an
// input that is not a Conv output, or read elsewhere, stay plain; shapes the buffer does not fit
// (a batch of 2, different spatial sizes) fall back to the plain Concat, errors included.
#include <gtest/gtest.h>

#include <random>

#include "base/error.h"
#include "ir/builder.h"
#include "ops/concat_slice.h"
#include "runtime/session.h"
#include "support/fuse_check.h"

namespace pg {
namespace {

using test::check_fused_matches_plain;

struct Fire {
    int64_t batch = 1;
    bool relu = true;          // Conv -> Relu chains, else lone Convs
    bool e1_alone = false;     // the 1x1 expand without its Relu
    bool pool_branch = false;  // a third input from MaxPool (not a Conv)
    bool expand_read = false;  // the 1x1 branch is also a graph output
    int64_t second_pad = 1;    // 0: the 3x3 branch is 2 smaller (the Concat fails)
    int64_t axis = 1;
    DataType dt = DataType::kFloat32;
};

// SqueezeNet's fire module: x -> 1x1 squeeze -> (1x1 expand, 3x3 expand) -> Concat(axis).
std::unique_ptr<ir::Model> fire(const Fire& o) {
    auto m = ir::new_model(13);
    ir::GraphBuilder b(*m->graph);
    std::mt19937 rng(7);
    const DataType f = o.dt;
    auto conv = [&](ir::Value* x, int64_t cin, int64_t cout, int64_t k, int64_t pad,
                    const std::string& name, bool relu = true) {
        ir::Value* y =
            b.op("Conv",
                 {x, b.constant(name + "_w", test::random_tensor(f, {cout, cin, k, k}, false, rng)),
                  b.constant(name + "_b", test::random_tensor(f, {cout}, false, rng))},
                 ir::attrs(ir::Attribute::make_ints("pads", {pad, pad, pad, pad})), name);
        return o.relu && relu ? b.op("Relu", {y}, {}, name + "_relu") : y;
    };
    ir::Value* x = b.input("x", f, {o.batch, 8, 10, 10});
    ir::Value* s = conv(x, 8, 4, 1, 0, "squeeze");
    ir::Value* e1 = conv(s, 4, 6, 1, 0, "e1", !o.e1_alone);
    ir::Value* e3 = conv(s, 4, o.axis == 2 ? 6 : 5, 3, o.second_pad, "e3");  // axis 2: as e1
    std::vector<ir::Value*> parts = {e1, e3};
    if (o.pool_branch)
        parts.push_back(b.op("MaxPool", {s},
                             ir::attrs(ir::Attribute::make_ints("kernel_shape", {1, 1})), "pool"));
    ir::Value* cat =
        b.op("Concat", parts, ir::attrs(ir::Attribute::make_int("axis", o.axis)), "concat");
    b.output(b.op("Relu", {cat}, {}, "out"), f, {});
    if (o.expand_read) b.output(e1, f, {});
    return m;
}

TEST(SessionFuseConcat, ConvOutputsAreWrittenIntoTheConcat) {
    // Fused: 3 Relus into their Convs, and the Concat.
    EXPECT_EQ(check_fused_matches_plain(*fire({})), 3 + 1);
    EXPECT_EQ(check_fused_matches_plain(*fire({.axis = -3})), 3 + 1);
    EXPECT_EQ(check_fused_matches_plain(*fire({.relu = false})), 1);  // lone Convs
    // float64: lone Convs write in place; chains run their plain kernels, whose outputs the
    // Concat step copies into the buffer (allocated by the lone 1x1 Conv).
    const DataType f64 = DataType::kFloat64;
    EXPECT_EQ(check_fused_matches_plain(*fire({.relu = false, .dt = f64}), f64), 1);
    EXPECT_EQ(check_fused_matches_plain(*fire({.dt = f64}), f64), 3 + 1);
    EXPECT_EQ(check_fused_matches_plain(*fire({.e1_alone = true, .dt = f64}), f64), 2 + 1);
}

TEST(SessionFuseConcat, OtherInputsKeepThePlainConcat) {
    EXPECT_EQ(check_fused_matches_plain(*fire({.pool_branch = true})), 3);
    EXPECT_EQ(check_fused_matches_plain(*fire({.axis = 2})), 3);
    // The first input read elsewhere too: copied in as the base, the 3x3 branch in place.
    EXPECT_EQ(check_fused_matches_plain(*fire({.expand_read = true})), 3 + 1);
}

TEST(SessionFuseConcat, ShapesTheBufferDoesNotFitRunThePlainConcat) {
    EXPECT_EQ(check_fused_matches_plain(*fire({.batch = 2})), 3 + 1);
    const auto bad = fire({.second_pad = 0});  // 10x10 and 8x8 planes: Concat's own error
    runtime::SessionOptions off;
    off.fuse = false;
    runtime::Session fused(*bad, {}), plain(*bad, off);
    const runtime::Feeds feeds = test::random_fuse_feeds(*bad);
    std::string want, got;
    try {
        plain.run(feeds);
    } catch (const Error& e) {
        want = e.what();
    }
    try {
        fused.run(feeds);
    } catch (const Error& e) {
        got = e.what();
    }
    EXPECT_NE(want.find("Concat"), std::string::npos) << want;
    EXPECT_EQ(got, want);
}

// A DenseNet block: x -> MaxPool -> (BN -> Relu -> 3x3 Conv -> Concat with what came before)
// `layers` times; each Concat extends the previous one, read by the next layer's BN too.
// `branch`: a second Concat also extends the first one (it starts a chain of its own).
std::unique_ptr<ir::Model> dense_block(int layers, bool branch, int64_t batch = 1) {
    auto m = ir::new_model(13);
    ir::GraphBuilder b(*m->graph);
    std::mt19937 rng(8);
    const DataType f = DataType::kFloat32;
    ir::Value* x = b.input("x", f, {batch, 6, 9, 9});
    ir::Value* c = b.op("MaxPool", {x},
                        ir::attrs(ir::Attribute::make_ints("kernel_shape", {1, 1})), "pool");
    int64_t channels = 6;
    std::vector<ir::Value*> concats;
    for (int i = 0; i < layers; ++i) {
        const std::string name = "l" + std::to_string(i);
        ir::Value* y = b.op("Relu", {test::batch_norm(b, c, f, channels, rng, name + "_bn")}, {},
                            name + "_relu");
        y = b.op("Conv",
                 {y, b.constant(name + "_w", test::random_tensor(f, {4, channels, 3, 3}, false, rng))},
                 ir::attrs(ir::Attribute::make_ints("pads", {1, 1, 1, 1})), name + "_conv");
        c = b.op("Concat", {c, y}, ir::attrs(ir::Attribute::make_int("axis", 1)), name + "_cat");
        concats.push_back(c);
        channels += 4;
    }
    b.output(b.op("Relu", {c}, {}, "out"), f, {});
    if (branch) {
        ir::Value* y = b.op("Conv",
                            {concats[0], b.constant("bw", test::random_tensor(
                                                              f, {3, 10, 1, 1}, false, rng))},
                            {}, "branch_conv");
        b.output(b.op("Concat", {concats[0], y}, ir::attrs(ir::Attribute::make_int("axis", 1)),
                      "branch_cat"),
                 f, {});
    }
    return m;
}

TEST(SessionFuseConcat, ConcatsExtendingTheLastShareOneBuffer) {
    // Each layer: Relu into nothing (BN -> Relu fuses: 1), the Concat in place (1).
    EXPECT_EQ(check_fused_matches_plain(*dense_block(4, false)), 4 * (1 + 1));
    EXPECT_EQ(check_fused_matches_plain(*dense_block(4, true)), 4 * (1 + 1) + 1);
    EXPECT_EQ(check_fused_matches_plain(*dense_block(3, false, 2)), 3 * (1 + 1));  // plain Concats
}

TEST(ConcatSlice, OutputSpaceFallsBackToAFreshTensor) {
    ops::RtValue slot;
    const ops::ConcatSlice s{&slot, 2, 5};
    ops::OutputSpace a = ops::output_space(&s, DataType::kFloat32, {1, 3, 2, 2});  // allocates
    ASSERT_TRUE(slot.is_tensor());
    EXPECT_EQ(slot.tensor().dims(), (std::vector<int64_t>{1, 5, 2, 2}));
    EXPECT_EQ(a.data, slot.tensor().bytes() + 2 * 4 * sizeof(float));
    EXPECT_EQ(a.tensor.dims(), (std::vector<int64_t>{1, 3, 2, 2}));
    for (const auto& dims : std::vector<std::vector<int64_t>>{
             {2, 3, 2, 2},  // a batch of 2: not contiguous in the buffer
             {1, 4, 2, 2},  // past the total
             {1, 3, 2, 3}}) {
        ops::OutputSpace b = ops::output_space(&s, DataType::kFloat32, dims);
        EXPECT_NE(b.tensor.bytes(), nullptr);
        EXPECT_TRUE(b.data < slot.tensor().bytes() ||
                    b.data >= slot.tensor().bytes() + slot.tensor().nbytes());
    }
    // A chain with a base: the allocating producer reads the base's channels (4), a later one
    // the buffer's (the base may be released by then).
    ops::RtValue chain, base = ops::RtValue::of(Tensor::zeros(DataType::kFloat32, {1, 4, 2, 2}));
    ops::ConcatSlice first{&chain, 0, 6, &base}, later{&chain, 3, 6, &base};
    ops::OutputSpace f = ops::output_space(&first, DataType::kFloat32, {1, 3, 2, 2});
    ASSERT_TRUE(chain.is_tensor());
    EXPECT_EQ(chain.tensor().dims(), (std::vector<int64_t>{1, 10, 2, 2}));
    EXPECT_EQ(f.data, chain.tensor().bytes() + 4 * 4 * sizeof(float));
    base = ops::RtValue();
    ops::OutputSpace l = ops::output_space(&later, DataType::kFloat32, {1, 3, 2, 2});
    EXPECT_EQ(l.data, chain.tensor().bytes() + 7 * 4 * sizeof(float));
    ops::OutputSpace c = ops::output_space(&s, DataType::kFloat64, {1, 3, 2, 2});  // other type
    EXPECT_EQ(c.tensor.dtype(), DataType::kFloat64);
    EXPECT_TRUE(c.data < slot.tensor().bytes() ||
                c.data >= slot.tensor().bytes() + slot.tensor().nbytes());
}

}  // namespace
}  // namespace pg
