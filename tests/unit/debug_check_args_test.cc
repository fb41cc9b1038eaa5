// The shared `debug` check flags (cli/debug_check_args.h): the --check REMAINDER split and the
// Pass/Fail Reporting options read back, the Iterative Debugging options, and run_debug_tool.
#include <gtest/gtest.h>

#include <cstdlib>

#include "base/error.h"
#include "cli/common.h"
#include "cli/debug_check_args.h"
#include "debug/interrupt.h"

namespace pg {
namespace {

TEST(DebugCheckArgs, SplitAtTheFirstCheck) {
    auto [head, cmd] = cli::split_check_command(
        {"model.onnx", "-o", "r.onnx", "--check", "run", "--check", "x", "--fail-code", "1"});
    EXPECT_EQ(head, (std::vector<std::string>{"model.onnx", "-o", "r.onnx", "--check"}));
    EXPECT_EQ(cmd, (std::vector<std::string>{"run", "--check", "x", "--fail-code", "1"}));
    auto [h2, c2] = cli::split_check_command({"m.onnx", "--check-inference"});
    EXPECT_EQ(h2.back(), "--check-inference");
    EXPECT_TRUE(c2.empty());
    auto [h3, c3] = cli::split_check_command({"m.onnx"});
    EXPECT_EQ(h3.size(), 1u);
    EXPECT_TRUE(c3.empty());
}

cli::ParsedArgs parse(const std::vector<std::string>& argv, std::vector<std::string> rest) {
    cli::ArgParser p("t", "");
    p.positional("model_file", "");
    cli::add_check_args(p, "check");
    cli::ParsedArgs a = p.parse(argv);
    a.rest = std::move(rest);
    return a;
}

TEST(DebugCheckArgs, OptionsFromFlags) {
    auto a = parse({"m.onnx", "--fail-code", "3", "4", "--ignore-fail-code", "0", "--fail-regex",
                    "Op: Mul", "--show-output", "--check"},
                   {"prog", "arg"});
    auto o = cli::check_command_options(a);
    EXPECT_EQ(o.command, (std::vector<std::string>{"prog", "arg"}));
    EXPECT_EQ(o.fail_codes, (std::vector<int>{3, 4}));
    EXPECT_EQ(o.ignore_fail_codes, std::vector<int>{0});
    EXPECT_EQ(o.fail_regex, std::vector<std::string>{"Op: Mul"});
    EXPECT_TRUE(o.show_output);
    EXPECT_FALSE(o.hide_fail_output);
}

// A check quoted as one word runs as the words of a shell command line; an existing program
// whose path has a blank, and commands of several words, run as given.
TEST(DebugCheckArgs, AQuotedCommandIsSplitIntoWords) {
    using V = std::vector<std::string>;
    EXPECT_EQ(debug::split_quoted_command({"python compare_outputs.py"}),
              (V{"python", "compare_outputs.py"}));
    EXPECT_EQ(debug::split_quoted_command({"  sh -c 'echo a  b' \"x y\" c\\ d "}),
              (V{"sh", "-c", "echo a  b", "x y", "c d"}));
    EXPECT_EQ(debug::split_quoted_command({"a b", "c"}), (V{"a b", "c"}));
    EXPECT_EQ(debug::split_quoted_command({"prog"}), V{"prog"});
    EXPECT_THROW(debug::split_quoted_command({"sh 'unterminated"}), Error);
    const std::string dir = ::testing::TempDir() + "/with blank";
    ASSERT_EQ(std::system(("mkdir -p '" + dir + "' && touch '" + dir + "/check'").c_str()), 0);
    EXPECT_EQ(debug::split_quoted_command({dir + "/check"}), V{dir + "/check"});
    auto a = parse({"m.onnx", "--check"}, {"python compare_outputs.py"});
    EXPECT_EQ(cli::check_command_options(a).command, (V{"python", "compare_outputs.py"}));
}

TEST(DebugCheckArgs, BadCodesAndAnEmptyCommandAreUsageErrors) {
    for (const auto& [argv, rest] :
         std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>>{
             {{"m.onnx", "--fail-code", "x1"}, {}},
             {{"m.onnx", "--ignore-fail-code", "2.5"}, {}},
             {{"m.onnx", "--check"}, {}}}) {
        try {
            cli::check_command_options(parse(argv, rest));
            ADD_FAILURE() << argv[1];
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::kUsage) << argv[1];
        }
    }
}

cli::ArgParser iteration_parser() {
    cli::ArgParser p("t", "");
    p.positional("model_file", "");
    cli::add_check_args(p, "check");
    cli::add_iteration_args(p, "art", "save", "load");
    cli::add_logger_args(p);
    return p;
}

TEST(DebugCheckArgs, IterationOptionsFromFlags) {
    auto o = cli::iteration_options(iteration_parser().parse(
        {"m.onnx", "--art-dir", "A", "--save-debug-replay", "S", "--load-debug-replay", "L"}));
    EXPECT_EQ(o.artifacts_dir, "A");
    EXPECT_EQ(o.save_replay, "S");
    EXPECT_EQ(o.load_replay, "L");
    EXPECT_FALSE(o.needs_model);
    EXPECT_FALSE(o.replay_by_index);
    o = cli::iteration_options(
        iteration_parser().parse({"m.onnx", "--artifacts-dir", "B", "--check"}));
    EXPECT_EQ(o.artifacts_dir, "B");
    EXPECT_TRUE(o.save_replay.empty());
    EXPECT_TRUE(o.needs_model);
}

TEST(DebugCheckArgs, RunDebugToolPassesTheCommandAndTurnsAnInterruptInto130) {
    std::vector<std::string> seen;
    auto body = [&seen](const cli::ParsedArgs& a) {
        seen = a.rest;
        return a.has("show_output") ? 7 : 0;
    };
    EXPECT_EQ(
        cli::run_debug_tool(iteration_parser(), {"m.onnx", "--show-output", "--check", "p", "-q"},
                            "Search", body),
        7);
    EXPECT_EQ(seen, (std::vector<std::string>{"p", "-q"}));
    auto stop = [](const cli::ParsedArgs&) -> int {
        throw debug::SearchInterrupted("interrupted");
    };
    EXPECT_EQ(cli::run_debug_tool(iteration_parser(), {"m.onnx", "--save-debug-replay", "r.json"},
                                  "Search", stop),
              130);
    auto fails = [](const cli::ParsedArgs&) -> int { throw Error(ErrorKind::kUsage, "x"); };
    EXPECT_THROW(cli::run_debug_tool(iteration_parser(), {"m.onnx"}, "Search", fails), Error);
}

}  // namespace
}  // namespace pg
