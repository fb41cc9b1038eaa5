// `polygraph surgeon sanitize --fold-constants / --force-fallback-shape-inference` and
// `surgeon extract` with `auto` metadata the model does not record (reference interpreter).
#include <gtest/gtest.h>

#include <filesystem>

#include "ir/builder.h"
#include "onnx/model_io.h"
#include "support/cli_runner.h"
#include "support/test_paths.h"

namespace pg {
namespace {

std::vector<std::string> ops(const ir::Graph& g) {
    std::vector<std::string> out;
    for (const auto& n : g.nodes()) out.push_back(n->op_type);
    return out;
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// A Polygraphy model from the shared data folder, or "" (the test then skips).
std::string shared_model(const std::string& rel) {
    const std::string shared = test::shared_dir();
    if (shared.empty()) return "";
    const std::string p = shared + "/data/polygraphy-models/" + rel;
    return std::filesystem::exists(p) ? p : "";
}

#define REQUIRE_SHARED(var, rel)               \
    const std::string var = shared_model(rel); \
    if (var.empty()) GTEST_SKIP() << "shared model absent: " << rel

// x ['N', 4] -> Relu -> Neg -> y ; y2 = x + (a + c3) where a + c3 cannot broadcast ([4] + [3]);
// only value types of x are recorded.
std::string write_dynamic_model(const std::string& dir, bool with_bad_branch) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, {ir::Dim::symbolic("N"), ir::Dim::known(4)});
    ir::Value* r = b.op("Relu", {x}, {}, "relu");
    b.output(b.op("Neg", {r}, {}, "neg"));
    if (with_bad_branch) {
        ir::Value* bad = b.op(
            "Add", {b.constant_f32("a", {4}, {1, 2, 3, 4}), b.constant_f32("c3", {3}, {1, 2, 3})},
            {}, "bad_add");
        b.output(b.op("Add", {x, bad}, {}, "use_bad"));
    }
    const std::string path = dir + "/dynamic.onnx";
    onnx::save_model(*m, path);
    return path;
}

TEST(SurgeonFold, TutorialFoldsConstants) {
    REQUIRE_SHARED(model, "examples/surgeon/02_folding_constants/model.onnx");
    const std::string out = test::make_temp_dir() + "/folded.onnx";
    auto r = test::run_polygraph({"surgeon", "sanitize", model, "--fold-constants", "-o", out});
    ASSERT_EQ(r.status, 0) << r.all();
    EXPECT_TRUE(contains(r.out, "[I] Folding Constants | Pass 1\n")) << r.out;
    EXPECT_TRUE(contains(r.out,
                         "[I]     Total Nodes | Original:     3, After Folding:     1 | "
                         "    2 Nodes Folded"))
        << r.out;
    EXPECT_TRUE(contains(r.out, "[I] Folding Constants | Pass 2\n")) << r.out;
    EXPECT_FALSE(contains(r.out, "Pass 3")) << r.out;
    auto m = onnx::load_model(out);
    EXPECT_EQ(ops(*m->graph), std::vector<std::string>{"Add"});
    ASSERT_EQ(m->graph->initializers().size(), 1u);
    EXPECT_EQ(m->graph->initializers()[0]->name(), "e");
    EXPECT_EQ(m->graph->nodes()[0]->input(1)->name(), "e");
}

TEST(SurgeonFold, NumPassesAndSizeThreshold) {
    REQUIRE_SHARED(model, "examples/surgeon/02_folding_constants/model.onnx");
    const std::string dir = test::make_temp_dir(), out = dir + "/folded.onnx";
    auto one = test::run_polygraph(
        {"surgeon", "sanitize", model, "--fold-constants", "--num-passes", "1", "-o", out});
    ASSERT_EQ(one.status, 0) << one.all();
    EXPECT_FALSE(contains(one.out, "Pass 2")) << one.out;
    // Each folded tensor holds 12 bytes.
    auto small = test::run_polygraph({"surgeon", "sanitize", model, "--fold-constants",
                                      "--fold-size-threshold", "8", "-o", out});
    ASSERT_EQ(small.status, 0) << small.all();
    EXPECT_EQ(onnx::load_model(out)->graph->num_nodes(), 3u);
}

TEST(SurgeonFold, FailingNodeWarnsAndStays) {
    const std::string dir = test::make_temp_dir();
    const std::string model = write_dynamic_model(dir, true), out = dir + "/out.onnx";
    auto r = test::run_polygraph({"surgeon", "sanitize", model, "--fold-constants",
                                  "--partitioning", "recursive", "-o", out});
    ASSERT_EQ(r.status, 0) << r.all();
    EXPECT_TRUE(contains(r.out, "[W] Inference failed for node: 'bad_add' (Add)")) << r.out;
    EXPECT_EQ(ops(*onnx::load_model(out)->graph),
              (std::vector<std::string>{"Relu", "Neg", "Add", "Add"}));
}

TEST(SurgeonFold, ForceFallbackShapeInferenceRecordsTypes) {
    const std::string dir = test::make_temp_dir();
    const std::string model = write_dynamic_model(dir, false), out = dir + "/out.onnx";
    auto r = test::run_polygraph(
        {"surgeon", "sanitize", model, "--force-fallback-shape-inference", "-o", out});
    ASSERT_EQ(r.status, 0) << r.all();
    EXPECT_TRUE(contains(r.out, "Will generate data of shape: [1, 4]")) << r.out;
    auto m = onnx::load_model(out);
    const ir::Value* relu = m->graph->find_value("relu_out");
    ASSERT_NE(relu, nullptr);
    EXPECT_EQ(relu->type(), ir::TypeInfo::tensor(DataType::kFloat32, ir::make_shape({1, 4})));
    EXPECT_EQ(m->graph->outputs()[0]->type().shape, ir::make_shape({1, 4}));
}

TEST(SurgeonFold, ExtractTutorialAutoForm) {
    REQUIRE_SHARED(model, "examples/surgeon/01_isolating_subgraphs/model.onnx");
    const std::string out = test::make_temp_dir() + "/subgraph.onnx";
    auto r = test::run_polygraph({"surgeon", "extract", model, "--inputs", "x1:auto:auto",
                                  "--outputs", "add_out:auto", "-o", out});
    ASSERT_EQ(r.status, 0) << r.all();
    EXPECT_TRUE(contains(r.out, "Running inference with the reference interpreter")) << r.out;
    auto m = onnx::load_model(out);
    EXPECT_EQ(ops(*m->graph), (std::vector<std::string>{"Mul", "Add"}));
    EXPECT_EQ(m->graph->inputs()[0]->type().shape, ir::make_shape({1, 3, 224, 224}));
    ASSERT_EQ(m->graph->outputs().size(), 1u);
    EXPECT_EQ(m->graph->outputs()[0]->name(), "add_out");
    EXPECT_EQ(m->graph->outputs()[0]->type().elem_type, DataType::kFloat32);
    // The model's inputs are static: the shape ONNX shape inference gives Polygraphy.
    EXPECT_EQ(m->graph->outputs()[0]->type().shape, ir::make_shape({1, 3, 224, 224}));
}

TEST(SurgeonFold, ExtractAutoUsesModelInputShapes) {
    const std::string dir = test::make_temp_dir();
    const std::string model = write_dynamic_model(dir, false), out = dir + "/out.onnx";
    auto r =
        test::run_polygraph({"surgeon", "extract", model, "--model-inputs", "x:[3,4]", "--inputs",
                             "relu_out:auto:auto", "--outputs", "neg_out:auto", "-o", out});
    ASSERT_EQ(r.status, 0) << r.all();
    auto m = onnx::load_model(out);
    EXPECT_EQ(ops(*m->graph), std::vector<std::string>{"Neg"});
    EXPECT_EQ(m->graph->inputs()[0]->type(),
              ir::TypeInfo::tensor(DataType::kFloat32, ir::make_shape({3, 4})));
    // Output shapes come from the run only when forced.
    EXPECT_FALSE(m->graph->outputs()[0]->type().shape.has_value());
    auto forced = test::run_polygraph(
        {"surgeon", "extract", model, "--model-inputs", "x:[3,4]", "--inputs", "relu_out:auto:auto",
         "--outputs", "neg_out:auto", "--force-fallback-shape-inference", "-o", out});
    ASSERT_EQ(forced.status, 0) << forced.all();
    EXPECT_EQ(onnx::load_model(out)->graph->outputs()[0]->type().shape, ir::make_shape({3, 4}));
}

TEST(SurgeonFold, ExtractAutoFailsWhenTheModelCannotRun) {
    const std::string dir = test::make_temp_dir();
    const std::string model = write_dynamic_model(dir, true), out = dir + "/out.onnx";
    auto r = test::run_polygraph({"surgeon", "extract", model, "--inputs", "relu_out:auto:auto",
                                  "--outputs", "neg_out:auto", "-o", out});
    EXPECT_EQ(r.status, 3) << r.all();
    EXPECT_TRUE(contains(r.err, "bad_add")) << r.err;
    EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
}  // namespace pg
