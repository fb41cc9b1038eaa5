// Runner capabilities behind layer-wise comparison: streaming (reference) and marking
// intermediates as outputs (ONNX Runtime).
#include <gtest/gtest.h>

#include "base/error.h"
#include "ir/builder.h"
#include "onnx/model_io.h"
#include "runners/marked_outputs.h"
#include "runners/onnxrt_runner.h"
#include "runners/ref_runner.h"
#include "support/test_paths.h"

namespace pg {
namespace {

std::unique_ptr<ir::Model> three_ops() {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{4});
    ir::Value* w = b.constant_f32("w", {4}, {1, -2, 3, -4});
    ir::Value* y = b.op("Mul", {x, w}, {}, "mul");
    ir::Value* z = b.op("Relu", {y}, {}, "relu");
    ir::Value* o = b.op("Add", {z, x}, {}, "add");
    b.output(o, DataType::kFloat32, {4});
    return m;
}

struct Collect : runners::TensorSink {
    std::vector<std::pair<std::string, std::string>> seen;
    std::map<std::string, Tensor> tensors;
    void on_tensor(const std::string& producer, const std::string& name, const Tensor& t) override {
        seen.emplace_back(producer, name);
        tensors[name] = t;
    }
};

std::map<std::string, Tensor> feeds() {
    return {{"x", Tensor::from_values(DataType::kFloat32, {4}, std::vector<float>{1, 2, 3, 4})}};
}

TEST(RunnersLayerwise, ReferenceStreamsEveryNodeOutputInOrder) {
    auto m = three_ops();
    runners::RefRunner ref(*m, {});
    Collect c;
    auto out = ref.infer_streaming(feeds(), c);
    ASSERT_EQ(c.seen.size(), 3u);
    EXPECT_EQ(c.seen[0], (std::pair<std::string, std::string>{"mul", "mul_out"}));
    EXPECT_EQ(c.seen[2].second, "add_out");
    EXPECT_EQ(c.tensors["relu_out"].data<float>()[1], 0.0f);  // 2 * -2 clipped
    EXPECT_EQ(out.at(0).second.data<float>()[2], 12.0f);      // 3*3 + 3
}

TEST(RunnersLayerwise, OnnxRuntimeMarksIntermediatesAsOutputs) {
    auto m = three_ops();
    const std::string path = test::make_temp_dir() + "/m.onnx";
    onnx::save_model(*m, path);
    runners::OnnxRtOptions o;
    o.model = m.get();
    o.intra_op_threads = 1;
    std::unique_ptr<runners::OnnxRtRunner> ort;
    try {
        ort = std::make_unique<runners::OnnxRtRunner>(path, o);
    } catch (const Error& e) {
        GTEST_SKIP() << "ONNX Runtime not available: " << e.message();
    }
    auto marked = ort->with_outputs({"mul_out", "relu_out"});
    ASSERT_TRUE(marked);
    EXPECT_EQ(marked->name(), ort->name());
    auto out = marked->infer(feeds());
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].first, "mul_out");
    EXPECT_EQ(out[0].second.data<float>()[3], -16.0f);
    EXPECT_EQ(out[1].second.data<float>()[2], 9.0f);
    EXPECT_THROW(ort->with_outputs({"no_such_tensor"}), Error);
}

// A runner that can neither stream nor mark outputs.
struct Opaque : runners::Runner {
    std::string n = "opaque";
    const std::string& name() const override { return n; }
    std::vector<runners::TensorMeta> input_metadata() const override { return {}; }
    runners::NamedTensors infer(const std::map<std::string, Tensor>&) override { return {}; }
    double last_inference_time() const override { return 0; }
};

// with_marked_outputs: the named tensors in the order asked (a graph output among them, a name
// nothing produces left out) from the streaming reference, under the runner's name; a runner
// that can do neither is refused.
TEST(RunnersLayerwise, MarkedOutputsOfAStreamingRunnerComeInTheOrderAsked) {
    auto m = three_ops();
    runners::RefRunner ref(*m, {});
    auto marked = runners::with_marked_outputs(ref, {"add_out", "mul_out", "x"});
    EXPECT_EQ(marked->name(), ref.name());
    auto out = marked->infer(feeds());
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].first, "add_out");
    EXPECT_EQ(out[0].second.data<float>()[2], 12.0f);
    EXPECT_EQ(out[1].first, "mul_out");
    EXPECT_EQ(out[1].second.data<float>()[3], -16.0f);
    Opaque opaque;
    try {
        runners::with_marked_outputs(opaque, {"y"});
        FAIL() << "an opaque runner was accepted";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
    }
}

}  // namespace
}  // namespace pg
