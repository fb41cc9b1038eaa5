// The model zoo (tools/zoo) at tiny sizes: each model builds, survives a save/load round trip,
// runs on the reference interpreter with finite outputs of the declared shape, and agrees with
// ONNX Runtime when the library is installed. Also randomize_constant_of_shape_weights.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <random>

#include "base/error.h"
#include "ir/builder.h"
#include "onnx/model_io.h"
#include "runners/onnxrt_runner.h"
#include "runners/ref_runner.h"
#include "support/test_paths.h"
#include "zoo/zoo.h"

namespace pg {
namespace {

using ModelFn = std::function<std::unique_ptr<ir::Model>()>;

struct ZooCase {
    const char* name;
    ModelFn make;
};

std::vector<ZooCase> tiny_zoo() {
    return {
        {"resnet",
         [] {
             return zoo::resnet_style(
                 {.image = 32, .width = 4, .classes = 10, .blocks = {1, 1, 1, 1}});
         }},
        {"mobilenet",
         [] { return zoo::mobilenet_style({.image = 32, .width = 4, .classes = 10}); }},
        {"transformer",
         [] {
             return zoo::transformer_encoder(
                 {.seq = 8, .d_model = 16, .heads = 4, .layers = 2, .ffn = 32});
         }},
        {"lstm",
         [] {
             return zoo::lstm_model({.seq = 4, .batch = 2, .input = 8, .hidden = 16, .outputs = 4});
         }},
        {"chain", [] { return zoo::chain_model(30, 8); }},
        {"planted", [] { return zoo::planted_overflow_model({.nodes = 30, .width = 8}); }},
    };
}

std::map<std::string, Tensor> random_feeds(const ir::Model& m) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    std::map<std::string, Tensor> feeds;
    for (const auto& meta : runners::graph_input_metadata(*m.graph)) {
        std::vector<int64_t> dims;
        for (const auto& d : *meta.shape) dims.push_back(*d.value);
        Tensor t = Tensor::zeros(DataType::kFloat32, dims);
        float* p = reinterpret_cast<float*>(t.mutable_bytes());
        for (uint64_t i = 0; i < t.numel(); ++i) p[i] = u(rng);
        feeds[meta.name] = std::move(t);
    }
    return feeds;
}

runners::NamedTensors run_ref(const ir::Model& m, const std::map<std::string, Tensor>& feeds) {
    runners::RefRunnerOptions o;
    o.session.threads = 1;
    runners::RefRunner ref(m, o);
    return ref.infer(feeds);
}

std::vector<int64_t> declared_dims(const ir::Value* v) {
    std::vector<int64_t> dims;
    for (const auto& d : *v->type().shape) dims.push_back(*d.value);
    return dims;
}

TEST(Zoo, EachModelRoundTripsAndRunsWithFiniteOutputs) {
    for (const ZooCase& c : tiny_zoo()) {
        SCOPED_TRACE(c.name);
        auto built = c.make();
        EXPECT_EQ(built->opset_version(""), 17);
        const std::string path = test::make_temp_dir() + "/model.onnx";
        onnx::save_model(*built, path);
        auto loaded = onnx::load_model(path);
        ASSERT_EQ(loaded->graph->num_nodes(), built->graph->num_nodes());
        const auto out = run_ref(*loaded, random_feeds(*loaded));
        ASSERT_EQ(out.size(), 1u);
        const Tensor& t = out[0].second;
        EXPECT_EQ(t.dims(), declared_dims(loaded->graph->outputs()[0]));
        for (uint64_t i = 0; i < t.numel(); ++i)
            ASSERT_TRUE(std::isfinite(t.data<float>()[i])) << i;
    }
}

TEST(Zoo, SameSeedGivesSameWeightsAndOtherSeedDiffers) {
    const auto a =
        onnx::serialize_model(*zoo::lstm_model({.seq = 2, .input = 4, .hidden = 4, .seed = 9}));
    const auto b =
        onnx::serialize_model(*zoo::lstm_model({.seq = 2, .input = 4, .hidden = 4, .seed = 9}));
    const auto c =
        onnx::serialize_model(*zoo::lstm_model({.seq = 2, .input = 4, .hidden = 4, .seed = 10}));
    EXPECT_EQ(a, b);
    EXPECT_NE(a, c);
}

TEST(Zoo, ChainHasTheRequestedNodeCount) {
    EXPECT_EQ(zoo::chain_model(1)->graph->num_nodes(), 1u);
    EXPECT_EQ(zoo::chain_model(257)->graph->num_nodes(), 257u);
}

TEST(Zoo, TransformerRejectsHeadsThatDoNotDivideDModel) {
    EXPECT_THROW(zoo::transformer_encoder({.d_model = 10, .heads = 4}), Error);
}

// x -> Add(ConstantOfShape([2, 3])) and a bias ConstantOfShape([3]) -> y.
std::unique_ptr<ir::Model> constant_of_shape_model() {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, {2, 3});
    auto shape = [&](const std::string& name, std::vector<int64_t> v) {
        const auto n = static_cast<int64_t>(v.size());
        return b.constant(name, Tensor::from_values(DataType::kInt64, {n}, v));
    };
    ir::Value* w = b.op("ConstantOfShape", {shape("w_shape", {2, 3})}, {}, "make_w");
    ir::Value* bias = b.op("ConstantOfShape", {shape("b_shape", {3})}, {}, "make_b");
    b.output(b.op("Add", {b.op("Add", {x, w}), bias}), DataType::kFloat32, {2, 3});
    return m;
}

TEST(Zoo, RandomizeConstantOfShapeWeightsMakesRandomInitializers) {
    auto m = constant_of_shape_model();
    const std::string w_name = m->graph->nodes()[0]->output(0)->name();
    EXPECT_EQ(zoo::randomize_constant_of_shape_weights(*m, 3), 2);
    EXPECT_EQ(m->graph->num_nodes(), 2u);
    ASSERT_EQ(m->graph->initializers().size(), 2u);  // the int64 shapes are gone
    const ir::Value* w = m->graph->find_value(w_name);
    ASSERT_TRUE(w && w->is_initializer());
    const Tensor& t = w->initializer()->tensor;
    EXPECT_EQ(t.dims(), (std::vector<int64_t>{2, 3}));
    const float bound = std::sqrt(3.0f / 3.0f);
    for (uint64_t i = 0; i < t.numel(); ++i) {
        EXPECT_LE(std::abs(t.data<float>()[i]), bound);
        EXPECT_NE(t.data<float>()[i], 0.0f);
    }
    const Tensor& bias = m->graph->initializers()[1]->initializer()->tensor;
    for (uint64_t i = 0; i < bias.numel(); ++i) EXPECT_LE(std::abs(bias.data<float>()[i]), 0.1f);
    const auto out = run_ref(*m, random_feeds(*m));
    EXPECT_EQ(out[0].second.dims(), (std::vector<int64_t>{2, 3}));
}

TEST(Zoo, RandomizedBatchNormScaleAndVarianceArePositive) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, {1, 3, 2, 2});
    ir::Value* shape =
        b.constant("c", Tensor::from_values(DataType::kInt64, {1}, std::vector<int64_t>{3}));
    std::vector<ir::Value*> in = {x};
    for (const char* name : {"scale", "offset", "mean", "var"})
        in.push_back(b.op("ConstantOfShape", {shape}, {}, name));
    b.output(b.op("BatchNormalization", in), DataType::kFloat32, {1, 3, 2, 2});
    EXPECT_EQ(zoo::randomize_constant_of_shape_weights(*m, 5), 4);
    for (const ir::Value* v : m->graph->initializers()) {
        const Tensor& t = v->initializer()->tensor;
        const bool positive = v->name() == "scale_out" || v->name() == "var_out";
        for (uint64_t i = 0; i < t.numel(); ++i) {
            const float f = t.data<float>()[i];
            EXPECT_TRUE(positive ? f >= 0.5f && f < 1.5f : std::abs(f) <= 0.1f)
                << v->name() << " " << f;
        }
    }
}

TEST(Zoo, RandomizesTheLightModelsWhenPresent) {
    const std::string path = test::shared_dir() + "/data/onnx-light-models/light_squeezenet.onnx";
    if (test::shared_dir().empty() || !std::filesystem::exists(path))
        GTEST_SKIP() << "light models not found: " << path;
    auto m = onnx::load_model(path);
    EXPECT_GT(zoo::randomize_constant_of_shape_weights(*m, 1), 0);
    for (const auto& n : m->graph->nodes()) EXPECT_NE(n->op_type, "ConstantOfShape");
}

TEST(Zoo, ReferenceAgreesWithOnnxRuntime) {
    try {
        runners::load_onnxrt_library();
    } catch (const Error& e) {
        GTEST_SKIP() << "ONNX Runtime not available (run `make setup`): " << e.what();
    }
    runners::OnnxRtOptions opts;
    opts.intra_op_threads = 1;
    for (const ZooCase& c : tiny_zoo()) {
        SCOPED_TRACE(c.name);
        auto m = c.make();
        const std::string path = test::make_temp_dir() + "/model.onnx";
        onnx::save_model(*m, path);
        const auto feeds = random_feeds(*m);
        const Tensor want = run_ref(*m, feeds)[0].second;
        runners::OnnxRtRunner ort(path, opts);
        const Tensor got = ort.infer(feeds)[0].second;
        ASSERT_EQ(want.dims(), got.dims());
        for (uint64_t i = 0; i < want.numel(); ++i) {
            const double a = want.data<float>()[i], b = got.data<float>()[i];
            EXPECT_LE(std::abs(a - b), 1e-4 * std::max(std::abs(b), 1e-6)) << i;
        }
    }
}

}  // namespace
}  // namespace pg
