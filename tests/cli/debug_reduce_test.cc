// `debug reduce` on the story model (x -> MatMul -> Add(65504) -> Sub(65504) -> MatMul) and on
// zoo::planted_overflow_model() (210 nodes, two planted FP16 overflow points): the in-process
// check, the written repro (model, inputs, golden outputs) re-checked with `polygraph run`,
// several samples, an external --check, replay resume, a model that does not fail, hostile args,
// and a tiny --memory-budget (on-demand reference values) giving the same reduction.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "ir/graph.h"
#include "onnx/model_io.h"
#include "passes/override_input_shapes.h"
#include "support/cli_runner.h"
#include "support/debug_fixture.h"
#include "support/story_model.h"
#include "support/test_paths.h"
#include "zoo/zoo.h"

namespace pg {
namespace {

using test::Args;
using test::concat;
using test::planted_model;
using test::slurp;

Args tolerances() {
    return {"--atol", "1e-2", "--rtol", "1e-2"};
}

// `debug reduce MODEL --fp16 -o DIR/reduced.onnx --json` plus extra flags.
Args reduce_args(const std::string& model, const std::string& out, const Args& extra = {}) {
    Args a = {"debug", "reduce", model, "--fp16", "-o", out, "--json"};
    return concat(concat(a, tolerances()), extra);
}

nlohmann::json run_reduce(const Args& args, int expect = 0) {
    auto r = test::run_polygraph(args, 300);
    EXPECT_EQ(r.status, expect) << r.all();
    try {
        return nlohmann::json::parse(r.out);
    } catch (const std::exception&) {
        ADD_FAILURE() << "not JSON: " << r.all();
        return {};
    }
}

// `polygraph run MODEL --ref --emu --fp16 --load-inputs INPUTS` with the tolerances.
test::CliResult rerun(const std::string& model, const Args& extra = {}) {
    const std::string inputs = model.substr(0, model.size() - 5) + "_inputs.json";
    return test::run_polygraph(concat(
        concat({"run", model, "--ref", "--emu", "--fp16", "--load-inputs", inputs}, tolerances()),
        extra));
}

TEST(DebugReduce, StoryModelReducesToTheSub) {
    const std::string dir = test::make_temp_dir();
    const std::string out = dir + "/reduced.onnx";
    auto j = run_reduce(reduce_args(test::story_model(dir), out, {"--val-range", "x:[1,2]"}));
    EXPECT_EQ(j["nodes"], nlohmann::json::array({"Sub"}));
    EXPECT_TRUE(j["failed"].get<bool>());
    EXPECT_EQ(j["output"], out);
    EXPECT_EQ(rerun(out).status, 1);
    EXPECT_EQ(rerun(out, {"--layer-precisions", "Sub:float32"}).status, 0);
}

TEST(DebugReduce, PlantedModelShrinksToAtMostThreeFailingNodes) {
    const std::string dir = test::make_temp_dir();
    const std::string out = dir + "/reduced.onnx";
    for (const std::string mode : {"bisect", "linear"}) {
        auto j = run_reduce(reduce_args(planted_model(dir), out, {"--mode", mode}));
        ASSERT_TRUE(j.contains("num_nodes")) << mode;
        EXPECT_GE(j["original_nodes"].get<int>(), 200) << mode;
        EXPECT_LE(j["num_nodes"].get<int>(), 3) << mode;
        EXPECT_GE(j["num_nodes"].get<int>(), 1) << mode;
        // The reduced model holds a planted node, still fails, and passes with it in float32.
        std::string fp32;
        for (const auto& n : j["nodes"]) {
            const std::string name = n.get<std::string>();
            if (name.rfind("plant", 0) == 0) fp32 += (fp32.empty() ? "" : " ") + name + ":float32";
        }
        EXPECT_FALSE(fp32.empty()) << j.dump();
        auto bad = rerun(out);
        EXPECT_EQ(bad.status, 1) << mode << bad.all();
        auto good = rerun(out, {"--layer-precisions", fp32});
        EXPECT_EQ(good.status, 0) << mode << good.all();
        // The golden outputs are the float32 reference: the emulator fails against them.
        auto golden = test::run_polygraph(
            concat({"run", out, "--emu", "--fp16", "--load-inputs", dir + "/reduced_inputs.json",
                    "--load-outputs", dir + "/reduced_golden.json"},
                   tolerances()));
        EXPECT_EQ(golden.status, 1) << golden.all();
    }
}

TEST(DebugReduce, SeveralSamplesGiveEachItsOwnCutValues) {
    const std::string dir = test::make_temp_dir();
    const std::string out = dir + "/reduced.onnx";
    auto j = run_reduce(reduce_args(planted_model(dir), out, {"--iterations", "3"}));
    ASSERT_LE(j["num_nodes"].get<int>(), 3);
    const auto inputs = nlohmann::json::parse(slurp(dir + "/reduced_inputs.json"));
    ASSERT_EQ(inputs.size(), 3u);
    EXPECT_NE(inputs[0].dump(), inputs[1].dump());
    EXPECT_NE(inputs[1].dump(), inputs[2].dump());
    const auto golden = nlohmann::json::parse(slurp(dir + "/reduced_golden.json"));
    EXPECT_EQ(golden["lst"][0][1].size(), 3u) << golden.dump().substr(0, 400);
    EXPECT_EQ(rerun(out).status, 1);
}

// `text` with every occurrence of a golden file's runner name ("ref-runner-N0-<date time>", which
// differs between runs a second apart) replaced by "RUNNER"; other files come back unchanged.
std::string without_runner_name(std::string text) {
    const std::string prefix = "\"ref-runner-N0-";
    const size_t at = text.find(prefix);
    if (at == std::string::npos) return text;
    const std::string name = text.substr(at, text.find('"', at + 1) - at + 1);
    for (size_t p = text.find(name); p != std::string::npos; p = text.find(name, p))
        text.replace(p, name.size(), "\"RUNNER\"");
    return text;
}

// --memory-budget 1K cannot hold the planted model's tensors: on-demand mode re-runs the
// reference per candidate and must write the same reduction (nodes, model, inputs, golden
// outputs, --min-good) byte for byte as the default run, which keeps every tensor.
TEST(DebugReduce, TinyMemoryBudgetRecomputesTheSameReduction) {
    const std::string dir = test::make_temp_dir();
    const std::string model = planted_model(dir);
    auto kept = run_reduce(reduce_args(
        model, dir + "/kept.onnx", {"--iterations", "3", "--min-good", dir + "/kept_good.onnx"}));
    auto lean = run_reduce(reduce_args(
        model, dir + "/lean.onnx",
        {"--iterations", "3", "--min-good", dir + "/lean_good.onnx", "--memory-budget", "1K"}));
    EXPECT_EQ(kept["reference_mode"], "kept");
    EXPECT_EQ(kept["reference_reruns"], 0);
    EXPECT_EQ(lean["reference_mode"], "on-demand");
    EXPECT_GE(lean["reference_reruns"].get<int>(), 2);
    ASSERT_FALSE(kept["nodes"].empty());
    EXPECT_EQ(kept["nodes"], lean["nodes"]);
    EXPECT_EQ(kept["evaluations"], lean["evaluations"]);
    for (const std::string f : {".onnx", "_inputs.json", "_golden.json", "_good.onnx",
                                "_good_inputs.json", "_good_golden.json"}) {
        const std::string a = without_runner_name(slurp(dir + "/kept" + f));
        EXPECT_FALSE(a.empty()) << f;
        EXPECT_TRUE(a == without_runner_name(slurp(dir + "/lean" + f)))
            << f << " differs between the modes";
    }
    EXPECT_EQ(rerun(dir + "/lean.onnx").status, 1);
    auto bad =
        test::run_polygraph(reduce_args(model, dir + "/x.onnx", {"--memory-budget", "lots"}));
    EXPECT_EQ(bad.status, 2) << bad.all();
}

// The planted model with input x[batch,16] (a symbolic batch) at DIR/dyn.onnx.
std::string dynamic_planted_model(const std::string& dir) {
    auto m = zoo::planted_overflow_model();
    passes::override_input_shapes(*m->graph,
                                  {{"x", {ir::Dim::symbolic("batch"), ir::Dim::known(16)}}});
    const std::string path = dir + "/dyn.onnx";
    onnx::save_model(*m, path);
    return path;
}

TEST(DebugReduce, DynamicShapesBecomeSymbolicWhereSamplesDiffer) {
    const std::string dir = test::make_temp_dir();
    const std::string model = dynamic_planted_model(dir);
    for (const std::string batch : {"2", "3"}) {
        auto r =
            test::run_polygraph({"run", model, "--ref", "--input-shapes", "x:[" + batch + ",16]",
                                 "--save-inputs", dir + "/in" + batch + ".json"});
        ASSERT_EQ(r.status, 0) << r.all();
    }
    const std::string out = dir + "/reduced.onnx";
    auto j = run_reduce(
        reduce_args(model, out, {"--load-inputs", dir + "/in2.json", dir + "/in3.json"}));
    ASSERT_LE(j["num_nodes"].get<int>(), 3);
    auto reduced = onnx::load_model(out);
    ASSERT_FALSE(reduced->graph->inputs().empty());
    const auto& shape = *reduced->graph->inputs()[0]->type().shape;
    ASSERT_EQ(shape.size(), 2u);
    EXPECT_FALSE(shape[0].is_known());
    EXPECT_FALSE(shape[0].param.empty());
    EXPECT_EQ(shape[1], ir::Dim::known(16));
    EXPECT_EQ(rerun(out).status, 1);
}

TEST(DebugReduce, ModelInputShapesOverrideADynamicInput) {
    const std::string dir = test::make_temp_dir();
    const std::string model = dynamic_planted_model(dir), out = dir + "/reduced.onnx";
    auto j = run_reduce(reduce_args(model, out, {"--model-input-shapes", "x:[4,16]"}));
    ASSERT_LE(j["num_nodes"].get<int>(), 3);
    auto reduced = onnx::load_model(out);
    EXPECT_EQ(*reduced->graph->inputs()[0]->type().shape, ir::make_shape({4, 16}));
}

TEST(DebugReduce, MinGoodWritesAPassingModel) {
    const std::string dir = test::make_temp_dir();
    const std::string good = dir + "/good.onnx";
    auto j = run_reduce(reduce_args(planted_model(dir), dir + "/bad.onnx", {"--min-good", good}));
    EXPECT_LE(j["num_nodes"].get<int>(), 3);
    ASSERT_TRUE(std::ifstream(good).good());
    EXPECT_TRUE(std::ifstream(dir + "/good_inputs.json").good());
    auto r = rerun(good);
    EXPECT_EQ(r.status, 0) << r.all();
    // Only --min-good: no -o needed.
    auto only = test::run_polygraph(
        concat({"debug", "reduce", dir + "/planted.onnx", "--fp16", "--min-good", dir + "/g2.onnx"},
               tolerances()));
    EXPECT_EQ(only.status, 0) << only.all();
    EXPECT_TRUE(std::ifstream(dir + "/g2.onnx").good());
}

TEST(DebugReduce, ExternalCheckReachesTheSameNodes) {
    const std::string dir = test::make_temp_dir();
    const std::string model = planted_model(dir);
    auto in_process = run_reduce(reduce_args(model, dir + "/a.onnx"));
    const Args check =
        test::polygraph_check(concat({"run", "polygraph_debug.onnx", "--ref", "--emu", "--fp16",
                                      "--load-inputs", "polygraph_debug_inputs.json"},
                                     tolerances()));
    auto external = run_reduce(concat(reduce_args(model, dir + "/b.onnx"), check));
    EXPECT_EQ(external["nodes"], in_process["nodes"]);
    EXPECT_EQ(external["evaluations"], in_process["evaluations"]);
}

// The tutorial's order, an option of debug reduce after --check: it belongs to the check
// command, which then exits with status 2 on the original model; a warning says so.
TEST(DebugReduce, ACheckWithAUsageErrorOnTheOriginalIsWarnedAbout) {
    const std::string dir = test::make_temp_dir();
    const std::string model = test::story_model(dir);
    const Args check = test::polygraph_check(
        {"run", "polygraph_debug.onnx", "--ref", "--artifacts-dir", dir + "/art"});
    auto r = test::run_polygraph(concat(reduce_args(model, dir + "/r.onnx"), check), 300);
    EXPECT_NE(r.err.find("--check exited with status 2 on the original model"), std::string::npos)
        << r.all();
}

TEST(DebugReduce, ReplayResumesToTheSameAnswer) {
    const std::string dir = test::make_temp_dir();
    const std::string model = planted_model(dir);
    const std::string replay = dir + "/replay.json", art = dir + "/art";
    auto full = run_reduce(reduce_args(model, dir + "/a.onnx",
                                       {"--save-debug-replay", replay, "--artifacts-dir", art}));
    auto saved = nlohmann::ordered_json::parse(slurp(replay));
    ASSERT_GT(saved.size(), 4u);
    EXPECT_TRUE(saved.contains("_N0_original"));
    EXPECT_TRUE(saved.contains("_N0_outputs"));
    EXPECT_TRUE(saved.contains("_N0_inputs"));
    EXPECT_TRUE(saved["_N0_outputs"]["state"].contains("num_nodes"));
    EXPECT_FALSE(slurp(art + "/verdicts.txt").empty());
    EXPECT_TRUE(std::ifstream(art + "/N0_outputs.onnx").good());
    EXPECT_TRUE(std::ifstream(art + "/N0_outputs_inputs.json").good());
    // Interrupted after a few iterations: keep the first entries only.
    nlohmann::ordered_json partial = nlohmann::ordered_json::object();
    size_t kept = 0;
    for (auto it = saved.begin(); it != saved.end() && kept < 5; ++it, ++kept)
        partial[it.key()] = it.value();
    std::ofstream(dir + "/partial.json") << partial.dump(4);
    auto resumed = run_reduce(
        reduce_args(model, dir + "/b.onnx", {"--load-debug-replay", dir + "/partial.json"}));
    EXPECT_EQ(resumed["nodes"], full["nodes"]);
    EXPECT_EQ(resumed["replayed"].get<size_t>(), kept);
    EXPECT_EQ(resumed["checks_run"].get<size_t>(), full["checks_run"].get<size_t>() - kept);
}

TEST(DebugReduce, ModelThatDoesNotFailExitsOne) {
    const std::string dir = test::make_temp_dir();
    // c = 1: nothing overflows, float16 matches within 1e-2.
    auto r = test::run_polygraph(concat({"debug", "reduce", test::story_model(dir, 1.0f), "--fp16",
                                         "-o", dir + "/r.onnx", "--val-range", "x:[1,2]"},
                                        tolerances()));
    EXPECT_EQ(r.status, 1) << r.all();
    EXPECT_NE(r.all().find("nothing to reduce"), std::string::npos) << r.all();
    EXPECT_FALSE(std::ifstream(dir + "/r.onnx").good());
}

TEST(DebugReduce, HostileArguments) {
    const std::string dir = test::make_temp_dir();
    auto missing =
        test::run_polygraph({"debug", "reduce", dir + "/none.onnx", "-o", dir + "/r.onnx"});
    EXPECT_EQ(missing.status, 3) << missing.all();
    const std::string model = test::story_model(dir);
    auto mode =
        test::run_polygraph({"debug", "reduce", model, "-o", dir + "/r.onnx", "--mode", "fast"});
    EXPECT_EQ(mode.status, 2) << mode.all();
    auto no_out = test::run_polygraph({"debug", "reduce", model});
    EXPECT_EQ(no_out.status, 2) << no_out.all();
    auto both = test::run_polygraph({"debug", "reduce", model, "-o", dir + "/r.onnx",
                                     "--no-reduce-inputs", "--no-reduce-outputs"});
    EXPECT_EQ(both.status, 2) << both.all();
    std::ofstream(dir + "/bad_replay.json") << "{not json";
    auto replay = test::run_polygraph({"debug", "reduce", model, "-o", dir + "/r.onnx",
                                       "--load-debug-replay", dir + "/bad_replay.json"});
    EXPECT_EQ(replay.status, 3) << replay.all();
    auto empty_check =
        test::run_polygraph({"debug", "reduce", model, "-o", dir + "/r.onnx", "--check"});
    EXPECT_EQ(empty_check.status, 2) << empty_check.all();
}

}  // namespace
}  // namespace pg
