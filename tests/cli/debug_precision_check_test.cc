// `debug precision` with an external check (--check CMD ..., --fail-code, --ignore-fail-code,
// --fail-regex), --artifacts-dir and --save/--load-debug-replay, on the needs_constraints story
// model of debug_precision_test.cc (Add and Sub must run in float32).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "debug/external_check.h"
#include "debug/iteration.h"
#include "ir/builder.h"
#include "onnx/model_io.h"
#include "support/cli_runner.h"
#include "support/debug_fixture.h"
#include "support/story_model.h"
#include "support/test_paths.h"

namespace pg {
namespace {

using test::story_model;

std::vector<std::string> tolerances() {
    return {"--atol", "1e-3", "--rtol", "1e-3", "--check-error-stat", "median"};
}

using test::concat;
using test::file_exists;
using test::slurp;

struct Story {
    std::string dir, model;
    Story() : dir(test::make_temp_dir()), model(story_model(dir)) {
        auto r = test::save_reference_io(model, dir, {"--val-range", "x:[1,2]"});
        EXPECT_EQ(r.status, 0) << r.all();
    }
    std::vector<std::string> debug(const std::vector<std::string>& extra = {}) const {
        return concat(concat({"debug", "precision", model, "--fp16", "--load-inputs",
                              dir + "/in.json", "--json"},
                             tolerances()),
                      extra);
    }
    // `polygraph run` of the candidate against the float32 golden outputs.
    std::vector<std::string> golden_run() const {
        return concat(test::golden_run(dir), tolerances());
    }
    // The external check that runs it.
    std::vector<std::string> check() const { return test::polygraph_check(golden_run()); }
};

// The tutorial's form: --model, the check quoted as one word ("sh check.sh") that names no
// placeholder, the script reading ./polygraph_debug.onnx itself: every candidate is written
// there for the check (the search finds Add and Sub) and removed after it, or kept with
// --no-remove-intermediate.
TEST(DebugPrecisionCheck, AScriptReadingTheFixedNameSeesEachCandidate) {
    const Story s;
    std::string script = "exec '" + test::polygraph_binary() + "'";
    for (const std::string& t : s.golden_run()) script += " '" + t + "'";
    {
        std::ofstream f(s.dir + "/check.sh");
        f << script << "\n";
    }
    const std::string fixed = s.dir + "/polygraph_debug.onnx";
    for (const bool keep : {false, true}) {
        std::vector<std::string> argv = {"env", "-C", s.dir, test::polygraph_binary(), "debug",
                                         "precision", "--model", s.model, "--fp16",
                                         "--load-inputs", s.dir + "/in.json", "--json"};
        if (keep) argv.push_back("--no-remove-intermediate");
        argv = concat(concat(argv, tolerances()), {"--check", "sh check.sh"});
        auto r = test::run_program(argv);
        ASSERT_EQ(r.status, 0) << r.all();
        EXPECT_EQ(nlohmann::json::parse(r.out)["fp32_nodes"], nlohmann::json::array({"Add", "Sub"}));
        EXPECT_NE(r.err.find("each iteration writes its candidate there"), std::string::npos)
            << r.err;
        EXPECT_EQ(file_exists(fixed), keep);
    }
}

TEST(DebugPrecisionCheck, ExternalCheckFindsAddAndSubAndKeepsArtifacts) {
    const Story s;
    const std::string art = s.dir + "/art";
    auto r = test::run_polygraph(concat(s.debug({"--artifacts-dir", art}), s.check()));
    ASSERT_EQ(r.status, 0) << r.all();
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["fp32_nodes"], nlohmann::json::array({"Add", "Sub"}));
    EXPECT_TRUE(j["passed"].get<bool>());
    const int evals = j["evaluations"].get<int>();
    EXPECT_EQ(j["checks_run"].get<int>(), evals);
    EXPECT_NE(r.err.find("Running check command: " + test::polygraph_binary() + " run " + art +
                         "/iteration_0.onnx"),
              std::string::npos)
        << r.err;
    // Every iteration's model is kept, with one verdict line each.
    for (int i = 0; i < evals; ++i)
        EXPECT_TRUE(file_exists(art + "/iteration_" + std::to_string(i) + ".onnx")) << i;
    const std::string verdicts = slurp(art + "/verdicts.txt");
    EXPECT_EQ(std::count(verdicts.begin(), verdicts.end(), '\n'), evals) << verdicts;
    EXPECT_NE(verdicts.find("iteration_0.onnx FAILED fp32_nodes=\n"), std::string::npos)
        << verdicts;
    EXPECT_NE(verdicts.find("PASSED fp32_nodes=Add,Sub\n"), std::string::npos) << verdicts;
    // The in-process check agrees.
    auto in = test::run_polygraph(s.debug());
    ASSERT_EQ(in.status, 0) << in.all();
    EXPECT_EQ(nlohmann::json::parse(in.out)["fp32_nodes"], j["fp32_nodes"]);
}

TEST(DebugPrecisionCheck, ExternalCheckWithoutArtifactsDirUsesATemporaryModel) {
    const Story s;
    auto r = test::run_polygraph(concat(s.debug({"--mode", "bisect"}), s.check()));
    ASSERT_EQ(r.status, 0) << r.all();
    EXPECT_EQ(nlohmann::json::parse(r.out)["fp32_nodes"],
              nlohmann::json::array({"MatMul_0", "Add", "Sub"}));
}

TEST(DebugPrecisionCheck, FailRegexAloneIgnoresTheExitCode) {
    const Story s;
    // Exit 1 but no match: every set passes, so the empty set is the answer.
    auto r = test::run_polygraph(
        concat(s.debug({"--fail-regex", "NEVER"}), {"--check", "sh", "-c", "echo fine; exit 1"}));
    ASSERT_EQ(r.status, 0) << r.all();
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["fp32_nodes"], nlohmann::json::array());
    EXPECT_EQ(j["evaluations"], 1);
    // Exit 0 but a match: nothing passes.
    r = test::run_polygraph(
        concat(s.debug({"--fail-regex", "B.D"}), {"--check", "sh", "-c", "echo BAD >&2"}));
    EXPECT_EQ(r.status, 1) << r.all();
    EXPECT_FALSE(nlohmann::json::parse(r.out)["passed"].get<bool>());
    EXPECT_NE(r.err.find("CAPTURED STDERR"), std::string::npos) << r.err;
}

TEST(DebugPrecisionCheck, CheckStatusFollowsPolygraphyOrder) {
    debug::CheckCommandOptions o;
    auto pass = [&o](int rc, const std::string& out) {
        return debug::check_passed(o, {rc, out, ""});
    };
    EXPECT_TRUE(pass(0, ""));
    EXPECT_FALSE(pass(1, ""));
    o.fail_codes = {3};
    EXPECT_TRUE(pass(1, ""));
    EXPECT_FALSE(pass(3, ""));
    o.fail_regex = {"err(or)?"};
    EXPECT_TRUE(pass(3, "all good"));  // fail code and regex must both hold
    EXPECT_FALSE(pass(3, "an error"));
    EXPECT_TRUE(pass(0, "an error"));
    o.ignore_fail_codes = {3};
    EXPECT_TRUE(pass(3, "an error"));  // ignored codes win over everything
    o = {};
    o.fail_regex = {"("};
    EXPECT_THROW(pass(0, ""), Error);
    // Python re's named groups and inline flags (RE2), and a long output with an alternation
    // under a star, on which std::regex's recursion crashed the process.
    o.fail_regex = {"(?i)(?P<word>ERROR): \\d+"};
    EXPECT_FALSE(pass(0, "an error: 42"));
    EXPECT_TRUE(pass(0, "an error: x"));
    o.fail_regex = {"(x|y)*error"};
    EXPECT_FALSE(pass(0, std::string(200000, 'x') + " error"));
    EXPECT_TRUE(pass(0, std::string(200000, 'x')));
    EXPECT_EQ(debug::substitute({"a", "--x=polygraph_debug.onnx", "polygraph_debug.onnx"},
                                "polygraph_debug.onnx", "/t/m.onnx"),
              (std::vector<std::string>{"a", "--x=/t/m.onnx", "/t/m.onnx"}));
    EXPECT_EQ(debug::skip_current_path("d.x/replay.json"), "d.x/replay_skip_current.json");
    EXPECT_EQ(debug::skip_current_path("d.x/replay"), "d.x/replay_skip_current");
}

// ... and the candidate it would have read as ./polygraph_debug.onnx is not left behind (run
// from a folder of its own: other tests write that name in the shared working directory).
TEST(DebugPrecisionCheck, MissingCheckProgramIsAUsageError) {
    const Story s;
    const std::string here = test::make_temp_dir();
    const auto was = std::filesystem::current_path();
    std::filesystem::current_path(here);
    auto r = test::run_polygraph(concat(s.debug(), {"--check", "/nonexistent/prog"}));
    std::filesystem::current_path(was);
    EXPECT_EQ(r.status, 2) << r.all();
    EXPECT_NE(r.err.find("/nonexistent/prog"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(here + "/polygraph_debug.onnx"));
    r = test::run_polygraph(concat(s.debug(), {"--check"}));
    EXPECT_EQ(r.status, 2) << r.all();
}

TEST(DebugPrecisionCheck, ReplayResumesToTheSameAnswerWithFewerChecks) {
    const Story s;
    const std::string replay = s.dir + "/replay.json";
    // A counting external check, so the number of real runs is visible from outside.
    const std::string counter = s.dir + "/count";
    const std::vector<std::string> check =
        test::shell_check("echo x >> " + counter, s.golden_run());
    auto full = test::run_polygraph(concat(s.debug({"--save-debug-replay", replay}), check));
    ASSERT_EQ(full.status, 0) << full.all();
    auto jf = nlohmann::json::parse(full.out);
    const int evals = jf["evaluations"].get<int>();
    ASSERT_GE(evals, 3);
    EXPECT_EQ(jf["checks_run"], evals);
    EXPECT_EQ(static_cast<int>(slurp(counter).size()) / 2, evals);
    EXPECT_TRUE(file_exists(s.dir + "/replay_skip_current.json"));
    auto rep = nlohmann::ordered_json::parse(slurp(replay));
    ASSERT_EQ(static_cast<int>(rep.size()), evals);
    EXPECT_EQ(rep["_N0"]["state"]["fp32_nodes"], nlohmann::json::array());
    EXPECT_FALSE(rep["_N0"]["success"].get<bool>());
    EXPECT_EQ(rep["_N0"]["polygraphy_class"], "IterationContext");

    // An interrupted search: only the first two iterations were recorded.
    nlohmann::ordered_json partial = nlohmann::ordered_json::object();
    partial["_N0"] = rep["_N0"];
    partial["_N1"] = rep["_N1"];
    std::ofstream(s.dir + "/partial.json") << partial.dump(4);
    std::remove(counter.c_str());
    auto resumed = test::run_polygraph(concat(
        s.debug({"--load-debug-replay", s.dir + "/partial.json", "--save-debug-replay", replay}),
        check));
    ASSERT_EQ(resumed.status, 0) << resumed.all();
    auto jr = nlohmann::json::parse(resumed.out);
    EXPECT_EQ(jr["fp32_nodes"], jf["fp32_nodes"]);
    EXPECT_EQ(jr["evaluations"], evals);
    EXPECT_EQ(jr["replayed"], 2);
    EXPECT_EQ(jr["checks_run"], evals - 2);
    EXPECT_EQ(static_cast<int>(slurp(counter).size()) / 2, evals - 2);
    EXPECT_NE(resumed.err.find("Loading iteration information from debug replay: success=False"),
              std::string::npos);
    // The complete replay answers everything: no check runs at all.
    std::remove(counter.c_str());
    auto all = test::run_polygraph(concat(s.debug({"--load-debug-replay", replay}), check));
    ASSERT_EQ(all.status, 0) << all.all();
    auto ja = nlohmann::json::parse(all.out);
    EXPECT_EQ(ja["fp32_nodes"], jf["fp32_nodes"]);
    EXPECT_EQ(ja["checks_run"], 0);
    EXPECT_FALSE(file_exists(counter));
}

TEST(DebugPrecisionCheck, BrokenReplayIsRejected) {
    const Story s;
    std::ofstream(s.dir + "/bad.json") << "{not json";
    auto r = test::run_polygraph(s.debug({"--load-debug-replay", s.dir + "/bad.json"}));
    EXPECT_EQ(r.status, 3) << r.all();
    EXPECT_NE(r.err.find("bad.json"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace pg
