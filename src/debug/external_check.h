// The external check of `debug` tools (Polygraphy's CheckCmdArgs, spec §7.2): a command run
// directly (fork/exec, no shell) with stdout and stderr captured, whose exit status and output
// decide pass or fail under --fail-code / --ignore-fail-code / --fail-regex.
#pragma once

#include <string>
#include <vector>

namespace pg::debug {

struct CommandResult {
    int rc = 0;  // exit status; -signal when killed by a signal (as Python's subprocess)
    std::string out;
    std::string err;
};

// Runs `argv` (argv[0] looked up in PATH) to completion, capturing both streams. Throws kUsage
// when the program cannot be started.
CommandResult run_command(const std::vector<std::string>& argv);

struct CheckCommandOptions {
    std::vector<std::string> command;
    std::vector<int> fail_codes;         // --fail-code: only these codes mean failure
    std::vector<int> ignore_fail_codes;  // --ignore-fail-code: these codes always pass
    // --fail-regex: fail when stdout+stderr matches one. SPEC-DEVIATION: RE2 syntax (Python
    // `re`'s without backreferences and lookaround), not Python `re`; search semantics as in
    // Polygraphy. RE2 matches in time linear in the output, where std::regex crashed on 100 KB of
    // it with an alternation such as "(x|y)*error".
    std::vector<std::string> fail_regex;
    bool show_output = false;       // --show-output
    bool hide_fail_output = false;  // --hide-fail-output
};

// §7.2's decision order: ignore codes, then regex, then fail codes / non-zero status.
bool check_passed(const CheckCommandOptions& o, const CommandResult& r);

// Every token of `command` with `placeholder` replaced by `path` (any token containing it).
std::vector<std::string> substitute(const std::vector<std::string>& command,
                                    const std::string& placeholder, const std::string& path);

// Runs the check command (after substitution), logs and returns the verdict. After SIGINT
// (debug/interrupt.h) it returns false without logging the output: the caller discards it.
// `rc`, when given, receives the command's exit status.
bool run_check_command(const CheckCommandOptions& o, const std::vector<std::string>& argv,
                       int* rc = nullptr);

// A file the check reads by a fixed name in the working directory (Polygraphy's iteration
// artifact: a `--check python compare_outputs.py` that opens polygraph_debug.onnx itself).
struct FixedCopy {
    std::string from, to;
};

// run_check_command with each `copies[i].from` also written (atomically) to `copies[i].to`
// before the check and removed after it unless `keep` (--no-remove-intermediate).
bool run_check_with_copies(const CheckCommandOptions& o, const std::vector<std::string>& argv,
                           const std::vector<FixedCopy>& copies, bool keep, int* rc = nullptr);

// A --check given as one quoted word with spaces ("python compare_outputs.py") as the words of
// a shell command line (blanks separate them; single and double quotes group, a backslash
// escapes); any other command unchanged. kUsage for an unterminated quote.
std::vector<std::string> split_quoted_command(const std::vector<std::string>& command);

}  // namespace pg::debug
