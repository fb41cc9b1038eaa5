// The pieces both debug iteration engines share (debug/iteration_common.h): the replay reader's
// errors, the working folder, verdict lines, the replay entry layout and its save, and the
// SIGINT stop that removes the _skip_current copy.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "debug/interrupt.h"
#include "debug/iteration_common.h"
#include "support/debug_fixture.h"
#include "support/test_paths.h"

namespace pg {
namespace {

using test::slurp;

ErrorKind kind_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.kind();
    }
    return ErrorKind::kInternal;
}

TEST(DebugIterationCommon, ReplayReaderRejectsBrokenAndNonObjectFiles) {
    const std::string dir = test::make_temp_dir();
    std::ofstream(dir + "/bad.json") << "{not json";
    std::ofstream(dir + "/list.json") << "[1, 2]";
    std::ofstream(dir + "/ok.json") << R"({"_N0": {"success": true}})";
    EXPECT_EQ(kind_of([&] { debug::read_replay_object(dir + "/bad.json"); }),
              ErrorKind::kInvalidInput);
    EXPECT_EQ(kind_of([&] { debug::read_replay_object(dir + "/list.json"); }),
              ErrorKind::kInvalidInput);
    EXPECT_TRUE(debug::read_replay_object(dir + "/ok.json")["_N0"]["success"].get<bool>());
}

TEST(DebugIterationCommon, ArtifactsDirGetsAnEmptyVerdictFileAndLines) {
    const std::string dir = test::make_temp_dir() + "/art";
    debug::IterationOptions o;
    o.artifacts_dir = dir;
    o.needs_model = true;  // an artifacts folder replaces the temporary one
    EXPECT_EQ(debug::prepare_iteration_dir(o), "");
    EXPECT_EQ(slurp(dir + "/verdicts.txt"), "");
    debug::append_verdict_line(dir, "a PASSED");
    debug::append_verdict_line(dir, "b FAILED");
    debug::append_verdict_line("", "ignored");
    EXPECT_EQ(slurp(dir + "/verdicts.txt"), "a PASSED\nb FAILED\n");
    debug::prepare_iteration_dir(o);  // a new run starts a new verdict file
    EXPECT_EQ(slurp(dir + "/verdicts.txt"), "");
}

TEST(DebugIterationCommon, TemporaryFolderOnlyWhenTheCheckNeedsAModel) {
    debug::IterationOptions o;
    EXPECT_EQ(debug::prepare_iteration_dir(o), "");
    o.needs_model = true;
    const std::string tmp = debug::prepare_iteration_dir(o);
    ASSERT_FALSE(tmp.empty());
    EXPECT_TRUE(std::filesystem::is_directory(tmp));
    EXPECT_NE(tmp.find("polygraph_debug."), std::string::npos) << tmp;
    std::filesystem::remove(tmp);
}

TEST(DebugIterationCommon, ReplayEntryAndSaveFollowPolygraphysLayout) {
    const std::string path = test::make_temp_dir() + "/replay.json";
    nlohmann::ordered_json replay = nlohmann::ordered_json::object();
    replay["_N3"] = debug::replay_entry({{"num_nodes", 4}}, 3, true);
    debug::save_replay_file(path, replay);
    const std::string text = slurp(path);
    EXPECT_EQ(text.back(), '\n');
    const auto j = nlohmann::ordered_json::parse(text);
    EXPECT_EQ(j["_N3"]["state"]["num_nodes"], 4);
    EXPECT_EQ(j["_N3"]["iteration_info"]["iteration"], 3);
    EXPECT_TRUE(j["_N3"]["success"].get<bool>());
    EXPECT_EQ(j["_N3"]["polygraphy_class"], "IterationContext");
    std::vector<std::string> keys;
    for (const auto& e : j["_N3"].items()) keys.push_back(e.key());
    EXPECT_EQ(keys,
              (std::vector<std::string>{"state", "iteration_info", "success", "polygraphy_class"}));
}

TEST(DebugIterationCommon, InterruptRemovesTheSkipCurrentCopyAndNamesTheCount) {
    const std::string dir = test::make_temp_dir();
    const std::string replay = dir + "/r.json", skip = dir + "/r_skip_current.json";
    std::ofstream(skip) << "{}";
    try {
        debug::throw_interrupted(replay, 5);
        FAIL() << "no exception";
    } catch (const debug::SearchInterrupted& e) {
        EXPECT_NE(std::string(e.what()).find("after 5 complete iteration(s)"), std::string::npos)
            << e.what();
    }
    EXPECT_FALSE(std::filesystem::exists(skip));
    EXPECT_THROW(debug::throw_interrupted("", 0), debug::SearchInterrupted);
}

}  // namespace
}  // namespace pg
