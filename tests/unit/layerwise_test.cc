// Layer-wise pairing: streaming pairs, bounded buffering, marking runners in groups, selection.
#include <gtest/gtest.h>

#include "base/error.h"
#include "ir/builder.h"
#include "layerwise/layerwise.h"
#include "onnx/model_io.h"
#include "runners/onnxrt_runner.h"
#include "runners/ref_runner.h"
#include "support/test_paths.h"

namespace pg {
namespace {

// x -> Mul(w) -> Relu -> ... a chain of n ops (plus a Constant node that mark all skips).
std::unique_ptr<ir::Model> chain(int n) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* v = b.input("x", DataType::kFloat32, std::vector<int64_t>{64});
    ir::Value* c =
        b.op("Constant", {},
             ir::attrs(ir::Attribute::make_tensor(
                 "value", Tensor::from_values(DataType::kFloat32, {}, std::vector<float>{0.5f}))),
             "const");
    for (int i = 0; i < n; ++i)
        v = b.op(i % 2 ? "Relu" : "Mul",
                 i % 2 ? std::vector<ir::Value*>{v} : std::vector<ir::Value*>{v, c});
    b.output(v, DataType::kFloat32, {64});
    return m;
}

struct Recorder : layerwise::PairSink {
    std::vector<std::string> names;
    bool all_equal = true;
    void on_pair(const std::string&, const std::string& name, const Tensor& a,
                 const Tensor& b) override {
        names.push_back(name);
        all_equal = all_equal && a.same_contents(b);
    }
};

std::map<std::string, Tensor> feeds() {
    std::vector<float> x(64);
    for (int i = 0; i < 64; ++i) x[i] = static_cast<float>(i - 32);
    return {{"x", Tensor::from_values(DataType::kFloat32, {64}, x)}};
}

TEST(Layerwise, MarkAllSkipsConstantsAndKeepsOrder) {
    auto m = chain(4);
    auto names = layerwise::select_tensors(*m, {"mark", "all"});
    EXPECT_EQ(names,
              (std::vector<std::string>{"Mul_0_out", "Relu_1_out", "Mul_2_out", "Relu_3_out"}));
    EXPECT_EQ(layerwise::select_tensors(*m, {"Relu_.*"}).size(), 2u);
    EXPECT_THROW(layerwise::select_tensors(*m, {"nothing_like_this"}), Error);
    // --trt-outputs mark all --onnx-outputs mark all: one list with `mark all` twice.
    EXPECT_EQ(layerwise::select_tensors(*m, {"mark", "all", "mark", "all"}), names);
    EXPECT_EQ(layerwise::select_tensors(*m, {"mark-all", "Relu_1_out"}), names);
}

TEST(Layerwise, TwoStreamingRunnersPairEveryTensorWithATinyBudget) {
    auto m = chain(40);
    runners::RefRunner a(*m, {}), b(*m, {});
    layerwise::Options o;
    o.tensors = layerwise::select_tensors(*m, {"mark", "all"});
    o.memory_budget = 1;  // forces one tensor at a time
    Recorder r;
    auto stats = layerwise::compare_layerwise(a, b, feeds(), o, r);
    EXPECT_EQ(r.names, o.tensors);
    EXPECT_TRUE(r.all_equal);
    EXPECT_EQ(stats.pairs, 40u);
    EXPECT_LE(stats.peak_buffered, 2u * 64 * 4);
}

TEST(Layerwise, MarkingRunnerIsRunPerGroup) {
    auto m = chain(12);
    const std::string path = test::make_temp_dir() + "/m.onnx";
    onnx::save_model(*m, path);
    runners::OnnxRtOptions oo;
    oo.model = m.get();
    oo.intra_op_threads = 1;
    std::unique_ptr<runners::OnnxRtRunner> ort;
    try {
        ort = std::make_unique<runners::OnnxRtRunner>(path, oo);
    } catch (const Error& e) {
        GTEST_SKIP() << "ONNX Runtime not available: " << e.message();
    }
    runners::RefRunner ref(*m, {});
    layerwise::Options o;
    o.tensors = layerwise::select_tensors(*m, {"mark", "all"});
    o.memory_budget = 2 * 3 * 64 * 4;  // three tensors per group
    Recorder r;
    auto stats = layerwise::compare_layerwise(ref, *ort, feeds(), o, r);
    EXPECT_EQ(r.names, o.tensors);
    EXPECT_TRUE(r.all_equal);
    EXPECT_EQ(stats.groups, 4u);
    EXPECT_TRUE(stats.missing.empty());
}

TEST(Layerwise, BudgetParsing) {
    EXPECT_EQ(layerwise::parse_budget("256M"), 256u << 20);
    EXPECT_EQ(layerwise::parse_budget("1G"), 1u << 30);
    EXPECT_THROW(layerwise::parse_budget("lots"), Error);
}

}  // namespace
}  // namespace pg
