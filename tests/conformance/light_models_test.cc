// The nine classic CNNs of ../shared/data/onnx-light-models (weights replaced by ConstantOfShape)
// must reproduce their expected outputs on the reference interpreter.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <random>

#include "base/error.h"
#include "onnx/model_io.h"
#include "onnx/tensor_file.h"
#include "runtime/session.h"
#include "support/test_paths.h"

namespace pg {
namespace {

namespace fs = std::filesystem;

// Uniform [0, 1) float32 values for every real input (the expected outputs do not depend on
// the input values: constant weights make every class score equal).
runtime::Feeds random_feeds(const ir::Graph& g) {
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    runtime::Feeds feeds;
    for (const ir::Value* in : g.inputs()) {
        if (in->is_initializer() || !in->type().is_tensor() || !in->type().shape) continue;
        std::vector<int64_t> dims;
        for (const auto& d : *in->type().shape) dims.push_back(d.value.value_or(1));
        Tensor t = Tensor::zeros(DataType::kFloat32, dims);
        float* p = reinterpret_cast<float*>(t.mutable_bytes());
        for (uint64_t i = 0; i < t.numel(); ++i) p[i] = u(rng);
        feeds[in->name()] = ops::RtValue::of(std::move(t));
    }
    return feeds;
}

std::string check_model(const fs::path& model_path) {
    auto model = onnx::load_model(model_path.string());
    runtime::Session session(*model);
    auto results = session.run(random_feeds(*model->graph));
    std::string stem = model_path.stem().string();
    auto expected =
        onnx::read_value_pb((model_path.parent_path() / (stem + "_output_0.pb")).string());
    const Tensor& a = results.at(0).second.tensor();
    if (a.dims() != expected.tensor.dims()) return "shape differs";
    for (uint64_t i = 0; i < a.numel(); ++i) {
        const double e = expected.tensor.element_as_double(i), v = a.element_as_double(i);
        if (!(std::fabs(v - e) <= 1e-7 + 1e-3 * std::fabs(e)))
            return "element " + std::to_string(i) + ": " + std::to_string(v) + " vs " +
                   std::to_string(e);
    }
    return "";
}

TEST(LightModels, ReproduceExpectedOutputs) {
    const std::string shared = test::shared_dir();
    const fs::path dir = fs::path(shared) / "data/onnx-light-models";
    if (shared.empty() || !fs::is_directory(dir))
        GTEST_SKIP() << "../shared/data/onnx-light-models not present";
    int passed = 0, total = 0;
    for (const auto& e : fs::directory_iterator(dir)) {
        if (e.path().extension() != ".onnx") continue;
        ++total;
        std::string result;
        try {
            result = check_model(e.path());
        } catch (const Error& err) {
            result = err.what();
        }
        if (result.empty())
            ++passed;
        else
            ADD_FAILURE() << e.path().filename() << ": " << result;
    }
    std::printf("[light-models] %d of %d reproduce their expected outputs\n", passed, total);
    EXPECT_EQ(total, 9);
}

}  // namespace
}  // namespace pg
