// emu/emu_runner.h on models built here: --accumulate fp16 blocks MatMul's K sum, evidence
// counts NaN/Inf produced, float32 nodes run untouched.
#include <gtest/gtest.h>

#include <cmath>

#include "emu/emu_runner.h"
#include "ir/builder.h"

namespace pg::emu {
namespace {

// y = x @ w with x = ones [1, 64] and w [64, 1] = {1024, 0.4, 0 x 31, 0.4, 0 x 30}.
std::unique_ptr<ir::Model> matmul_model() {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{1, 64});
    std::vector<float> w(64, 0.0f);
    w[0] = 1024.0f, w[1] = 0.4f, w[33] = 0.4f;
    ir::Value* y = b.op("MatMul", {x, b.constant_f32("w", {64, 1}, w)}, {}, "mm");
    b.output(y, DataType::kFloat32, {1, 1});
    return m;
}

float run_one(const ir::Model& m, EmuRunnerOptions o) {
    EmuRunner r(m, std::move(o));
    std::map<std::string, Tensor> feeds;
    feeds["x"] =
        Tensor::from_values<float>(DataType::kFloat32, {1, 64}, std::vector<float>(64, 1.0f));
    return r.infer(feeds).at(0).second.data<float>()[0];
}

TEST(EmuRunner, AccumulateFp16RoundsEachBlock) {
    auto m = matmul_model();
    EmuRunnerOptions o;
    o.policy.default_precision = Precision::kFP16;
    EXPECT_EQ(run_one(*m, o), 1025.0f);  // 1024.8 in float32, rounded once
    o.emulation.accumulate_fp16 = true;
    EXPECT_EQ(run_one(*m, o), 1024.0f);  // 1024.4 -> 1024, then + 0.4 -> 1024
    o.policy.default_precision = Precision::kFP32;
    EXPECT_NEAR(run_one(*m, o), 1024.8f, 1e-4);  // float32 nodes ignore --accumulate
}

TEST(EmuRunner, EvidenceCountsInfProduced) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{2});
    ir::Value* y = b.op("Mul", {x, b.constant_f32("k", {1}, {1000.0f})}, {}, "scale");
    b.output(y, DataType::kFloat32, {2});
    EmuRunnerOptions o;
    o.policy.default_precision = Precision::kFP16;
    EmuRunner r(*m, o);
    std::map<std::string, Tensor> feeds;
    feeds["x"] = Tensor::from_values<float>(DataType::kFloat32, {2}, {1.0f, 100.0f});
    auto out = r.infer(feeds);
    EXPECT_EQ(out.at(0).second.data<float>()[0], 1000.0f);
    EXPECT_TRUE(std::isinf(out.at(0).second.data<float>()[1]));
    const NodeEvidence* e = r.evidence().find("scale");
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->outputs.overflow, 1u);
    EXPECT_EQ(e->nonfinite_produced, 1u);
    EXPECT_EQ(e->outputs.max_abs, 100000.0);
    EXPECT_TRUE(e->notable());
    ASSERT_EQ(r.resolved_precisions().size(), 1u);
    EXPECT_EQ(r.resolved_precisions()[0].second, Precision::kFP16);
}

}  // namespace
}  // namespace pg::emu
