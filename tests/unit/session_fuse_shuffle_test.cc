// ShuffleNet's channel shuffle (Reshape -> Transpose -> Reshape after a Conv chain) folded into
// the fused Conv step (runtime/fuse.cc, ops/conv_fused.h): bit-identical to the plain steps;
// shapes that turn out not to shuffle channels run the plain kernels inside the fused step; a
// shuffle read elsewhere, after a residual, with another perm or after a depthwise Conv stays
// out.
#include <gtest/gtest.h>

#include <random>

#include "ir/builder.h"
#include "support/fuse_check.h"

namespace pg {
namespace {

using test::check_fused_matches_plain;

struct ShuffleNet {
    bool bn = true;                                // Conv -> BN -> Relu, else the Conv alone
    std::vector<int64_t> first = {1, 3, 4, 9, 9};  // the first Reshape's shape
    std::vector<int64_t> perm = {0, 2, 1, 3, 4};   // the Transpose's
    std::vector<int64_t> second = {1, 12, 9, 9};   // the second Reshape's
    int64_t group = 2;                             // the Conv's (12 output channels)
    bool transposed_out = false;                   // the Transpose's output is a graph output
    bool residual = false;                         // an Add of the input before the Relu
};

// x [1, 12, 9, 9] -> 1x1 Conv (12 channels) -> [BN] -> [Add x] -> [Relu] -> Reshape -> Transpose
// -> Reshape -> Relu.
std::unique_ptr<ir::Model> shuffle_net(const ShuffleNet& o) {
    auto m = ir::new_model(13);
    ir::GraphBuilder b(*m->graph);
    std::mt19937 rng(9);
    const DataType f = DataType::kFloat32;
    auto ints = [&](const std::string& name, const std::vector<int64_t>& v) {
        return test::int64_constant(b, name, v);
    };
    ir::Value* x = b.input("x", f, {1, 12, 9, 9});
    ir::Value* y = b.op(
        "Conv", {x, b.constant("w", test::random_tensor(f, {12, 12 / o.group, 1, 1}, false, rng))},
        ir::attrs(ir::Attribute::make_int("group", o.group)), "conv");
    if (o.bn) y = test::batch_norm(b, y, f, 12, rng);
    if (o.residual) y = b.op("Add", {y, x}, {}, "add");
    if (o.bn) y = b.op("Relu", {y}, {}, "relu");
    ir::Value* r = b.op("Reshape", {y, ints("s1", o.first)}, {}, "reshape1");
    ir::Value* t =
        b.op("Transpose", {r}, ir::attrs(ir::Attribute::make_ints("perm", o.perm)), "transpose");
    ir::Value* z = b.op("Reshape", {t, ints("s2", o.second)}, {}, "reshape2");
    b.output(b.op("Relu", {z}, {}, "out"), f, {1, 12, 9, 9});
    if (o.transposed_out) b.output(t, f, {});
    return m;
}

TEST(SessionFuseShuffle, TheShuffleFoldsIntoTheConvStep) {
    EXPECT_EQ(check_fused_matches_plain(*shuffle_net({})), 5);  // BN, Relu, the shuffle's 3
    EXPECT_EQ(check_fused_matches_plain(*shuffle_net({.bn = false})), 3);
    // 0 and -1 in the shapes; groups 1, 3 and 6 against a shuffle by 3 or 4.
    EXPECT_EQ(check_fused_matches_plain(
                  *shuffle_net({.first = {0, 4, -1, 9, 9}, .second = {0, -1, 9, 9}})),
              5);
    for (int64_t group : {1, 3, 6})
        EXPECT_EQ(check_fused_matches_plain(*shuffle_net({.group = group})), 5) << group;
}

TEST(SessionFuseShuffle, ShapesThatDoNotShuffleChannelsRunThePlainKernels) {
    // Fused (the plan cannot tell), but at run time the first Reshape splits the rows, not the
    // channels: the fused step runs the plain kernels and gives the plain result.
    EXPECT_EQ(check_fused_matches_plain(
                  *shuffle_net({.first = {1, 12, 3, 3, 9}, .second = {1, 12, 9, 9}})),
              5);
    // The second Reshape does not return to the Conv's dims.
    EXPECT_EQ(check_fused_matches_plain(
                  *shuffle_net({.first = {1, 3, 4, 9, 9}, .second = {1, 12, 81, 1}})),
              5);
}

TEST(SessionFuseShuffle, OtherPatternsStayOut) {
    // Another perm: BN and Relu fuse, the shuffle does not.
    EXPECT_EQ(check_fused_matches_plain(*shuffle_net({.perm = {0, 1, 2, 4, 3}})), 2);
    EXPECT_EQ(check_fused_matches_plain(*shuffle_net({.transposed_out = true})), 2);
    // After a residual Add: BN, Relu and the Add fuse; the shuffle stays out.
    EXPECT_EQ(check_fused_matches_plain(*shuffle_net({.residual = true})), 3);
    // Depthwise (group 12 = channels): no shuffle in that kernel.
    EXPECT_EQ(check_fused_matches_plain(*shuffle_net({.group = 12})), 2);
}

}  // namespace
}  // namespace pg
