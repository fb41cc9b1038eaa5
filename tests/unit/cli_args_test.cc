// The command-line parser: abbreviations, value forms, multi-value options, order, errors.
#include <gtest/gtest.h>

#include "base/error.h"
#include "cli/args.h"

namespace pg::cli {
namespace {

ArgParser make_parser() {
    ArgParser p("prog", "test");
    p.positional("model", "model path");
    p.flag({"--ref"}, "ref", "reference runner");
    p.flag({"--onnxrt"}, "onnxrt", "ORT runner");
    p.value({"--iterations"}, "iterations", "N", "iterations");
    p.value({"--iters"}, "iters", "N", "another option sharing a prefix");
    p.values({"--val-range"}, "val_range", "R", "ranges");
    p.value({"--mode"}, "mode", "M", "mode", {"a", "b"});
    p.add({{"--ext"}, "ext", Nargs::kOptionalOne, "optional value", "P", {}, ""});
    return p;
}

TEST(CliArgs, UnambiguousPrefixIsAccepted) {
    auto a = make_parser().parse({"m.onnx", "--iterat", "5"});
    EXPECT_EQ(a.get("iterations"), "5");
    EXPECT_EQ(a.get("model"), "m.onnx");
}

TEST(CliArgs, AmbiguousPrefixIsAUsageError) {
    try {
        make_parser().parse({"m.onnx", "--iter", "5"});
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kUsage);
        EXPECT_NE(std::string(e.what()).find("ambiguous"), std::string::npos);
    }
}

TEST(CliArgs, EqualsFormAndNegativeNumbersAsValues) {
    auto a = make_parser().parse({"m.onnx", "--iterations=7", "--val-range", "x:[-1,1]", "-2"});
    EXPECT_EQ(a.get("iterations"), "7");
    EXPECT_EQ(a.get_all("val_range"), (std::vector<std::string>{"x:[-1,1]", "-2"}));
}

TEST(CliArgs, MultiValueStopsAtTheNextOptionAndRepeatsAppend) {
    auto a = make_parser().parse({"m.onnx", "--val-range", "a", "b", "--ref", "--val-range", "c"});
    EXPECT_EQ(a.get_all("val_range"), (std::vector<std::string>{"a", "b", "c"}));
    EXPECT_EQ(a.count("ref"), 1);
}

TEST(CliArgs, SequenceKeepsCommandLineOrder) {
    auto a = make_parser().parse({"m.onnx", "--onnxrt", "--ref", "--onnxrt"});
    EXPECT_EQ(a.sequence, (std::vector<std::string>{"onnxrt", "ref", "onnxrt"}));
}

TEST(CliArgs, OptionalValueMayBeOmitted) {
    auto a = make_parser().parse({"m.onnx", "--ext", "--ref"});
    EXPECT_TRUE(a.has("ext"));
    EXPECT_EQ(a.get("ext", "unset"), "");  // present without a value
}

TEST(CliArgs, ChoicesAreChecked) {
    EXPECT_THROW(make_parser().parse({"m.onnx", "--mode", "c"}), Error);
    EXPECT_EQ(make_parser().parse({"m.onnx", "--mode", "b"}).get("mode"), "b");
}

TEST(CliArgs, MissingPositionalAndUnknownOptionAreUsageErrors) {
    EXPECT_THROW(make_parser().parse({"--ref"}), Error);
    EXPECT_THROW(make_parser().parse({"m.onnx", "--bogus"}), Error);
    EXPECT_TRUE(make_parser().parse({"--help"}).has("help"));
}

}  // namespace
}  // namespace pg::cli
