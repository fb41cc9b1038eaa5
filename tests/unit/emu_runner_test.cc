// emu/emu_runner.h on models built here: --accumulate fp16 blocks MatMul's K sum, evidence
// counts NaN/Inf produced, float32 nodes run untouched.
#include <gtest/gtest.h>

#include <cmath>

#include "emu/emu_runner.h"
#include "ir/builder.h"
#include "support/emu_expect.h"
#include "zoo/zoo.h"

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

// Feeds of the model's float inputs, uniform in [-scale, scale] (other dtypes zero).
std::map<std::string, Tensor> scaled_feeds(const runners::Runner& r, float scale) {
    std::map<std::string, Tensor> feeds;
    uint32_t state = 12345;
    for (const auto& m : r.input_metadata()) {
        std::vector<int64_t> dims;
        for (const auto& d : *m.shape) dims.push_back(d.value.value_or(1));
        Tensor t = Tensor::zeros(m.dtype, dims);
        if (m.dtype == DataType::kFloat32)
            for (uint64_t i = 0; i < t.numel(); ++i) {
                state = state * 1664525u + 1013904223u;
                reinterpret_cast<float*>(t.mutable_bytes())[i] =
                    scale * (static_cast<float>(state >> 8) / 8388608.0f - 1.0f);
            }
        feeds[m.name] = t;
    }
    return feeds;
}

void expect_same_stats(const RoundingStats& a, const RoundingStats& b, const std::string& what) {
    test::expect_same_rounding_stats(a, b, what);
}

// Inputs a producer already rounded skip the consumer's check (RoundedValues): the evidence must
// be what checking every input gives (emulate_kernel without RoundedValues), on every run.
TEST(EmuRunner, SkippedChecksKeepTheEvidence) {
    std::vector<std::unique_ptr<ir::Model>> models;
    models.push_back(
        zoo::resnet_style({.image = 32, .width = 4, .classes = 10, .blocks = {1, 1, 1, 1}}));
    models.push_back(zoo::mobilenet_style({.image = 32, .width = 4, .classes = 10}));
    models.push_back(
        zoo::transformer_encoder({.seq = 8, .d_model = 16, .heads = 4, .layers = 2, .ffn = 32}));
    for (const auto& m : models)
        for (Precision p : {Precision::kFP16, Precision::kBF16, Precision::kFP8E4M3,
                            Precision::kFP8E5M2, Precision::kTF32})
            for (RoundingMode mode : {RoundingMode::kNearestEven, RoundingMode::kTowardZero})
                for (float scale : {1.0f, 3e4f}) {
                    EmuRunnerOptions o;
                    o.session.threads = 2;
                    o.policy.default_precision = p;
                    o.emulation.rounding = mode;
                    EmuRunner emu(*m, o);
                    const auto feeds = scaled_feeds(emu, scale);
                    auto plain_evidence = std::make_shared<EvidenceTable>();
                    runtime::SessionOptions so = o.session;
                    std::map<const ir::Node*, Precision> resolved(emu.resolved_precisions().begin(),
                                                                  emu.resolved_precisions().end());
                    so.kernel_wrapper = [resolved, eo = o.emulation, ev = plain_evidence](
                                            const ir::Node& n, ops::KernelFn k) {
                        auto it = resolved.find(&n);
                        const Precision np = it == resolved.end() ? Precision::kFP32 : it->second;
                        return emulate_kernel(n, std::move(k), np, eo, ev.get());
                    };
                    runtime::Session plain(*m, so);
                    runtime::Feeds rt;
                    for (const auto& [name, t] : feeds) rt[name] = ops::RtValue::of(t);
                    auto want = plain.run(rt, nullptr);
                    for (int run = 0; run < 2; ++run) {
                        auto got = emu.infer(feeds);
                        ASSERT_EQ(got.size(), want.size());
                        for (size_t i = 0; i < got.size(); ++i) {
                            ASSERT_EQ(got[i].first, want[i].first);
                            EXPECT_TRUE(got[i].second.same_contents(want[i].second.tensor()))
                                << got[i].first;
                        }
                        const auto& a = emu.evidence().entries();
                        const auto& b = plain_evidence->entries();
                        ASSERT_EQ(a.size(), b.size());
                        for (size_t i = 0; i < a.size(); ++i) {
                            const std::string what = a[i].first + " @" + precision_name(p) +
                                                     " scale " + std::to_string(scale);
                            ASSERT_EQ(a[i].first, b[i].first);
                            expect_same_stats(a[i].second.inputs, b[i].second.inputs, what);
                            expect_same_stats(a[i].second.outputs, b[i].second.outputs, what);
                            EXPECT_EQ(a[i].second.nonfinite_produced,
                                      b[i].second.nonfinite_produced)
                                << what;
                        }
                        EXPECT_EQ(evidence_lines(emu.evidence()), evidence_lines(*plain_evidence));
                    }
                }
}

}  // namespace
}  // namespace pg::emu
