// SIGINT during `debug reduce`: exit status 130, a replay of exactly the completed iterations (no
// _skip_current copy, no temporary files), and a resume from it that reaches the same answer.
// The check is external and slow (a shell that sleeps 0.2 s, then `polygraph run`), so the
// signal lands while the reduction runs.
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

using Args = std::vector<std::string>;

Args concat(Args a, const Args& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

std::string slurp(const std::string& path) {
    std::ifstream f(path);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

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
pid_t spawn_polygraph(const Args& args, const std::string& dir, const std::string& tmpdir) {
    Args argv_s = concat({test::polygraph_binary()}, args);
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    Args env_s;
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

TEST(DebugReduceInterrupt, SigintLeavesAValidReplayAndResumesToTheSameAnswer) {
    const std::string dir = test::make_temp_dir(), model = dir + "/planted.onnx";
    onnx::save_model(*zoo::planted_overflow_model(), model);
    const Args base = {"debug",  "reduce", model,    "--fp16", "--atol",       "1e-2",
                       "--rtol", "1e-2",   "--json", "-o",     dir + "/r.onnx"};
    const Args slow = {"--check",
                       "sh",
                       "-c",
                       "sleep 0.2; exec \"$@\"",
                       "sh",
                       test::polygraph_binary(),
                       "run",
                       "polygraph_debug.onnx",
                       "--ref",
                       "--emu",
                       "--fp16",
                       "--load-inputs",
                       "polygraph_debug_inputs.json",
                       "--atol",
                       "1e-2",
                       "--rtol",
                       "1e-2"};
    auto full = test::run_polygraph(base);
    ASSERT_EQ(full.status, 0) << full.all();
    const auto jf = nlohmann::json::parse(full.out);

    const std::string replay = dir + "/replay.json", tmp = dir + "/tmp";
    std::filesystem::create_directory(tmp);
    const pid_t pid =
        spawn_polygraph(concat(concat(base, {"--save-debug-replay", replay}), slow), dir, tmp);
    ASSERT_GT(pid, 0);
    int status = 0;
    bool exited = false;
    for (int i = 0; i < 6000 && replay_entries(replay) < 3; ++i) {  // 20 ms steps, <= 120 s
        if (::waitpid(pid, &status, WNOHANG) == pid) {
            exited = true;
            break;
        }
        ::usleep(20000);
    }
    ASSERT_FALSE(exited) << "ended before it could be interrupted: " << slurp(dir + "/err.txt");
    ::kill(pid, SIGINT);
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
    const std::string err = slurp(dir + "/err.txt");
    EXPECT_EQ(WEXITSTATUS(status), 130) << err;
    EXPECT_NE(err.find("resume with --load-debug-replay " + replay), std::string::npos) << err;
    const int saved = replay_entries(replay);
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
