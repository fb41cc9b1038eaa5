// `polygraph surgeon extract|sanitize|insert|prune`: exit statuses, written models, key lines.
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

std::vector<std::string> names(const std::vector<ir::Value*>& vs) {
    std::vector<std::string> out;
    for (ir::Value* v : vs) out.push_back(v->name());
    return out;
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

// x -> Relu -> t (value_info: float32 [2, 4]) -> Neg -> y ; x also -> Abs -> z (second output).
std::string write_chain_model(const std::string& dir) {
    auto m = ir::new_model(17);
    ir::Graph& g = *m->graph;
    ir::GraphBuilder b(g);
    ir::Value* x = b.input("x", DataType::kFloat32, {2, 4});
    ir::Value* t = b.op("Relu", {x}, {}, "relu");
    t->set_type(ir::TypeInfo::tensor(DataType::kFloat32, ir::make_shape({2, 4})));
    t->in_value_info = true;
    b.output(b.op("Neg", {t}, {}, "neg"), DataType::kFloat32, {2, 4});
    b.output(b.op("Abs", {x}, {}, "abs"), DataType::kFloat32, {2, 4});
    const std::string path = dir + "/chain.onnx";
    onnx::save_model(*m, path);
    return path;
}

TEST(SurgeonExtract, TutorialExplicitForm) {
    REQUIRE_SHARED(model, "examples/surgeon/01_isolating_subgraphs/model.onnx");
    const std::string out = test::make_temp_dir() + "/subgraph.onnx";
    auto r =
        test::run_polygraph({"surgeon", "extract", model, "--inputs", "x1:[1,3,224,224]:float32",
                             "--outputs", "add_out:float32", "-o", out});
    ASSERT_EQ(r.status, 0) << r.all();
    EXPECT_NE(r.out.find("[I] Original Model:"), std::string::npos);
    EXPECT_NE(r.out.find("[I] New Model:"), std::string::npos);
    EXPECT_NE(r.out.find("Saving ONNX model to: " + out), std::string::npos);
    auto m = onnx::load_model(out);
    EXPECT_EQ(ops(*m->graph), (std::vector<std::string>{"Mul", "Add"}));
    EXPECT_EQ(names(m->graph->inputs()), std::vector<std::string>{"x1"});
    EXPECT_EQ(names(m->graph->outputs()), std::vector<std::string>{"add_out"});
    EXPECT_EQ(m->graph->outputs()[0]->type().elem_type, DataType::kFloat32);
    EXPECT_EQ(m->graph->initializers().size(), 2u);
}

TEST(SurgeonExtract, TutorialAutoInputUsesRecordedType) {
    REQUIRE_SHARED(model, "examples/surgeon/01_isolating_subgraphs/model.onnx");
    const std::string out = test::make_temp_dir() + "/subgraph.onnx";
    auto r = test::run_polygraph({"surgeon", "extract", model, "--inputs", "x1:auto:auto",
                                  "--outputs", "add_out:float32", "-o", out});
    ASSERT_EQ(r.status, 0) << r.all();
    auto m = onnx::load_model(out);
    EXPECT_EQ(m->graph->inputs()[0]->type().shape, ir::make_shape({1, 3, 224, 224}));
}

TEST(SurgeonExtract, ValueInfoAndModelInputsAlias) {
    const std::string dir = test::make_temp_dir();
    const std::string model = write_chain_model(dir), out = dir + "/out.onnx";
    auto r =
        test::run_polygraph({"surgeon", "extract", model, "--model-inputs", "x:[2,4]", "--inputs",
                             "relu_out:auto:auto", "--outputs", "neg_out:auto", "-o", out});
    ASSERT_EQ(r.status, 0) << r.all();
    auto m = onnx::load_model(out);
    EXPECT_EQ(ops(*m->graph), std::vector<std::string>{"Neg"});
    EXPECT_EQ(names(m->graph->inputs()), std::vector<std::string>{"relu_out"});
    EXPECT_EQ(m->graph->inputs()[0]->type().shape, ir::make_shape({2, 4}));
    EXPECT_EQ(names(m->graph->outputs()), std::vector<std::string>{"neg_out"});
}

TEST(SurgeonExtract, ErrorsAndExitStatuses) {
    const std::string dir = test::make_temp_dir();
    const std::string model = write_chain_model(dir), out = dir + "/out.onnx";
    auto unknown =
        test::run_polygraph({"surgeon", "extract", model, "--inputs", "nope:auto:auto", "-o", out});
    EXPECT_EQ(unknown.status, 3) << unknown.all();
    EXPECT_NE(unknown.err.find("Tensor: nope does not exist in the model."), std::string::npos);
    auto no_out =
        test::run_polygraph({"surgeon", "extract", model, "--outputs", "neg_out:float32"});
    EXPECT_EQ(no_out.status, 2) << no_out.all();
    auto bad_dtype = test::run_polygraph(
        {"surgeon", "extract", model, "--outputs", "neg_out:float99", "-o", out});
    EXPECT_EQ(bad_dtype.status, 2) << bad_dtype.all();
    auto incomplete = test::run_polygraph(
        {"surgeon", "extract", model, "--inputs", "relu_out:auto:auto", "-o", out});
    EXPECT_EQ(incomplete.status, 3) << incomplete.all();  // Abs still needs x
    EXPECT_NE(incomplete.err.find("x"), std::string::npos);
    EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(SurgeonSanitize, CleanupRemovesDeadNodes) {
    REQUIRE_SHARED(model, "tests/cleanable.onnx");
    const std::string out = test::make_temp_dir() + "/clean.onnx";
    auto r = test::run_polygraph({"surgeon", "sanitize", model, "--cleanup", "-o", out});
    ASSERT_EQ(r.status, 0) << r.all();
    auto m = onnx::load_model(out);
    EXPECT_EQ(ops(*m->graph), (std::vector<std::string>{"Dropout", "Identity"}));
    EXPECT_EQ(names(m->graph->outputs()), std::vector<std::string>{"i"});
    EXPECT_EQ(names(m->graph->inputs()), (std::vector<std::string>{"e", "f"}));
}

TEST(SurgeonSanitize, ToposortOrdersNodes) {
    REQUIRE_SHARED(model, "tests/unsorted.onnx");
    const std::string out = test::make_temp_dir() + "/sorted.onnx";
    auto r = test::run_polygraph({"surgeon", "sanitize", model, "--toposort", "-o", out});
    ASSERT_EQ(r.status, 0) << r.all();
    auto m = onnx::load_model(out);
    ASSERT_EQ(m->graph->num_nodes(), 2u);
    EXPECT_EQ(m->graph->nodes()[0]->input(0)->name(), "input");
    EXPECT_EQ(m->graph->nodes()[1]->output(0)->name(), "identity_out_2");
}

TEST(SurgeonSanitize, OverrideInputShapesTutorial) {
    REQUIRE_SHARED(model, "examples/surgeon/03_modifying_input_shapes/identity.onnx");
    const std::string out = test::make_temp_dir() + "/dynamic.onnx";
    auto r = test::run_polygraph(
        {"surgeon", "sanitize", model, "--override-input-shapes", "x:['batch',1,2,2]", "-o", out});
    ASSERT_EQ(r.status, 0) << r.all();
    EXPECT_NE(r.out.find(
                  "Overriding input shapes to:\n    {x [dtype=float32, shape=('batch', 1, 2, 2)]}"),
              std::string::npos)
        << r.out;
    auto m = onnx::load_model(out);
    const ir::Shape& s = *m->graph->inputs()[0]->type().shape;
    ASSERT_EQ(s.size(), 4u);
    EXPECT_EQ(s[0].param, "batch");
    EXPECT_EQ(s[3], ir::Dim::known(2));
}

TEST(SurgeonSanitize, OutputsMarkAllAndExclude) {
    const std::string dir = test::make_temp_dir();
    const std::string model = write_chain_model(dir), out = dir + "/out.onnx";
    auto r = test::run_polygraph({"surgeon", "sanitize", model, "--outputs", "mark", "all",
                                  "--exclude-outputs", "abs_out", "-o", out});
    ASSERT_EQ(r.status, 0) << r.all();
    auto m = onnx::load_model(out);
    EXPECT_EQ(names(m->graph->outputs()), (std::vector<std::string>{"relu_out", "neg_out"}));
    auto missing =
        test::run_polygraph({"surgeon", "sanitize", model, "--outputs", "nope", "-o", out});
    EXPECT_EQ(missing.status, 3);
    EXPECT_NE(missing.err.find("The following outputs were not found in the model: nope"),
              std::string::npos);
}

// --fold-constants itself is tested in surgeon_fold_test.cc.
TEST(SurgeonSanitize, FoldArgsWithoutFoldConstantsAreIgnored) {
    const std::string dir = test::make_temp_dir();
    const std::string model = write_chain_model(dir), out = dir + "/out.onnx";
    auto ignored =
        test::run_polygraph({"surgeon", "sanitize", model, "--num-passes", "2",
                             "--fold-size-threshold", "1M", "--no-shape-inference", "-o", out});
    ASSERT_EQ(ignored.status, 0) << ignored.all();
    EXPECT_NE(
        ignored.out.find(
            "[W] Argument: '--num-passes' will be ignored since constant folding is not enabled."),
        std::string::npos)
        << ignored.out;
    auto bad =
        test::run_polygraph({"surgeon", "sanitize", model, "--partitioning", "x", "-o", out});
    EXPECT_EQ(bad.status, 2);
}

TEST(SurgeonInsert, InsertsTypedAttributes) {
    const std::string dir = test::make_temp_dir();
    const std::string model = write_chain_model(dir), out = dir + "/out.onnx";
    auto r = test::run_polygraph({"surgeon", "insert", model, "--inputs", "relu_out", "--outputs",
                                  "relu_out", "--op", "Custom", "--name", "custom", "--attrs",
                                  "i=1", "f=1.0", "s='53'", "l=[0,1]", "lf=[1,2.5]", "-o", out});
    ASSERT_EQ(r.status, 0) << r.all();
    auto m = onnx::load_model(out);
    EXPECT_EQ(ops(*m->graph), (std::vector<std::string>{"Relu", "Custom", "Neg", "Abs"}));
    const ir::Node& n = *m->graph->nodes()[1];
    EXPECT_EQ(n.name, "custom");
    EXPECT_EQ(n.output(0)->name(), "relu_out_polygraphy_surgeon_insert_output");
    EXPECT_EQ(m->graph->nodes()[2]->input(0)->name(), "relu_out_polygraphy_surgeon_insert_output");
    ASSERT_EQ(n.attributes.size(), 5u);
    EXPECT_EQ(n.find_attribute("i")->type, ir::AttrType::kInt);
    EXPECT_EQ(n.find_attribute("f")->type, ir::AttrType::kFloat);
    EXPECT_EQ(n.find_attribute("s")->type, ir::AttrType::kString);
    EXPECT_EQ(n.find_attribute("s")->s, "53");
    EXPECT_EQ(n.find_attribute("l")->ints, (std::vector<int64_t>{0, 1}));
    EXPECT_EQ(n.find_attribute("lf")->floats, (std::vector<float>{1.0f, 2.5f}));
}

TEST(SurgeonInsert, RequiredFlagsAndUnknownTensors) {
    const std::string dir = test::make_temp_dir();
    const std::string model = write_chain_model(dir), out = dir + "/out.onnx";
    auto no_op = test::run_polygraph(
        {"surgeon", "insert", model, "--inputs", "x", "--outputs", "x", "-o", out});
    EXPECT_EQ(no_op.status, 2) << no_op.all();
    auto unknown = test::run_polygraph({"surgeon", "insert", model, "--inputs", "zz", "--outputs",
                                        "neg_out", "--op", "Relu", "-o", out});
    EXPECT_EQ(unknown.status, 3) << unknown.all();
    EXPECT_NE(unknown.err.find("Tensor: zz does not exist in the model."), std::string::npos);
}

// Polygraphy's sparse.*.onnx are its own prune of the dense models: ours must match bit for bit.
void expect_prune_matches(const std::string& dense, const std::string& sparse) {
    const std::string out = test::make_temp_dir() + "/pruned.onnx";
    auto r = test::run_polygraph({"surgeon", "prune", dense, "-o", out});
    ASSERT_EQ(r.status, 0) << r.all();
    EXPECT_NE(r.out.find("Found: 1 weight tensor(s) eligible for pruning."), std::string::npos)
        << r.out;
    auto mine = onnx::load_model(out);
    auto theirs = onnx::load_model(sparse);
    ASSERT_EQ(mine->graph->initializers().size(), 1u);
    const Tensor& a = mine->graph->initializers()[0]->initializer()->tensor;
    const Tensor& b = theirs->graph->initializers()[0]->initializer()->tensor;
    EXPECT_TRUE(a.same_contents(b));
    auto original = onnx::load_model(dense);  // kept alive: orig refers into it
    const Tensor& orig = original->graph->initializers()[0]->initializer()->tensor;
    EXPECT_FALSE(a.same_contents(orig));
}

TEST(SurgeonPrune, MatMulMatchesPolygraphy) {
    REQUIRE_SHARED(dense, "tests/matmul.onnx");
    REQUIRE_SHARED(sparse, "tests/sparse.matmul.onnx");
    expect_prune_matches(dense, sparse);
}

TEST(SurgeonPrune, ConvMatchesPolygraphy) {
    REQUIRE_SHARED(dense, "tests/conv.onnx");
    REQUIRE_SHARED(sparse, "tests/sparse.conv.onnx");
    expect_prune_matches(dense, sparse);
}

TEST(Surgeon, HelpAndSubtoolDispatch) {
    for (const char* sub : {"extract", "sanitize", "insert", "prune"}) {
        auto r = test::run_polygraph({"surgeon", sub, "--help"});
        EXPECT_EQ(r.status, 0) << sub;
        EXPECT_NE(r.out.find("-o, --output"), std::string::npos) << sub;
    }
    auto listing = test::run_polygraph({"surgeon", "--help"});
    EXPECT_EQ(listing.status, 0);
    for (const char* sub : {"extract", "sanitize", "insert", "prune"})
        EXPECT_NE(listing.out.find(sub), std::string::npos);
    EXPECT_EQ(test::run_polygraph({"surgeon", "bogus"}).status, 2);
}

}  // namespace
}  // namespace pg
