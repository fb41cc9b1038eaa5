// `polygraph inspect model`: text layout, --json counts, errors and exit statuses.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "ir/builder.h"
#include "onnx/model_io.h"
#include "support/cli_runner.h"
#include "support/test_paths.h"

namespace pg {
namespace {

// x -> Conv(w) -> Relu -> If(then: Identity, else: Neg) ; known counts for --json checks.
std::string write_known_model(const std::string& dir) {
    auto m = ir::new_model(17, "known");
    m->opset_imports.push_back({"com.example", 1});
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input(
        "x", DataType::kFloat32,
        ir::Shape{ir::Dim::symbolic("N"), ir::Dim::known(3), ir::Dim::known(8), ir::Dim::known(8)});
    ir::Value* w = b.constant("w", Tensor::zeros(DataType::kFloat32, {4, 3, 3, 3}));
    ir::Value* c =
        b.op("Conv", {x, w}, ir::attrs(ir::Attribute::make_ints("kernel_shape", {3, 3})), "conv");
    ir::Value* r = b.op("Relu", {c}, {}, "relu");
    ir::Value* cond = b.constant("cond", Tensor::from_values<uint8_t>(DataType::kBool, {}, {1}));
    ir::Node* iff = b.op_multi("If", {cond}, 1, {}, "if");
    for (const char* branch : {"then_branch", "else_branch"}) {
        auto sub = std::make_unique<ir::Graph>(m->graph.get());
        sub->name = branch;
        ir::GraphBuilder sb(*sub);
        sb.output(sb.op(branch[0] == 't' ? "Identity" : "Neg", {r}));
        sub->set_owner_node(iff);
        ir::Attribute a;
        a.name = branch;
        a.type = ir::AttrType::kGraph;
        a.graphs.push_back(std::move(sub));
        iff->attributes.push_back(std::move(a));
    }
    b.output(iff->output(0), DataType::kFloat32, {1, 4, 6, 6});
    const std::string path = dir + "/known.onnx";
    onnx::save_model(*m, path);
    return path;
}

TEST(InspectModel, JsonCountsMatchTheModel) {
    const std::string path = write_known_model(test::make_temp_dir());
    auto r = test::run_polygraph({"inspect", "model", path, "--json"});
    ASSERT_EQ(r.status, 0) << r.all();
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["num_nodes"], 3);
    EXPECT_EQ(j["num_nodes_total"], 5);
    EXPECT_EQ(j["op_counts"]["Conv"], 1);
    EXPECT_EQ(j["op_counts"]["If"], 1);
    EXPECT_EQ(j["num_initializers"], 2);
    EXPECT_EQ(j["initializer_bytes"], 4 * 3 * 3 * 3 * 4 + 1);
    EXPECT_EQ(j["opsets"]["ai.onnx"], 17);
    EXPECT_EQ(j["opsets"]["com.example"], 1);
    EXPECT_EQ(j["inputs"][0]["name"], "x");
    EXPECT_EQ(j["inputs"][0]["dtype"], "float32");
    EXPECT_EQ(j["inputs"][0]["shape"][0], "N");
    EXPECT_EQ(j["inputs"][0]["shape"][1], 3);
    EXPECT_EQ(j["outputs"][0]["shape"][3], 6);
    EXPECT_EQ(j["ir_version"], 8);
}

TEST(InspectModel, TextShowsPolygraphyLayout) {
    const std::string path = write_known_model(test::make_temp_dir());
    auto r = test::run_polygraph({"inspect", "model", path, "--show", "layers", "attrs"});
    ASSERT_EQ(r.status, 0) << r.all();
    EXPECT_NE(r.out.find("[I] ==== ONNX Model ====\n    Name: known | ONNX Opset: 17 | Other "
                         "Opsets: {'com.example': 1}"),
              std::string::npos)
        << r.out;
    EXPECT_NE(
        r.out.find("---- 1 Graph Input(s) ----\n    {x [dtype=float32, shape=('N', 3, 8, 8)]}"),
        std::string::npos);
    EXPECT_NE(r.out.find(
                  "Node 0    | conv [Op: Conv]\n        {x [dtype=float32, shape=('N', 3, 8, 8)],\n"
                  "         Initializer | w [dtype=float32, shape=(4, 3, 3, 3)]}\n         -> "
                  "{conv_out}"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("conv.kernel_shape = [3, 3]"), std::string::npos);
    EXPECT_NE(r.out.find("---- 1 Subgraph Output(s) ----"), std::string::npos);
}

TEST(InspectModel, DefaultHidesNodes) {
    const std::string path = write_known_model(test::make_temp_dir());
    auto r = test::run_polygraph({"inspect", "model", path});
    ASSERT_EQ(r.status, 0) << r.all();
    EXPECT_NE(r.out.find("---- 2 Initializer(s) ----\n    \n    ---- 3 Node(s) ----"),
              std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find("Node 0"), std::string::npos);
}

// 64-bit integer initializers print exactly (a Loop's trip count of 2^63 - 1, as tf2onnx writes
// it, printed as 9223372036854775808 through a double).
TEST(InspectModel, Int64ValuesPrintExactly) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kInt64, std::vector<int64_t>{2});
    ir::Value* k = b.constant(
        "k", Tensor::from_values<int64_t>(DataType::kInt64, {2}, {INT64_MAX, INT64_MIN + 1}));
    b.output(b.op("Add", {x, k}, {}, "add"), DataType::kInt64, {2});
    const std::string path = test::make_temp_dir() + "/int64.onnx";
    onnx::save_model(*m, path);
    auto r = test::run_polygraph({"inspect", "model", path, "--show", "weights"});
    ASSERT_EQ(r.status, 0) << r.all();
    EXPECT_NE(r.out.find("9223372036854775807"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("-9223372036854775807"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("9223372036854775808"), std::string::npos) << r.out;
}

TEST(InspectModel, MissingFileIsExitThree) {
    auto r = test::run_polygraph({"inspect", "model", "/nonexistent/model.onnx"});
    EXPECT_EQ(r.status, 3);
    EXPECT_NE(r.err.find("/nonexistent/model.onnx"), std::string::npos) << r.err;
}

TEST(InspectModel, BadFlagIsExitTwo) {
    auto r = test::run_polygraph({"inspect", "model", "x.onnx", "--no-such-flag"});
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("--no-such-flag"), std::string::npos);
}

// The tutorials' TensorRT forms: an engine (by extension or --model-type engine) is refused as
// opaque without TensorRT (exit 4) even when it holds ONNX bytes; --display-as trt shows the
// ONNX layers with a warning; other model types are refused naming the conversion.
TEST(InspectModel, EnginesAndOtherTypesAreRefusedAndTrtDisplayWarns) {
    const std::string dir = test::make_temp_dir();
    const std::string m = write_known_model(dir);
    ASSERT_EQ(std::system(("cp " + m + " " + dir + "/model.engine").c_str()), 0);
    auto engine = test::run_polygraph({"inspect", "model", dir + "/model.engine", "--mode=full",
                                       "--display-as=trt"});
    EXPECT_EQ(engine.status, 4) << engine.all();
    EXPECT_NE(engine.err.find("TensorRT engine"), std::string::npos) << engine.err;
    EXPECT_EQ(test::run_polygraph({"inspect", "model", m, "--model-type", "engine"}).status, 4);
    auto tf = test::run_polygraph({"inspect", "model", m, "--model-type=frozen"});
    EXPECT_EQ(tf.status, 4);
    EXPECT_NE(tf.err.find("convert it to ONNX"), std::string::npos) << tf.err;
    auto trt = test::run_polygraph({"inspect", "model", m, "--display-as=trt", "--show", "layers"});
    EXPECT_EQ(trt.status, 0) << trt.all();
    EXPECT_NE(trt.out.find("[W] --display-as trt"), std::string::npos) << trt.out;
    EXPECT_NE(trt.out.find("==== ONNX Model ===="), std::string::npos);
}

TEST(InspectModel, HelpExplainsFlags) {
    auto r = test::run_polygraph({"inspect", "model", "--help"});
    EXPECT_EQ(r.status, 0);
    EXPECT_NE(r.out.find("--show"), std::string::npos);
    EXPECT_NE(r.out.find("--json"), std::string::npos);
}

TEST(InspectModel, PolygraphyIdentityExampleMatchesCapturedOutput) {
    const std::string shared = test::shared_dir();
    if (shared.empty()) GTEST_SKIP() << "../shared not present";
    auto r = test::run_polygraph(
        {"inspect", "model",
         shared +
             "/data/polygraphy-models/examples/inspect/03_inspecting_an_onnx_model/identity.onnx",
         "--show", "layers"});
    ASSERT_EQ(r.status, 0) << r.all();
    const std::string expected =
        "[I] ==== ONNX Model ====\n"
        "    Name: test_identity | ONNX Opset: 8\n"
        "    \n"
        "    ---- 1 Graph Input(s) ----\n"
        "    {x [dtype=float32, shape=(1, 1, 2, 2)]}\n"
        "    \n"
        "    ---- 1 Graph Output(s) ----\n"
        "    {y [dtype=float32, shape=(1, 1, 2, 2)]}\n"
        "    \n"
        "    ---- 0 Initializer(s) ----\n"
        "    {}\n"
        "    \n"
        "    ---- 1 Node(s) ----\n"
        "    Node 0    |  [Op: Identity]\n"
        "        {x [dtype=float32, shape=(1, 1, 2, 2)]}\n"
        "         -> {y [dtype=float32, shape=(1, 1, 2, 2)]}\n";
    EXPECT_NE(r.out.find(expected), std::string::npos) << r.out;
}

}  // namespace
}  // namespace pg
