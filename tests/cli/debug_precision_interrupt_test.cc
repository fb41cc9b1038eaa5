// SIGINT during `debug precision`: the search stops with exit status 130 and a valid replay of
// the completed iterations (no _skip_current copy, no temporary files), and resuming from that
// replay reaches the same answer with fewer checks. The check is external and slow (a shell
// that sleeps 0.2 s, then `polygraph run`), so the signal lands while a search is running.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "onnx/model_io.h"
#include "support/cli_runner.h"
#include "support/test_paths.h"
#include "zoo/zoo.h"

extern char** environ;

namespace pg {
namespace {

struct Planted {
    std::string dir = test::make_temp_dir();
    std::string model = dir + "/planted.onnx";
    Planted() {
        onnx::save_model(*zoo::planted_overflow_model(), model);
        auto r = test::run_polygraph({"run", model, "--ref", "--save-inputs", dir + "/in.json",
                                      "--save-outputs", dir + "/golden.json"});
        EXPECT_EQ(r.status, 0) << r.all();
    }
    std::vector<std::string> debug(const std::vector<std::string>& extra) const {
        std::vector<std::string> a = {"debug",         "precision",      model,    "--fp16",
                                      "--load-inputs", dir + "/in.json", "--atol", "1e-2",
                                      "--rtol",        "1e-2",           "--json"};
        a.insert(a.end(), extra.begin(), extra.end());
        return a;
    }
    std::vector<std::string> slow_check() const {
        return {"--check",
                "sh",
                "-c",
                "sleep 0.2; exec \"$@\"",
                "sh",
                test::polygraph_binary(),
                "run",
                "polygraph_debug.onnx",
                "--ref",
                "--load-inputs",
                dir + "/in.json",
                "--load-outputs",
                dir + "/golden.json",
                "--atol",
                "1e-2",
                "--rtol",
                "1e-2"};
    }
};

std::vector<std::string> concat(std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

std::string slurp(const std::string& path) {
    std::ifstream f(path);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

// Entries of the replay at `path` (-1 when missing or not parseable yet).
int replay_entries(const std::string& path) {
    if (!std::filesystem::exists(path)) return -1;
    try {
        auto j = nlohmann::json::parse(slurp(path));
        return j.is_object() ? static_cast<int>(j.size()) : -1;
    } catch (const nlohmann::json::exception&) {
        return -1;
    }
}

// Starts polygraph with TMPDIR=`tmpdir`, stdout/stderr to files in `dir`.
pid_t spawn_polygraph(const std::vector<std::string>& args, const std::string& dir,
                      const std::string& tmpdir) {
    std::vector<std::string> argv_s = {test::polygraph_binary()};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> env_s;
    for (char** e = environ; *e; ++e)
        if (std::string(*e).rfind("TMPDIR=", 0) != 0) env_s.push_back(*e);
    env_s.push_back("TMPDIR=" + tmpdir);
    std::vector<char*> envp;
    for (auto& e : env_s) envp.push_back(e.data());
    envp.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, (dir + "/out.txt").c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, (dir + "/err.txt").c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&fa);
    return rc == 0 ? pid : -1;
}

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
    const pid_t pid = spawn_polygraph(
        concat(p.debug({"--save-debug-replay", replay}), p.slow_check()), p.dir, tmp);
    ASSERT_GT(pid, 0);
    int status = 0;
    bool exited = false;
    // Poll until two iterations are saved (bounded: 20 ms steps for at most 120 s).
    for (int i = 0; i < 6000 && replay_entries(replay) < 2; ++i) {
        if (::waitpid(pid, &status, WNOHANG) == pid) {
            exited = true;
            break;
        }
        ::usleep(20000);
    }
    ASSERT_FALSE(exited) << "the search ended before it could be interrupted: "
                         << slurp(p.dir + "/err.txt");
    ASSERT_GE(replay_entries(replay), 2);
    ::kill(pid, SIGINT);
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
    const std::string err = slurp(p.dir + "/err.txt");
    EXPECT_EQ(WEXITSTATUS(status), 130) << err;
    EXPECT_NE(err.find("resume with --load-debug-replay " + replay), std::string::npos) << err;

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
