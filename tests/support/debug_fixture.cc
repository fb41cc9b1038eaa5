#include "support/debug_fixture.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "onnx/model_io.h"
#include "support/test_paths.h"
#include "zoo/zoo.h"

extern char** environ;

namespace pg::test {

namespace {

// Starts polygraph with TMPDIR=`tmpdir`, stdout/stderr to files in `dir`; -1 when it cannot.
pid_t spawn_polygraph(const Args& args, const std::string& dir, const std::string& tmpdir) {
    Args argv_s = concat({polygraph_binary()}, args);
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

void set_status(Interrupted& r, int wait_status) {
    r.signal = WIFSIGNALED(wait_status) ? WTERMSIG(wait_status) : 0;
    r.status = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1;
}

}  // namespace

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

bool file_exists(const std::string& path) {
    return std::ifstream(path).good();
}

std::string planted_model(const std::string& dir) {
    const std::string path = dir + "/planted.onnx";
    onnx::save_model(*zoo::planted_overflow_model(), path);
    return path;
}

CliResult save_reference_io(const std::string& model, const std::string& dir, const Args& extra) {
    return run_polygraph(
        concat(concat({"run", model, "--ref"}, extra),
               {"--save-inputs", dir + "/in.json", "--save-outputs", dir + "/golden.json"}));
}

Args golden_run(const std::string& dir, const std::string& model, const std::string& runner) {
    return {"run",
            model,
            runner,
            "--load-inputs",
            dir + "/in.json",
            "--load-outputs",
            dir + "/golden.json"};
}

Args polygraph_check(const Args& args) {
    return concat({"--check", polygraph_binary()}, args);
}

Args shell_check(const std::string& script, const Args& args) {
    return concat({"--check", "sh", "-c", script + "; exec \"$@\"", "sh", polygraph_binary()},
                  args);
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

Interrupted run_until_replay_then_interrupt(const Args& args, const std::string& dir,
                                            const std::string& tmpdir, const std::string& replay,
                                            int entries) {
    Interrupted r;
    const pid_t pid = spawn_polygraph(args, dir, tmpdir);
    if (pid <= 0) return r;
    r.started = true;
    int status = 0;
    for (int i = 0; i < 6000 && replay_entries(replay) < entries; ++i) {  // 20 ms steps, <= 120 s
        if (::waitpid(pid, &status, WNOHANG) == pid) {
            r.ended_early = true;
            set_status(r, status);
            r.err = slurp(dir + "/err.txt");
            return r;
        }
        ::usleep(20000);
    }
    ::kill(pid, SIGINT);
    ::waitpid(pid, &status, 0);
    set_status(r, status);
    r.err = slurp(dir + "/err.txt");
    return r;
}

::testing::AssertionResult stopped_by_sigint(const Interrupted& run, const std::string& replay) {
    if (!run.started) return ::testing::AssertionFailure() << "polygraph could not be started";
    if (run.ended_early)
        return ::testing::AssertionFailure()
               << "ended (status " << run.status << ") before it could be interrupted: " << run.err;
    if (run.signal != 0)
        return ::testing::AssertionFailure()
               << "killed by signal " << run.signal << ": " << run.err;
    if (run.status != 130)
        return ::testing::AssertionFailure()
               << "exit status " << run.status << ", not 130: " << run.err;
    if (run.err.find("resume with --load-debug-replay " + replay) == std::string::npos)
        return ::testing::AssertionFailure()
               << "no hint to resume from " << replay << ": " << run.err;
    return ::testing::AssertionSuccess();
}

}  // namespace pg::test
