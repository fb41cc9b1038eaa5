#include "cli/debug_check_args.h"

#include "base/error.h"
#include "base/log.h"
#include "cli/common.h"
#include "cli/run_options.h"
#include "debug/interrupt.h"

namespace pg::cli {

namespace {

std::vector<int> int_list(const ParsedArgs& a, const std::string& dest, const std::string& flag) {
    std::vector<int> out;
    for (const auto& v : a.get_all(dest)) {
        size_t used = 0;
        int x = 0;
        try {
            x = std::stoi(v, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used != v.size() || v.empty())
            throw Error(ErrorKind::kUsage,
                        flag + ": expected an integer exit code, got '" + v + "'");
        out.push_back(x);
    }
    return out;
}

}  // namespace

std::pair<std::vector<std::string>, std::vector<std::string>> split_check_command(
    const std::vector<std::string>& argv) {
    std::vector<std::string> head, command;
    bool in_command = false;
    for (const auto& t : argv) {
        if (in_command) {
            command.push_back(t);
        } else {
            head.push_back(t);
            in_command = t == "--check" || t == "--check-inference";
        }
    }
    return {head, command};
}

void add_check_args(ArgParser& p, const std::string& check_help) {
    p.group("Pass/Fail Reporting");
    p.flag({"--check", "--check-inference"}, "check", check_help);
    p.values({"--fail-code", "--fail-returncode"}, "fail_code", "CODE",
             "Only these exit codes of the check mean failure.");
    p.values({"--ignore-fail-code", "--ignore-fail-returncode"}, "ignore_fail_code", "CODE",
             "Exit codes of the check that always mean success.");
    p.values({"--fail-regex"}, "fail_regex", "REGEX",
             "Fail when the check's stdout or stderr matches one of these (RE2 syntax: Python re's "
             "without backreferences or lookaround). "
             "Without --fail-code the exit code is then ignored.");
    p.flag({"--show-output"}, "show_output", "Show the check's output for every iteration.");
    p.flag({"--hide-fail-output"}, "hide_fail_output",
           "Do not show the check's output when an iteration fails.");
}

debug::CheckCommandOptions check_command_options(const ParsedArgs& a) {
    debug::CheckCommandOptions cmd;
    cmd.command = debug::split_quoted_command(a.rest);
    if (cmd.command.size() > 1 && a.rest.size() == 1)
        log_verbose("--check: the quoted command runs as {} words", cmd.command.size());
    cmd.fail_codes = int_list(a, "fail_code", "--fail-code");
    cmd.ignore_fail_codes = int_list(a, "ignore_fail_code", "--ignore-fail-code");
    cmd.fail_regex = a.get_all("fail_regex");
    cmd.show_output = a.has("show_output");
    cmd.hide_fail_output = a.has("hide_fail_output");
    const bool external = a.has("check");
    if (external && cmd.command.empty())
        throw Error(ErrorKind::kUsage, "--check: expected a command after --check");
    if (!external &&
        (!cmd.fail_codes.empty() || !cmd.ignore_fail_codes.empty() || !cmd.fail_regex.empty()))
        log_warning("--fail-code/--ignore-fail-code/--fail-regex apply only with --check");
    return cmd;
}

void add_debug_common_args(ArgParser& p) {
    add_model_load_args(p);
    add_model_type_arg(p);
    add_model_save_args(p);
    add_data_loader_args(p);
    add_comparator_args(p);
    add_logger_args(p);
}

bool mentions_placeholder(const std::vector<std::string>& command,
                          const std::vector<std::string>& placeholders) {
    for (const auto& t : command)
        for (const auto& p : placeholders)
            if (t.find(p) != std::string::npos) return true;
    return false;
}

void note_fixed_copies(const std::vector<std::string>& command,
                       const std::vector<std::string>& placeholders) {
    if (mentions_placeholder(command, placeholders)) return;
    std::string names;
    for (const auto& p : placeholders) names += (names.empty() ? "./" : ", ./") + p;
    log_info(
        "--check: the command names none of {}; each iteration writes its candidate there for it "
        "to read (removed after the check unless --no-remove-intermediate)",
        names);
}

void add_iteration_args(ArgParser& p, const std::string& artifacts_help,
                        const std::string& save_help, const std::string& load_help) {
    p.group("Iterative Debugging");
    p.value({"--art-dir", "--artifacts-dir"}, "artifacts_dir", "DIR", artifacts_help);
    p.value({"--save-debug-replay"}, "save_debug_replay", "PATH", save_help);
    p.value({"--load-debug-replay"}, "load_debug_replay", "PATH", load_help);
    p.flag({"--no-remove-intermediate"}, "no_remove_intermediate",
           "Keep the candidate written to ./polygraph_debug.onnx for a check that reads it by "
           "name (it is removed after each check by default).");
}

debug::IterationOptions iteration_options(const ParsedArgs& a) {
    debug::IterationOptions io;
    io.artifacts_dir = a.get("artifacts_dir");
    io.save_replay = a.get("save_debug_replay");
    io.load_replay = a.get("load_debug_replay");
    io.needs_model = a.has("check");
    return io;
}

namespace {

int run_interruptible(const ParsedArgs& a, const std::string& what,
                      const std::function<int(const ParsedArgs&)>& body) {
    if (a.count("json")) logger().set_all_to_stderr(true);
    debug::clear_interrupted();
    debug::InterruptGuard guard;
    try {
        return body(a);
    } catch (const debug::SearchInterrupted& e) {
        const std::string replay = a.get("save_debug_replay");
        if (replay.empty())
            log_error("{} {}; no --save-debug-replay was given, so it cannot be resumed", what,
                      e.what());
        else
            log_error("{} {}; the debug replay {} holds them: resume with --load-debug-replay {}",
                      what, e.what(), replay, replay);
        return 130;
    }
}

}  // namespace

// --check is argparse's REMAINDER: every later token belongs to the command. The parser sees
// the tokens before it (plus "--check" itself) and the command lands in ParsedArgs::rest.
int run_debug_tool(const ArgParser& p, const std::vector<std::string>& argv,
                   const std::string& what, const std::function<int(const ParsedArgs&)>& body) {
    auto [head, command] = split_check_command(argv);
    return run_tool(p, head, [&](ParsedArgs& a) {
        a.rest = command;
        const Banner banner(p.prog(), argv, a);
        return banner.finish(run_interruptible(a, what, body));
    });
}

}  // namespace pg::cli
