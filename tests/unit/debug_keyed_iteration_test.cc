// The replay-keyed iteration engine of `debug reduce` (debug/keyed_iteration.h): keys and
// state, answering from a loaded replay only when key and state match, the _skip_current copy,
// and the per-iteration files kept in --artifacts-dir.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "debug/keyed_iteration.h"
#include "support/debug_fixture.h"
#include "support/test_paths.h"

namespace pg {
namespace {

using test::slurp;

struct Counter {
    int checks = 0;
    bool answer = false;
    debug::FilesVerdictFn verdict() {
        return [this](const debug::IterationFiles&) {
            ++checks;
            return answer;
        };
    }
};

const debug::WriteFilesFn kNoWrite = [](const debug::IterationFiles&) {};

TEST(DebugKeyedIteration, SavesKeysWithStateAndReplaysOnlyMatchingState) {
    const std::string dir = test::make_temp_dir();
    const std::string replay = dir + "/replay.json";
    {
        debug::IterationOptions o;
        o.save_replay = replay;
        debug::KeyedIterations it(o);
        Counter c;
        EXPECT_FALSE(it("outputs", 0, {{"num_nodes", 5}}, kNoWrite, c.verdict()));
        c.answer = true;
        EXPECT_TRUE(it("inputs", 0, {{"num_nodes", 2}}, kNoWrite, c.verdict()));
        EXPECT_EQ(c.checks, 2);
        EXPECT_EQ(it.checks_run(), 2u);
    }
    const auto j = nlohmann::json::parse(slurp(replay));
    ASSERT_TRUE(j.contains("_N0_outputs"));
    EXPECT_EQ(j["_N0_outputs"]["state"]["num_nodes"], 5);
    EXPECT_FALSE(j["_N0_outputs"]["success"].get<bool>());
    EXPECT_EQ(j["_N0_outputs"]["polygraphy_class"], "IterationContext");
    EXPECT_TRUE(j["_N0_inputs"]["success"].get<bool>());
    // The _skip_current copy was written before the last check, with that iteration failed.
    const auto skip = nlohmann::json::parse(slurp(dir + "/replay_skip_current.json"));
    EXPECT_FALSE(skip["_N0_inputs"]["success"].get<bool>());

    debug::IterationOptions o;
    o.load_replay = replay;
    debug::KeyedIterations it(o);
    Counter c;
    c.answer = true;
    // Same key and state: answered from the replay (recorded failure), no check.
    EXPECT_FALSE(it("outputs", 0, {{"num_nodes", 5}}, kNoWrite, c.verdict()));
    EXPECT_EQ(c.checks, 0);
    // Same key, other state: the search changed, so the check runs.
    EXPECT_TRUE(it("inputs", 0, {{"num_nodes", 3}}, kNoWrite, c.verdict()));
    EXPECT_EQ(c.checks, 1);
    EXPECT_EQ(it.replayed(), 1u);
    EXPECT_EQ(it.iterations(), 2u);
}

TEST(DebugKeyedIteration, PolygraphyStateWithOnlyNumNodesMatchesByCount) {
    const std::string dir = test::make_temp_dir();
    std::ofstream(dir + "/poly.json") << R"({"_N0_outputs": {"state": {"num_nodes": 7},
        "iteration_info": {"iteration": 0}, "success": true,
        "polygraphy_class": "IterationContext"}})";
    debug::IterationOptions o;
    o.load_replay = dir + "/poly.json";
    debug::KeyedIterations it(o);
    Counter c;
    EXPECT_TRUE(it("outputs", 0, {{"num_nodes", 7}, {"node_index", 6}}, kNoWrite, c.verdict()));
    EXPECT_EQ(c.checks, 0);
    EXPECT_FALSE(it("outputs", 0, {{"num_nodes", 8}, {"node_index", 7}}, kNoWrite, c.verdict()));
    EXPECT_EQ(c.checks, 1);
}

TEST(DebugKeyedIteration, ArtifactsKeepEachIterationsFiles) {
    const std::string dir = test::make_temp_dir();
    debug::IterationOptions o;
    o.artifacts_dir = dir + "/art";
    debug::KeyedIterations it(o);
    Counter c;
    std::string seen_model;
    it(
        "outputs", 3, {{"num_nodes", 1}},
        [](const debug::IterationFiles& f) {
            std::ofstream(f.model) << "model";
            std::ofstream(f.inputs) << "inputs";
        },
        [&](const debug::IterationFiles& f) {
            seen_model = f.model;
            return false;
        });
    EXPECT_EQ(seen_model, dir + "/art/N3_outputs.onnx");
    EXPECT_EQ(slurp(dir + "/art/N3_outputs.onnx"), "model");
    EXPECT_EQ(slurp(dir + "/art/N3_outputs_inputs.json"), "inputs");
    EXPECT_NE(slurp(dir + "/art/verdicts.txt").find("N3_outputs FAILED"), std::string::npos);
}

TEST(DebugKeyedIteration, TemporaryFilesAreRemovedAfterTheCheck) {
    debug::IterationOptions o;
    o.needs_model = true;
    debug::KeyedIterations it(o);
    std::string model;
    it(
        "inputs", 0, {{"num_nodes", 1}},
        [](const debug::IterationFiles& f) { std::ofstream(f.model) << "m"; },
        [&](const debug::IterationFiles& f) {
            model = f.model;
            EXPECT_TRUE(std::ifstream(f.model).good());
            return true;
        });
    ASSERT_FALSE(model.empty());
    EXPECT_FALSE(std::ifstream(model).good());
}

}  // namespace
}  // namespace pg
