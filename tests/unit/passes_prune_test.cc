// passes::prune: 2:4 groups along the right axis, candidate tracing, eligibility.
#include <gtest/gtest.h>

#include "base/float16.h"
#include "ir/builder.h"
#include "passes/prune.h"

namespace pg {
namespace {

std::vector<float> values_of(const Tensor& t) {
    return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
}

Tensor f32(std::vector<int64_t> dims, std::vector<float> v) {
    return Tensor::from_values(DataType::kFloat32, std::move(dims), v);
}

TEST(PassesPrune, ZeroesTwoSmallestMagnitudesPerGroup) {
    Tensor t = f32({8}, {4, -1, 3, 2, -5, 6, 0.5f, -7});
    EXPECT_FALSE(passes::is_2_4_sparse(t, 0));
    Tensor p = passes::prune_2_4(t, 0);
    EXPECT_EQ(values_of(p), (std::vector<float>{4, 0, 3, 0, 0, 6, 0, -7}));
    EXPECT_TRUE(passes::is_2_4_sparse(p, 0));
    EXPECT_EQ(values_of(t)[1], -1);  // the input is not modified
}

TEST(PassesPrune, TiesGoToTheFirstOccurrence) {
    Tensor p = passes::prune_2_4(f32({4}, {1, 1, 1, 1}), 0);
    EXPECT_EQ(values_of(p), (std::vector<float>{0, 0, 1, 1}));
}

TEST(PassesPrune, GroupsRunAlongTheAxis) {
    // 4 x 2, axis 0: each column is one group; axis 1 has size 2 and cannot be pruned.
    Tensor t = f32({4, 2}, {1, 8, 2, 7, 3, 6, 4, 5});
    Tensor p = passes::prune_2_4(t, 0);
    EXPECT_EQ(values_of(p), (std::vector<float>{0, 8, 0, 7, 3, 0, 4, 0}));
    // 2 x 4, axis 1: each row is one group.
    Tensor q = passes::prune_2_4(f32({2, 4}, {1, 8, 2, 7, 3, 6, 4, 5}), 1);
    EXPECT_EQ(values_of(q), (std::vector<float>{0, 8, 0, 7, 0, 6, 0, 5}));
}

TEST(PassesPrune, Float16IsPruned) {
    std::vector<uint16_t> bits;
    for (float f : {0.25f, -3.0f, 2.0f, 0.5f}) bits.push_back(float_to_half_bits(f));
    Tensor p = passes::prune_2_4(Tensor::from_values(DataType::kFloat16, {4}, bits), 0);
    const uint16_t* out = p.data<uint16_t>();
    EXPECT_EQ(out[0], 0);
    EXPECT_EQ(half_bits_to_float(out[1]), -3.0f);
    EXPECT_EQ(half_bits_to_float(out[2]), 2.0f);
    EXPECT_EQ(out[3], 0);
}

TEST(PassesPrune, CandidatesFollowTransposeAndGemmFlags) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, {4, 4});
    ir::Value* w = b.constant("w", Tensor::zeros(DataType::kFloat32, {8, 4}));
    ir::Value* wt = b.op("Transpose", {w}, ir::attrs(ir::Attribute::make_ints("perm", {1, 0})));
    ir::Value* mm = b.op("MatMul", {x, wt});
    ir::Value* g = b.constant("g", Tensor::zeros(DataType::kFloat32, {8, 4}));
    ir::Value* gemm = b.op("Gemm", {mm, g}, ir::attrs(ir::Attribute::make_int("transB", 1)));
    ir::Value* k = b.constant("k", Tensor::zeros(DataType::kFloat32, {4, 8, 3, 3}));
    ir::Value* c = b.op("Cast", {k});
    b.output(b.op("Conv", {gemm, c}));
    auto cands = passes::find_prune_candidates(*m->graph);
    ASSERT_EQ(cands.size(), 3u);
    EXPECT_EQ(cands[0].name, "w");  // MatMul input 1 axis 0 -> perm.index(0) = 1
    EXPECT_EQ(cands[0].axis, 1);
    EXPECT_EQ(cands[1].name, "g");  // Gemm B with transB
    EXPECT_EQ(cands[1].axis, 1);
    EXPECT_EQ(cands[2].name, "k");  // Conv weight through Cast
    EXPECT_EQ(cands[2].axis, 1);
}

TEST(PassesPrune, OnlyEligibleWeightsAreChanged) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, {2, 4});
    ir::Value* good = b.constant_f32("good", {4, 1}, {1, 2, 3, 4});
    ir::Value* odd = b.constant_f32("odd", {3, 1}, {1, 2, 3});
    ir::Value* ints =
        b.constant("ints", Tensor::from_values<int32_t>(DataType::kInt32, {4, 1}, {1, 2, 3, 4}));
    ir::Value* sparse = b.constant_f32("sparse", {4, 1}, {0, 2, 0, 4});
    b.output(b.op("MatMul", {x, good}));
    b.output(b.op("MatMul", {x, odd}));
    b.output(b.op("MatMul", {x, ints}));
    b.output(b.op("MatMul", {x, sparse}));
    passes::PruneReport r = passes::prune(*m->graph);
    ASSERT_EQ(r.eligible.size(), 2u);
    EXPECT_EQ(r.pruned, std::vector<std::string>{"good"});
    EXPECT_EQ(r.already_sparse, std::vector<std::string>{"sparse"});
    EXPECT_EQ(values_of(good->initializer()->tensor), (std::vector<float>{0, 0, 3, 4}));
    EXPECT_EQ(values_of(odd->initializer()->tensor), (std::vector<float>{1, 2, 3}));
}

}  // namespace
}  // namespace pg
