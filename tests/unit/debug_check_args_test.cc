// The shared `debug` check flags (cli/debug_check_args.h): the --check REMAINDER split and the
// Pass/Fail Reporting options read back.
#include <gtest/gtest.h>

#include "base/error.h"
#include "cli/debug_check_args.h"

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

}  // namespace
}  // namespace pg
