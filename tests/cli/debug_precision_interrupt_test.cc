// SIGINT during `debug precision`: the search stops with exit status 130 and a valid replay of
// the completed iterations (no _skip_current copy, no temporary files), and resuming from that
// replay reaches the same answer with fewer checks. The check is external and slow (a shell
// that sleeps 0.2 s, then `polygraph run`), so the signal lands while a search is running.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "support/cli_runner.h"
#include "support/debug_fixture.h"
#include "support/test_paths.h"
#include "zoo/zoo.h"

namespace pg {
namespace {

using test::Args;
using test::concat;
using test::slurp;

struct Planted {
    std::string dir = test::make_temp_dir();
    std::string model = test::planted_model(dir);
    Planted() {
        auto r = test::save_reference_io(model, dir);
        EXPECT_EQ(r.status, 0) << r.all();
    }
    Args debug(const Args& extra) const {
        Args a = {"debug",  "precision", model,    "--fp16", "--load-inputs", dir + "/in.json",
                  "--atol", "1e-2",      "--rtol", "1e-2",   "--json"};
        return concat(a, extra);
    }
    Args slow_check() const {
        return test::shell_check(
            "sleep 0.2", concat(test::golden_run(dir), {"--atol", "1e-2", "--rtol", "1e-2"}));
    }
};

TEST(DebugPrecisionInterrupt, SigintLeavesAValidReplayAndResumesToTheSameAnswer) {
    const Planted p;
    // The uninterrupted in-process search: the answer and every verdict by float32 set.
    const std::string full_replay = p.dir + "/full.json";
    auto full = test::run_polygraph(p.debug({"--save-debug-replay", full_replay}));
    ASSERT_EQ(full.status, 0) << full.all();
    const auto jf = nlohmann::json::parse(full.out);
    ASSERT_EQ(jf["fp32_nodes"], nlohmann::json(zoo::planted_node_names()));
    std::map<nlohmann::json, bool> verdict;
    for (const auto& v : nlohmann::json::parse(slurp(full_replay)))
        verdict[v["state"]["fp32_nodes"]] = v["success"].get<bool>();

    const std::string replay = p.dir + "/replay.json", tmp = p.dir + "/tmp";
    std::filesystem::create_directory(tmp);
    // Interrupted once two iterations are saved.
    const auto run = test::run_until_replay_then_interrupt(
        concat(p.debug({"--save-debug-replay", replay}), p.slow_check()), p.dir, tmp, replay, 2);
    ASSERT_TRUE(test::stopped_by_sigint(run, replay));

    // The replay holds only completed iterations, each with the verdict the search would give.
    const auto rep = nlohmann::json::parse(slurp(replay));
    const int saved = static_cast<int>(rep.size());
    ASSERT_GE(saved, 2);
    for (const auto& e : rep.items()) {
        const auto& v = e.value();
        ASSERT_TRUE(verdict.count(v["state"]["fp32_nodes"])) << e.key();
        EXPECT_EQ(v["success"].get<bool>(), verdict[v["state"]["fp32_nodes"]]) << e.key();
    }
    EXPECT_FALSE(std::filesystem::exists(p.dir + "/replay_skip_current.json"));
    EXPECT_TRUE(std::filesystem::is_empty(tmp)) << "temporary files left in " << tmp;

    auto resumed = test::run_polygraph(concat(
        p.debug({"--load-debug-replay", replay, "--save-debug-replay", p.dir + "/resumed.json"}),
        p.slow_check()));
    ASSERT_EQ(resumed.status, 0) << resumed.all();
    const auto jr = nlohmann::json::parse(resumed.out);
    EXPECT_EQ(jr["fp32_nodes"], jf["fp32_nodes"]);
    EXPECT_EQ(jr["replayed"], saved);
    EXPECT_LT(jr["checks_run"].get<int>(), jr["evaluations"].get<int>());
    EXPECT_EQ(jr["evaluations"], jf["evaluations"]);
}

// Polygraphy's own replays record state {}: bisect / linear take them by iteration index.
TEST(DebugPrecisionInterrupt, IndexKeyedReplayAnswersBisect) {
    const Planted p;
    const std::string ours = p.dir + "/ours.json";
    auto full = test::run_polygraph(p.debug({"--mode", "bisect", "--save-debug-replay", ours}));
    ASSERT_EQ(full.status, 0) << full.all();
    nlohmann::ordered_json poly = nlohmann::ordered_json::object();
    const auto saved = nlohmann::ordered_json::parse(slurp(ours));
    for (const auto& e : saved.items())
        poly[e.key()] = {{"state", nlohmann::json::object()},
                         {"iteration_info", e.value()["iteration_info"]},
                         {"success", e.value()["success"]},
                         {"polygraphy_class", "IterationContext"}};
    std::ofstream(p.dir + "/poly.json") << poly.dump(4);
    auto r = test::run_polygraph(
        p.debug({"--mode", "bisect", "--load-debug-replay", p.dir + "/poly.json"}));
    ASSERT_EQ(r.status, 0) << r.all();
    const auto j = nlohmann::json::parse(r.out);
    const auto jf = nlohmann::json::parse(full.out);
    EXPECT_EQ(j["fp32_nodes"], jf["fp32_nodes"]);
    EXPECT_EQ(j["checks_run"], 0);
    EXPECT_EQ(j["replayed"], jf["evaluations"]);
    // minimize does not trust index-keyed entries (its order is not Polygraphy's).
    auto m = test::run_polygraph(p.debug({"--load-debug-replay", p.dir + "/poly.json"}));
    ASSERT_EQ(m.status, 0) << m.all();
    EXPECT_EQ(nlohmann::json::parse(m.out)["replayed"], 0);
    EXPECT_NE(m.err.find("used only with --mode bisect or linear"), std::string::npos) << m.err;
}

}  // namespace
}  // namespace pg
