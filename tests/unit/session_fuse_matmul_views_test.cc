// Transposes around a MatMul folded into it (runtime/fuse_matmul_views.cc, ops/matmul_views.h):
// attention's head split and merge run as strided per-head GEMMs, bit-identical to the plain
// steps; a Transpose read elsewhere stays a step; views without a unit stride run the plain
// kernels inside the fused step.
#include <gtest/gtest.h>

#include "ir/builder.h"
#include "runtime/session.h"
#include "support/fuse_check.h"

namespace pg {
namespace {

using test::check_fused_matches_plain;

struct Attention {
    std::vector<int64_t> perm_q = {0, 2, 1, 3};  // Q [1, S, H, D] -> [1, H, S, D]
    std::vector<int64_t> perm_k = {0, 2, 3, 1};  // K [1, S, H, D] -> [1, H, D, S]
    std::vector<int64_t> perm_y = {0, 2, 1, 3};  // the product back to [1, S, H, D]
    bool q_also_output = false;                  // the transposed Q is a graph output too
};

// x [1, S, H * D] -> Reshape (q, k) -> Transposes -> MatMul -> Transpose -> Reshape; S = 24,
// H = 4, D = 16 (each product 24 x 24 x 16 or, with perm_k = perm_q, a square of 16s).
std::unique_ptr<ir::Model> attention(const Attention& o) {
    auto m = ir::new_model(13);
    ir::GraphBuilder b(*m->graph);
    auto perm = [](const std::vector<int64_t>& p) {
        return ir::attrs(ir::Attribute::make_ints("perm", p));
    };
    ir::Value* q = b.input("q", DataType::kFloat32, {1, 24, 64});
    ir::Value* k = b.input("k", DataType::kFloat32, {1, 24, 64});
    ir::Value* heads = test::int64_constant(b, "heads", {1, 24, 4, 16});
    ir::Value* qt =
        b.op("Transpose", {b.op("Reshape", {q, heads}, {}, "rq")}, perm(o.perm_q), "tq");
    ir::Value* kt =
        b.op("Transpose", {b.op("Reshape", {k, heads}, {}, "rk")}, perm(o.perm_k), "tk");
    ir::Value* s = b.op("MatMul", {qt, kt}, {}, "mm");
    ir::Value* y = b.op("Transpose", {s}, perm(o.perm_y), "ty");
    b.output(b.op("Relu", {y}, {}, "relu"));
    if (o.q_also_output) b.output(qt);
    return m;
}

TEST(SessionFuseMatMulViews, AttentionTransposesFoldIntoTheMatMul) {
    EXPECT_EQ(check_fused_matches_plain(*attention({})), 3);  // Q's, K's and the product's
}

TEST(SessionFuseMatMulViews, UntransposedOperandAndStoredTransposedOperands) {
    Attention o;
    o.perm_k = {0, 2, 1, 3};  // K as V is in attention: [1, H, S, D], no transposed storage
    o.perm_q = {0, 2, 3, 1};  // Q read as [1, H, D, S]: A stored transposed
    // [1, 4, 16, 24] x [1, 4, 24, 16] -> [1, 4, 16, 16], then [1, 16, 4, 16].
    EXPECT_EQ(check_fused_matches_plain(*attention(o)), 3);
}

TEST(SessionFuseMatMulViews, ATransposeReadElsewhereStaysAStep) {
    Attention o;
    o.q_also_output = true;
    EXPECT_EQ(check_fused_matches_plain(*attention(o)), 2);  // K's and the product's only
}

TEST(SessionFuseMatMulViews, ViewsWithoutAUnitStrideRunThePlainKernels) {
    Attention o;
    o.perm_q = {0, 3, 2, 1};  // [1, 16, 4, 24] rows: neither axis of a matrix is unit-strided
    o.perm_k = {0, 3, 1, 2};  // [1, 16, 24, 4]
    o.perm_y = {0, 1, 2, 3};  // [1, 16, 4, 4]
    EXPECT_EQ(check_fused_matches_plain(*attention(o)), 3);
}

TEST(SessionFuseMatMulViews, SwitchedOffNothingFolds) {
    const bool was = runtime::set_fuse_matmul_transposes(false);
    EXPECT_EQ(check_fused_matches_plain(*attention({})), 0);
    runtime::set_fuse_matmul_transposes(was);
}

}  // namespace
}  // namespace pg
