#include "support/cli_runner.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "support/test_paths.h"

namespace pg::test {

namespace {

std::string slurp(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

}  // namespace

CliResult run_program(const std::vector<std::string>& argv, int timeout_seconds) {
    const std::string dir = make_temp_dir();
    const std::string out_path = dir + "/stdout", err_path = dir + "/stderr";
    CliResult r;
    pid_t pid = fork();
    if (pid == 0) {
        int o = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int in = ::open("/dev/null", O_RDONLY);
        dup2(o, 1);
        dup2(e, 2);
        dup2(in, 0);
        std::vector<char*> args;
        for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        alarm(static_cast<unsigned>(timeout_seconds));
        execvp(args[0], args.data());
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = slurp(out_path);
    r.err = slurp(err_path);
    return r;
}

CliResult run_polygraph(const std::vector<std::string>& args, int timeout_seconds) {
    std::vector<std::string> argv = {polygraph_binary()};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_program(argv, timeout_seconds);
}

}  // namespace pg::test
