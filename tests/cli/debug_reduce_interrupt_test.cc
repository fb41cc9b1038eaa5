// SIGINT during `debug reduce`: exit status 130, a replay of exactly the completed iterations (no
// _skip_current copy, no temporary files), and a resume from it that reaches the same answer.
// The check is external and slow (a shell that sleeps 0.2 s, then `polygraph run`), so the
// signal lands while the reduction runs.
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "support/cli_runner.h"
#include "support/debug_fixture.h"
#include "support/test_paths.h"

namespace pg {
namespace {

using test::Args;
using test::concat;

TEST(DebugReduceInterrupt, SigintLeavesAValidReplayAndResumesToTheSameAnswer) {
    const std::string dir = test::make_temp_dir(), model = test::planted_model(dir);
    const Args base = {"debug",  "reduce", model,    "--fp16", "--atol",       "1e-2",
                       "--rtol", "1e-2",   "--json", "-o",     dir + "/r.onnx"};
    const Args slow = test::shell_check(
        "sleep 0.2", {"run", "polygraph_debug.onnx", "--ref", "--emu", "--fp16", "--load-inputs",
                      "polygraph_debug_inputs.json", "--atol", "1e-2", "--rtol", "1e-2"});
    auto full = test::run_polygraph(base);
    ASSERT_EQ(full.status, 0) << full.all();
    const auto jf = nlohmann::json::parse(full.out);

    const std::string replay = dir + "/replay.json", tmp = dir + "/tmp";
    std::filesystem::create_directory(tmp);
    const auto run = test::run_until_replay_then_interrupt(
        concat(concat(base, {"--save-debug-replay", replay}), slow), dir, tmp, replay, 3);
    ASSERT_TRUE(test::stopped_by_sigint(run, replay));
    const int saved = test::replay_entries(replay);
    ASSERT_GE(saved, 3);
    EXPECT_FALSE(std::filesystem::exists(dir + "/replay_skip_current.json"));
    EXPECT_TRUE(std::filesystem::is_empty(tmp)) << "temporary files left in " << tmp;

    auto resumed = test::run_polygraph(concat(base, {"--load-debug-replay", replay}));
    ASSERT_EQ(resumed.status, 0) << resumed.all();
    const auto jr = nlohmann::json::parse(resumed.out);
    EXPECT_EQ(jr["nodes"], jf["nodes"]);
    EXPECT_EQ(jr["replayed"], saved);
    EXPECT_EQ(jr["evaluations"], jf["evaluations"]);
}

}  // namespace
}  // namespace pg
