// String kernels: RegexFullMatch's engine (RE2, ONNX's syntax) on the inputs a backtracking engine
// fails: a string long enough to overflow a recursive matcher's stack, a pattern that backtracks
// exponentially, and RE2 syntax with an invalid pattern's message.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/error.h"
#include "support/op_runner.h"

namespace pg {
namespace {

using ir::Attribute;
using test::run_op;

std::vector<bool> full_match(const std::string& pattern, std::vector<std::string> v) {
    const int64_t n = static_cast<int64_t>(v.size());
    const auto out = run_op("RegexFullMatch", {Tensor::from_strings({n}, std::move(v))},
                            ir::attrs(Attribute::make_string("pattern", pattern)), 20);
    std::vector<bool> got;
    for (uint64_t i = 0; i < out[0].numel(); ++i) got.push_back(out[0].bytes()[i] != 0);
    return got;
}

TEST(OpsStrings, RegexFullMatchWholeStringsOnly) {
    EXPECT_EQ(full_match("[a-z]+@[a-z]+\\.com", {"abc@def.com", "abc@def.com!", ""}),
              (std::vector<bool>{true, false, false}));
    EXPECT_EQ(full_match("", {"", "a"}), (std::vector<bool>{true, false}));
    EXPECT_EQ(full_match("(?i)ab\\d{2}", {"AB12", "ab1"}), (std::vector<bool>{true, false}));
}

// std::regex crashed on the first (its recursion per character overflowed the stack: polygraph
// exited 139) and ran past a minute on the second.
TEST(OpsStrings, RegexFullMatchIsLinearInTheString) {
    EXPECT_EQ(full_match("(a|b)*", {std::string(200000, 'a')}), (std::vector<bool>{true}));
    EXPECT_EQ(full_match("(a+)+$", {std::string(40, 'a') + "!"}), (std::vector<bool>{false}));
}

TEST(OpsStrings, RegexFullMatchNamesAnInvalidPattern) {
    try {
        full_match("(a", {"a"});
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput) << e.what();
        EXPECT_NE(std::string(e.what()).find("RegexFullMatch: invalid pattern '(a'"),
                  std::string::npos)
            << e.what();
    }
}

// Splitting on whitespace with maxsplit: ONNX's text removes trailing whitespace from the rest
// kept whole (ONNX Runtime agrees; Python's str.split keeps it, and so did this kernel).
TEST(OpsStrings, StringSplitOnWhitespaceDropsTrailingSpaceOfTheRest) {
    const Tensor x = Tensor::from_strings({1}, {"  hello world   ! "});
    const auto out =
        run_op("StringSplit", {x}, ir::attrs(Attribute::make_int("maxsplit", 1)), 20, 2);
    EXPECT_EQ(out[0].strings(), (std::vector<std::string>{"hello", "world   !"}));
    const auto none =
        run_op("StringSplit", {x}, ir::attrs(Attribute::make_int("maxsplit", 0)), 20, 2);
    EXPECT_EQ(none[0].strings(), (std::vector<std::string>{"hello world   !"}));
}

}  // namespace
}  // namespace pg
