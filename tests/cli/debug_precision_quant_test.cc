// `debug precision --int8 / --fp8 / --tf32` and the models -o writes for them (Q/DQ pairs), on
// an outlier model built here: x[1,1,4,4] in [1,2] -> MatMul_0(I) -> Add_outlier(c) ->
// MatMul_1(I) -> Sub_outlier(c), where c holds one 1000. Per-tensor INT8 quantization of
// MatMul_1's input (scale ~ 1002/127) destroys the small values, MatMul_0's (scale 2/127) does
// not, so under INT8 with tolerance 0.05 exactly MatMul_1 must stay float32.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "ir/builder.h"
#include "onnx/model_io.h"
#include "runners/onnxrt_runner.h"
#include "support/cli_runner.h"
#include "support/debug_fixture.h"
#include "support/story_model.h"
#include "support/test_paths.h"

namespace pg {
namespace {

// INT8 needs 0.05; FP8 (e4m3fn keeps 3 mantissa bits: 1/16 relative error) needs 0.2.
std::vector<std::string> tolerances(const std::string& tol = "0.05") {
    return {"--atol", tol, "--rtol", tol};
}

struct Outlier {
    std::string dir, model;
    Outlier() : dir(test::make_temp_dir()), model(dir + "/outlier.onnx") {
        auto m = ir::new_model(19);
        ir::GraphBuilder b(*m->graph);
        ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{1, 1, 4, 4});
        std::vector<float> eye(16, 0.0f), c(16, 0.0f);
        for (int i = 0; i < 4; ++i) eye[static_cast<size_t>(i * 5)] = 1.0f;
        c[5] = 1000.0f;
        ir::Value* I = b.constant_f32("eye", {4, 4}, eye);
        ir::Value* k = b.constant_f32("c", {4, 4}, c);
        ir::Value* v = b.op("MatMul", {x, I}, {}, "MatMul_0");
        v = b.op("Add", {v, k}, {}, "Add_outlier");
        v = b.op("MatMul", {v, I}, {}, "MatMul_1");
        v = b.op("Sub", {v, k}, {}, "Sub_outlier");
        b.output(v, DataType::kFloat32, {1, 1, 4, 4});
        onnx::save_model(*m, model);
        auto r = test::save_reference_io(model, dir, {"--val-range", "x:[1,2]"});
        EXPECT_EQ(r.status, 0) << r.all();
    }
    std::vector<std::string> debug(const std::vector<std::string>& extra,
                                   const std::string& tol = "0.05") const {
        std::vector<std::string> a = {"debug",         "precision",      model,
                                      "--load-inputs", dir + "/in.json", "--json"};
        for (const auto& t : tolerances(tol)) a.push_back(t);
        a.insert(a.end(), extra.begin(), extra.end());
        return a;
    }
    // `run PATH --RUNNER` against the float32 golden outputs.
    test::CliResult run_against_golden(const std::string& path, const std::string& runner = "--ref",
                                       const std::string& tol = "0.05") const {
        return test::run_polygraph(
            test::concat(test::golden_run(dir, path, runner), tolerances(tol)));
    }
};

size_t count_op(const std::string& path, const std::string& op) {
    auto m = onnx::load_model(path);
    size_t n = 0;
    for (const auto& node : m->graph->nodes()) n += node->op_type == op ? 1 : 0;
    return n;
}

bool ort_available() {
    try {
        runners::load_onnxrt_library();
        return true;
    } catch (const Error&) {
        return false;
    }
}

TEST(DebugPrecisionQuant, Int8FindsTheOutlierMatMulAndWritesAQdqModel) {
    const Outlier o;
    const std::string fixed = o.dir + "/fixed.onnx";
    auto r =
        test::run_polygraph(o.debug({"--int8", "-o", fixed, "--artifacts-dir", o.dir + "/art"}));
    ASSERT_EQ(r.status, 0) << r.all();
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["fp32_nodes"], nlohmann::json::array({"MatMul_1"}));
    EXPECT_EQ(j["precision"], "int8");
    // MatMul_0 is quantized (activation x per tensor, weight per channel); MatMul_1 is not.
    EXPECT_EQ(count_op(fixed, "QuantizeLinear"), 2u);
    EXPECT_EQ(count_op(fixed, "DequantizeLinear"), 2u);
    auto f = o.run_against_golden(fixed);
    EXPECT_EQ(f.status, 0) << f.all();
    // The first iteration (nothing in float32) quantizes both MatMuls and fails the same
    // comparison outside the emulator: the Q/DQ model does what the emulator did.
    // (x, MatMul_1's input, and the weight eye once: both MatMuls share its pair.)
    EXPECT_EQ(count_op(o.dir + "/art/iteration_0.onnx", "QuantizeLinear"), 3u);
    auto bad = o.run_against_golden(o.dir + "/art/iteration_0.onnx");
    EXPECT_EQ(bad.status, 1) << bad.all();
}

TEST(DebugPrecisionQuant, Int8CalibrationCacheIsWrittenAndReused) {
    const Outlier o;
    const std::string cache = o.dir + "/calib.cache";
    auto r = test::run_polygraph(o.debug({"--int8", "--calibration-cache", cache}));
    ASSERT_EQ(r.status, 0) << r.all();
    auto again = test::run_polygraph(o.debug({"--int8", "--calibration-cache", cache}));
    ASSERT_EQ(again.status, 0) << again.all();
    EXPECT_NE(again.err.find("read 2 activation scale(s)"), std::string::npos) << again.err;
    EXPECT_EQ(nlohmann::json::parse(again.out)["fp32_nodes"],
              nlohmann::json::parse(r.out)["fp32_nodes"]);
}

TEST(DebugPrecisionQuant, ExternalInt8CheckReachesTheSameAnswer) {
    const Outlier o;
    std::vector<std::string> a = o.debug(
        {"--int8", "--check", test::polygraph_binary(), "run", "polygraph_debug.onnx", "--ref",
         "--load-inputs", o.dir + "/in.json", "--load-outputs", o.dir + "/golden.json"});
    for (const auto& t : tolerances()) a.push_back(t);
    auto r = test::run_polygraph(a);
    ASSERT_EQ(r.status, 0) << r.all();
    EXPECT_EQ(nlohmann::json::parse(r.out)["fp32_nodes"], nlohmann::json::array({"MatMul_1"}));
}

TEST(DebugPrecisionQuant, Fp8FixedModelMatchesTheGolden) {
    const Outlier o;
    for (const std::string fmt : {"e4m3fn", "e5m2"}) {
        const std::string fixed = o.dir + "/fixed_" + fmt + ".onnx";
        auto r = test::run_polygraph(
            o.debug({"--fp8", fmt, "-o", fixed, "--artifacts-dir", o.dir + "/art_" + fmt}, "0.2"));
        ASSERT_EQ(r.status, 0) << fmt << r.all();
        auto j = nlohmann::json::parse(r.out);
        EXPECT_TRUE(j["passed"].get<bool>());
        EXPECT_EQ(j["precision"], "fp8" + fmt);
        // The outlier path stays float32; MatMul_0 runs in FP8.
        EXPECT_LT(j["fp32_nodes"].size(), 4u) << fmt << j.dump();
        EXPECT_GT(count_op(fixed, "QuantizeLinear"), 0u) << fmt;
        auto f = o.run_against_golden(fixed, "--ref", "0.2");
        EXPECT_EQ(f.status, 0) << fmt << f.all();
        auto bad =
            o.run_against_golden(o.dir + "/art_" + fmt + "/iteration_0.onnx", "--ref", "0.2");
        EXPECT_EQ(bad.status, 1) << fmt << bad.all();
    }
}

TEST(DebugPrecisionQuant, Fp8OutputNeedsOpset19) {
    const std::string dir = test::make_temp_dir();
    const std::string model = test::story_model(dir);  // opset 17
    auto r = test::run_polygraph({"debug", "precision", model, "--fp8", "--val-range", "x:[1,2]",
                                  "-o", dir + "/fixed.onnx"});
    EXPECT_EQ(r.status, 4) << r.all();
    EXPECT_NE(r.all().find("opset >= 19"), std::string::npos) << r.all();
    EXPECT_EQ(r.all().find("RUNNING | Iteration"), std::string::npos) << "refused after a search";
}

TEST(DebugPrecisionQuant, Tf32SearchesButRefusesAModel) {
    const Outlier o;
    auto r = test::run_polygraph(o.debug({"--tf32"}));
    ASSERT_EQ(r.status, 0) << r.all();
    EXPECT_EQ(nlohmann::json::parse(r.out)["precision"], "tf32");
    auto refused = test::run_polygraph(o.debug({"--tf32", "-o", o.dir + "/x.onnx"}));
    EXPECT_EQ(refused.status, 4) << refused.all();
    EXPECT_NE(refused.err.find("--tf32 has no model form"), std::string::npos) << refused.err;
}

TEST(DebugPrecisionQuant, TwoPrecisionsAreAUsageError) {
    const Outlier o;
    EXPECT_EQ(test::run_polygraph(o.debug({"--int8", "--fp16"})).status, 2);
}

// ONNX Runtime runs what -o writes: the float16 story answer and the INT8 Q/DQ model.
TEST(DebugPrecisionQuant, OnnxRuntimeRunsTheFixedModels) {
    if (!ort_available()) GTEST_SKIP() << "ONNX Runtime not available (run `make setup`)";
    const Outlier o;
    const std::string fixed = o.dir + "/fixed_int8.onnx";
    ASSERT_EQ(test::run_polygraph(o.debug({"--int8", "-o", fixed})).status, 0);
    auto f = o.run_against_golden(fixed, "--onnxrt");
    EXPECT_EQ(f.status, 0) << f.all();

    const std::string dir = test::make_temp_dir();
    const std::string story = test::story_model(dir);
    std::vector<std::string> tol = {
        "--check-error-stat", "median", "--atol", "1e-3", "--rtol", "1e-3"};
    auto g = test::run_polygraph({"run", story, "--ref", "--val-range", "x:[1,2]", "--save-inputs",
                                  dir + "/in.json", "--save-outputs", dir + "/golden.json"});
    ASSERT_EQ(g.status, 0) << g.all();
    std::vector<std::string> d = {"debug",         "precision",      story, "--fp16",
                                  "--load-inputs", dir + "/in.json", "-o",  dir + "/fixed.onnx"};
    d.insert(d.end(), tol.begin(), tol.end());
    ASSERT_EQ(test::run_polygraph(d).status, 0);
    std::vector<std::string> run = {"run",
                                    dir + "/fixed.onnx",
                                    "--onnxrt",
                                    "--load-inputs",
                                    dir + "/in.json",
                                    "--load-outputs",
                                    dir + "/golden.json"};
    run.insert(run.end(), tol.begin(), tol.end());
    auto s = test::run_polygraph(run);
    EXPECT_EQ(s.status, 0) << s.all();
}

}  // namespace
}  // namespace pg
