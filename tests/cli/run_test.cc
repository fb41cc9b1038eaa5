// `polygraph run`: the tutorial commands, file round trips, layer-wise mode, exit statuses.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <limits>

#include <nlohmann/json.hpp>

#include "base/fs.h"
#include "ir/builder.h"
#include "onnx/model_io.h"
#include "support/cli_runner.h"
#include "support/test_paths.h"

namespace pg {
namespace {

std::string shared_model(const std::string& rel) {
    const std::string root = test::shared_dir();
    if (root.empty()) return "";
    const std::string p = root + "/data/polygraphy-models/" + rel;
    return std::filesystem::exists(p) ? p : "";
}

// y = x + c (float32 [2,3]); a chain of `extra` Relu/Add nodes before the output.
std::string add_model(const std::string& dir, float c, int extra = 0,
                      const std::string& name = "m.onnx") {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{2, 3});
    ir::Value* k = b.constant_f32("k", {}, {c});
    ir::Value* v = b.op("Add", {x, k}, {}, "add");
    for (int i = 0; i < extra; ++i)
        v = b.op(i % 2 ? "Add" : "Relu",
                 i % 2 ? std::vector<ir::Value*>{v, k} : std::vector<ir::Value*>{v});
    v->set_type(ir::TypeInfo::tensor(DataType::kFloat32, ir::make_shape({2, 3})));
    b.output(v);
    const std::string path = dir + "/" + name;
    onnx::save_model(*m, path);
    return path;
}

// y = Min(x + inf, 1): an infinite intermediate ('hidden_out') behind a finite output
// ('min_out').
std::string hidden_infinity_model(const std::string& dir) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{2, 3});
    ir::Value* inf = b.constant_f32("inf", {}, {std::numeric_limits<float>::infinity()});
    ir::Value* one = b.constant_f32("one", {}, {1.0f});
    ir::Value* hidden = b.op("Add", {x, inf}, {}, "hidden");
    ir::Value* y = b.op("Min", {hidden, one}, {}, "min");
    y->set_type(ir::TypeInfo::tensor(DataType::kFloat32, ir::make_shape({2, 3})));
    b.output(y);
    const std::string path = dir + "/hidden_inf.onnx";
    onnx::save_model(*m, path);
    return path;
}

bool has_ort(const std::string& model) {
    auto r = test::run_polygraph({"run", model, "--onnxrt", "-q"});
    return r.status == 0;
}

// Two ReduceMean-18 nodes with an `axes` attribute, which opset 18 moved to an input.
std::string reduce_mean_axes_attribute_model(const std::string& dir) {
    auto m = ir::new_model(18);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{2, 3});
    for (const char* name : {"mean_a", "mean_b"})
        b.output(b.op("ReduceMean", {x}, ir::attrs(ir::Attribute::make_ints("axes", {1})), name));
    const std::string path = dir + "/reduce.onnx";
    onnx::save_model(*m, path);
    return path;
}

TEST(Run, AnIgnoredAttributeIsWarnedOnce) {
    const std::string dir = test::make_temp_dir();
    auto r = test::run_polygraph({"run", reduce_mean_axes_attribute_model(dir), "--ref"});
    EXPECT_EQ(r.status, 0) << r.all();
    const std::string warning =
        "[W] node 'mean_a' (ReduceMean, opset 18): attribute 'axes' is ignored; ReduceMean does "
        "not define it at this opset";
    const size_t at = r.out.find(warning);
    EXPECT_NE(at, std::string::npos) << r.all();
    EXPECT_EQ(r.out.find("is ignored", at + warning.size()), std::string::npos) << r.all();
}

TEST(Run, TwoRunnersAgree) {
    const std::string dir = test::make_temp_dir();
    const std::string m = add_model(dir, 1.0f, 6);
    if (!has_ort(m)) GTEST_SKIP() << "ONNX Runtime not available";
    auto r = test::run_polygraph({"run", m, "--onnxrt", "--ref"});
    EXPECT_EQ(r.status, 0) << r.all();
    EXPECT_NE(r.out.find("PASSED | All outputs matched"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("| Completed 1 iteration(s) in"), std::string::npos);
}

TEST(Run, SaveAndLoadInputsAndOutputs) {
    const std::string dir = test::make_temp_dir();
    const std::string m = add_model(dir, 1.0f);
    auto r1 = test::run_polygraph({"run", m, "--ref", "--save-inputs", dir + "/inputs.json",
                                   "--save-outputs", dir + "/out.json"});
    ASSERT_EQ(r1.status, 0) << r1.all();
    auto r2 = test::run_polygraph({"run", m, "--ref", "--load-inputs", dir + "/inputs.json",
                                   "--load-outputs", dir + "/out.json", "--atol", "0.001", "--rtol",
                                   "0.001"});
    EXPECT_EQ(r2.status, 0) << r2.all();
    EXPECT_NE(r2.out.find("Pass Rate: 100.0%"), std::string::npos) << r2.out;
}

// Saves m, runs it with --save-inputs / --save-outputs, then again on the saved inputs against
// the saved outputs at zero tolerance; the second run's result.
test::CliResult rerun_on_saved_inputs(const ir::Model& m) {
    const std::string dir = test::make_temp_dir(), path = dir + "/m.onnx";
    onnx::save_model(m, path);
    auto first = test::run_polygraph({"run", path, "--ref", "--save-inputs", dir + "/in.json",
                                      "--save-outputs", dir + "/out.json"});
    EXPECT_EQ(first.status, 0) << first.all();
    return test::run_polygraph({"run", path, "--ref", "--load-inputs", dir + "/in.json",
                                "--load-outputs", dir + "/out.json", "--atol", "0", "--rtol", "0"});
}

// A graph input listed twice (Polygraphy's bad_graph_with_dup_value_info.onnx) is one input:
// the saved inputs are the ones the run used (two were generated, and the other one saved).
TEST(Run, AnInputListedTwiceIsSavedAsRun) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{4});
    m->graph->add_input(x);
    b.output(b.op("Add", {x, x}), DataType::kFloat32, {4});
    const auto r = rerun_on_saved_inputs(*m);
    EXPECT_EQ(r.status, 0) << r.all();
}

// A bfloat16 input is saved as float32 (numpy has no bfloat16) and read back as bfloat16.
TEST(Run, ABfloat16InputSavedAsFloat32LoadsBack) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kBFloat16, std::vector<int64_t>{4});
    b.output(b.op("Add", {x, x}), DataType::kBFloat16, {4});
    const auto r = rerun_on_saved_inputs(*m);
    EXPECT_EQ(r.status, 0) << r.all();
    EXPECT_NE(r.all().find("float32 values read as bfloat16"), std::string::npos) << r.all();
}

TEST(Run, MismatchAgainstSavedOutputsIsExitOne) {
    const std::string dir = test::make_temp_dir();
    const std::string a = add_model(dir, 1.0f, 0, "a.onnx"), b = add_model(dir, 2.0f, 0, "b.onnx");
    ASSERT_EQ(test::run_polygraph({"run", a, "--ref", "--save-outputs", dir + "/a.json"}).status,
              0);
    auto r = test::run_polygraph({"run", b, "--ref", "--load-outputs", dir + "/a.json", "--json"});
    EXPECT_EQ(r.status, 1) << r.all();
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["passed"], false);
}

TEST(Run, DefaultInputsEqualPolygraphysSeedOneStream) {
    const std::string shared = test::shared_dir();
    if (shared.empty()) GTEST_SKIP() << "../shared not present";
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{1, 1, 2, 2});
    ir::Value* i = b.input("i", DataType::kInt32, std::vector<int64_t>{3});
    ir::Value* bb = b.input("b", DataType::kBool, std::vector<int64_t>{2});
    for (ir::Value* v : {x, i, bb}) b.output(b.op("Identity", {v}));
    const std::string dir = test::make_temp_dir();
    onnx::save_model(*m, dir + "/m.onnx");
    auto r = test::run_polygraph(
        {"run", dir + "/m.onnx", "--ref", "--save-inputs", dir + "/inputs.json"});
    ASSERT_EQ(r.status, 0) << r.all();
    EXPECT_EQ(read_file(dir + "/inputs.json"),
              read_file(shared + "/data/polygraphy-files/inputs.json"));
}

TEST(Run, LoadsPolygraphysOwnFiles) {
    const std::string shared = test::shared_dir();
    if (shared.empty()) GTEST_SKIP() << "../shared not present";
    auto r =
        test::run_polygraph({"inspect", "data", shared + "/data/polygraphy-files/outputs.json"});
    EXPECT_EQ(r.status, 0) << r.all();
}

TEST(Run, DynamicIdentityTutorial) {
    const std::string m =
        shared_model("examples/run/01_comparing_frameworks/dynamic_identity.onnx");
    if (m.empty()) GTEST_SKIP() << "shared model absent";
    if (!has_ort(m)) GTEST_SKIP() << "ONNX Runtime not available";
    auto r = test::run_polygraph({"run", m, "--onnxrt", "--ref", "--input-shapes", "X:[1,2,4,4]"});
    EXPECT_EQ(r.status, 0) << r.all();
    EXPECT_NE(r.out.find("shape=(1, 2, 4, 4)"), std::string::npos);
}

TEST(Run, AddInfinityFailsValidationAndSaysWhere) {
    const std::string m = shared_model("examples/run/07_checking_nan_inf/add_infinity.onnx");
    if (m.empty()) GTEST_SKIP() << "shared model absent";
    auto r = test::run_polygraph({"run", m, "--ref", "--validate"});
    EXPECT_EQ(r.status, 1) << r.all();
    EXPECT_NE(r.out.find("Inf Detected"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("first at"), std::string::npos) << r.out;
}

TEST(Run, LayerwiseMarkAllWithValidateAndFailFast) {
    const std::string dir = test::make_temp_dir();
    const std::string m = add_model(dir, 0.5f, 10);
    if (!has_ort(m)) GTEST_SKIP() << "ONNX Runtime not available";
    auto r = test::run_polygraph({"run", m, "--onnxrt", "--ref", "--onnx-outputs", "mark", "all",
                                  "--validate", "--fail-fast", "--memory-budget", "64", "--json"});
    EXPECT_EQ(r.status, 0) << r.all();
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["passed"], true);
    EXPECT_EQ(j["layerwise"][0]["tensors"].size(), 11u);
}

// One runner with --onnx-outputs mark all (Polygraphy's run/07 tutorial): every tensor becomes an
// output, so --validate finds the infinite intermediate the final output hides, and
// --save-outputs writes every tensor; without the marking the run passes.
TEST(Run, OneRunnerMarkAllValidatesAndSavesEveryTensor) {
    const std::string dir = test::make_temp_dir();
    const std::string m = hidden_infinity_model(dir);
    EXPECT_EQ(test::run_polygraph({"run", m, "--ref", "--validate"}).status, 0);
    auto r = test::run_polygraph(
        {"run", m, "--ref", "--onnx-outputs", "mark", "all", "--validate", "--save-outputs",
         dir + "/out.json"});
    EXPECT_EQ(r.status, 1) << r.all();
    EXPECT_NE(r.all().find("Errors detected in output: hidden_out"), std::string::npos) << r.all();
    auto saved = test::run_polygraph({"inspect", "data", dir + "/out.json"});
    EXPECT_NE(saved.out.find("hidden_out [dtype=float32"), std::string::npos) << saved.all();
    EXPECT_NE(saved.out.find("min_out"), std::string::npos) << saved.all();
    if (!has_ort(m)) GTEST_SKIP() << "ONNX Runtime not available";
    auto o = test::run_polygraph(
        {"run", m, "--onnxrt", "--onnx-outputs", "hidden_out", "--validate"});
    EXPECT_EQ(o.status, 1) << o.all();
    EXPECT_NE(o.all().find("Errors detected in output: hidden_out"), std::string::npos) << o.all();
}

// Polygraphy's TensorRT-only flags from the tutorials: accepted with a note each (profile
// shapes checked for NAME:[dims]), --trt-outputs and --onnx-outputs both `mark all`, the
// network scripts refused naming --layer-precisions; --duration times the runner again.
TEST(Run, TensorRtOnlyFlagsAreAcceptedWithANote) {
    const std::string dir = test::make_temp_dir();
    const std::string m = add_model(dir, 0.5f, 3);
    auto r = test::run_polygraph({"run", m, "--ref", "--emu", "--tactic-sources", "CUBLAS",
                                  "--trt-min-shapes", "x:[2,3]", "--trt-opt-shapes", "x:[2,3]",
                                  "--trt-max-shapes", "x:[2,3]", "--trt-outputs", "mark", "all",
                                  "--onnx-outputs", "mark", "all", "--plugins", "libx.so"});
    EXPECT_EQ(r.status, 0) << r.all();
    EXPECT_NE(r.all().find("[W] --tactic-sources applies to TensorRT engines"), std::string::npos)
        << r.all();
    EXPECT_NE(r.all().find("[W] --plugins applies to TensorRT engines"), std::string::npos);
    EXPECT_NE(r.all().find("Passed: 4/4 tensors"), std::string::npos) << r.all();
    auto bad = test::run_polygraph({"run", m, "--ref", "--trt-opt-shapes", "x"});
    EXPECT_EQ(bad.status, 2) << bad.all();
    auto npps = test::run_polygraph({"run", m, "--ref", "--trt-npps", "constraints.py"});
    EXPECT_EQ(npps.status, 4) << npps.all();
    EXPECT_NE(npps.err.find("--layer-precisions"), std::string::npos) << npps.err;
    auto timed = test::run_polygraph({"run", m, "--ref", "--iterations", "2", "--duration", "0.2"});
    EXPECT_EQ(timed.status, 0) << timed.all();
    const size_t at = timed.out.find("| Completed ");
    ASSERT_NE(at, std::string::npos) << timed.out;
    EXPECT_GT(std::stol(timed.out.substr(at + 12)), 2) << timed.out;
    EXPECT_EQ(test::run_polygraph({"run", m, "--ref", "--duration", "-1"}).status, 2);
}

// Polygraphy's banner: RUNNING with the command first, PASSED (status 0) or FAILED (status 1)
// with the runtime last; with --json on stderr, leaving stdout to the JSON.
TEST(Run, StartAndEndBannerNameTheCommand) {
    const std::string dir = test::make_temp_dir();
    const std::string m = add_model(dir, 0.5f);
    auto ok = test::run_polygraph({"run", m, "--ref"});
    EXPECT_EQ(ok.status, 0);
    EXPECT_EQ(ok.out.rfind("[I] RUNNING | Command: polygraph run " + m + " --ref\n", 0), 0u)
        << ok.out;
    EXPECT_NE(ok.out.find("[I] PASSED | Runtime: "), std::string::npos) << ok.out;
    auto bad = test::run_polygraph({"run", hidden_infinity_model(dir), "--ref", "--onnx-outputs",
                                    "mark", "all", "--validate", "--json"});
    EXPECT_EQ(bad.status, 1);
    EXPECT_NE(bad.err.find("[E] FAILED | Runtime: "), std::string::npos) << bad.err;
    EXPECT_EQ(bad.out.find("RUNNING"), std::string::npos) << bad.out;
}

// The tutorials' data loader scripts: --load-inputs x.py and --data-loader-script x.py:func
// give the script's feed dicts (skipped where no python3 has numpy).
TEST(Run, DataLoaderScriptsGiveTheirFeeds) {
    const std::string dir = test::make_temp_dir();
    const std::string m = add_model(dir, 0.5f);
    std::ofstream(dir + "/loader.py") << "import numpy as np\n"
                                         "def load_data():\n"
                                         "    for i in range(2):\n"
                                         "        yield {'x': np.full((2, 3), i, np.float32)}\n"
                                         "def four():\n"
                                         "    return [{'x': np.full((2, 3), 4, np.float32)}]\n";
    auto r = test::run_polygraph({"run", m, "--ref", "--load-inputs", dir + "/loader.py",
                                  "--save-outputs", dir + "/out.json"});
    if (r.status == 4 && r.err.find("numpy") != std::string::npos) GTEST_SKIP() << r.err;
    ASSERT_EQ(r.status, 0) << r.all();
    EXPECT_NE(r.out.find("Completed 2 iteration(s)"), std::string::npos) << r.out;
    auto f = test::run_polygraph({"run", m, "--ref", "--data-loader-script",
                                  dir + "/loader.py:four", "--save-outputs", dir + "/four.json"});
    ASSERT_EQ(f.status, 0) << f.all();
    auto shown = test::run_polygraph({"inspect", "data", dir + "/four.json"});
    EXPECT_NE(shown.out.find("mean=4.5"), std::string::npos) << shown.out;
}

TEST(Run, LayerwiseNamesTheFirstDivergentNode) {
    const std::string dir = test::make_temp_dir();
    const std::string m = add_model(dir, 1.0f, 4);
    if (!has_ort(m)) GTEST_SKIP() << "ONNX Runtime not available";
    auto r = test::run_polygraph({"run", m, "--onnxrt", "--ref", "--ref-precision", "fp64",
                                  "--onnx-outputs", "mark", "all", "--atol", "0", "--rtol", "0"});
    // float32 (ONNX Runtime) vs float64 (reference) of x + 1 differ in the last bits: the first
    // node (add) diverges.
    EXPECT_EQ(r.status, 1) << r.all();
    EXPECT_NE(r.all().find("First divergent node: 'add' (Add)"), std::string::npos) << r.all();
}

TEST(Run, TrtIsRefusedWithAlternatives) {
    const std::string dir = test::make_temp_dir();
    auto r = test::run_polygraph({"run", add_model(dir, 1.0f), "--trt"});
    EXPECT_EQ(r.status, 4);
    EXPECT_NE(r.err.find("--onnxrt"), std::string::npos) << r.err;
}

TEST(Run, BadToleranceIsUsageError) {
    const std::string dir = test::make_temp_dir();
    auto r = test::run_polygraph({"run", add_model(dir, 1.0f), "--ref", "--atol", "abc"});
    EXPECT_EQ(r.status, 2) << r.all();
}

}  // namespace
}  // namespace pg

namespace pg {
namespace {

TEST(Run, LayerwiseSaveOutputsStreamsBothRunners) {
    const std::string dir = test::make_temp_dir();
    const std::string m = add_model(dir, 1.0f, 5);
    auto r = test::run_polygraph({"run", m, "--ref", "--ref", "--onnx-outputs", "mark", "all",
                                  "--save-outputs", dir + "/lw.json"});
    ASSERT_EQ(r.status, 0) << r.all();
    auto j = nlohmann::json::parse(read_file(dir + "/lw.json"));
    ASSERT_EQ(j["lst"].size(), 2u);
    // Every marked tensor of both runners is in the file, and loads back for comparison.
    auto back = test::run_polygraph({"run", m, "--ref", "--load-outputs", dir + "/lw.json"});
    EXPECT_EQ(back.status, 0) << back.all();
    EXPECT_NE(back.out.find("'Relu_0_out'"), std::string::npos) << back.out;
}

}  // namespace
}  // namespace pg

namespace pg {
namespace {

TEST(Run, AttributeErrorSeparatesLocalFromInherited) {
    const std::string dir = test::make_temp_dir();
    const std::string m = add_model(dir, 1.0f, 3);
    if (!has_ort(m)) GTEST_SKIP() << "ONNX Runtime not available";
    auto r = test::run_polygraph({"run", m, "--onnxrt", "--ref", "--ref-precision", "fp64",
                                  "--onnx-outputs", "mark", "all", "--atol", "0", "--rtol", "0",
                                  "--attribute-error", "--json"});
    EXPECT_EQ(r.status, 1) << r.all();
    auto j = nlohmann::json::parse(r.out);
    const auto& att = j["layerwise"][0]["attribution"];
    ASSERT_GE(att.size(), 2u) << r.out;
    // x + 1 rounds in float32: the Add itself is to blame; the Relu after it only inherits.
    EXPECT_EQ(att[0]["node"], "add");
    EXPECT_EQ(att[0]["verdict"], "local");
    EXPECT_EQ(att[1]["op"], "Relu");
    EXPECT_EQ(att[1]["verdict"], "inherited");
}

}  // namespace
}  // namespace pg
