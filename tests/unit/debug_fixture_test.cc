// The test helpers of tests/support/debug_fixture.h that decide a test's verdict: the SIGINT
// outcome check, replay counting, and the check commands' tokens.
#include <gtest/gtest.h>

#include <fstream>

#include "support/debug_fixture.h"
#include "support/test_paths.h"

namespace pg {
namespace {

TEST(DebugFixture, StoppedBySigintAcceptsOnlyExit130WithTheResumeHint) {
    test::Interrupted r;
    EXPECT_FALSE(test::stopped_by_sigint(r, "r.json"));  // never started
    r.started = true;
    r.status = 130;
    r.err = "... resume with --load-debug-replay r.json\n";
    EXPECT_TRUE(test::stopped_by_sigint(r, "r.json"));
    EXPECT_FALSE(test::stopped_by_sigint(r, "other.json"));
    test::Interrupted early = r;
    early.ended_early = true;
    EXPECT_FALSE(test::stopped_by_sigint(early, "r.json"));
    test::Interrupted killed = r;
    killed.signal = 2;
    EXPECT_FALSE(test::stopped_by_sigint(killed, "r.json"));
    test::Interrupted zero = r;
    zero.status = 0;
    EXPECT_FALSE(test::stopped_by_sigint(zero, "r.json"));
}

TEST(DebugFixture, ReplayEntriesCountsObjectsOnly) {
    const std::string dir = test::make_temp_dir();
    EXPECT_EQ(test::replay_entries(dir + "/none.json"), -1);
    std::ofstream(dir + "/half.json") << "{\"_N0\": {";
    EXPECT_EQ(test::replay_entries(dir + "/half.json"), -1);
    std::ofstream(dir + "/two.json") << R"({"_N0": {}, "_N1": {}})";
    EXPECT_EQ(test::replay_entries(dir + "/two.json"), 2);
}

TEST(DebugFixture, CheckCommandsRunTheBinaryUnderTest) {
    const test::Args run = {"run", "m.onnx"};
    EXPECT_EQ(test::polygraph_check(run),
              (test::Args{"--check", test::polygraph_binary(), "run", "m.onnx"}));
    EXPECT_EQ(test::shell_check("sleep 1", run),
              (test::Args{"--check", "sh", "-c", "sleep 1; exec \"$@\"", "sh",
                          test::polygraph_binary(), "run", "m.onnx"}));
    EXPECT_EQ(test::golden_run("D", "x.onnx", "--emu"),
              (test::Args{"run", "x.onnx", "--emu", "--load-inputs", "D/in.json", "--load-outputs",
                          "D/golden.json"}));
}

}  // namespace
}  // namespace pg
