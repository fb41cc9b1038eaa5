// Runs the polygraph binary as a user would and captures what it printed.
#pragma once

#include <string>
#include <vector>

namespace pg::test {

struct CliResult {
    int status = -1;     // exit status (128 + signal when killed by a signal)
    std::string out;     // stdout
    std::string err;     // stderr
    std::string all() const { return out + err; }
};

// Runs `polygraph args...` (no shell), with a time limit in seconds.
CliResult run_polygraph(const std::vector<std::string>& args, int timeout_seconds = 120);

// Runs any program (argv[0] looked up in PATH), with a time limit in seconds.
CliResult run_program(const std::vector<std::string>& argv, int timeout_seconds = 120);

}  // namespace pg::test
