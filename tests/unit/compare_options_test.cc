#include <gtest/gtest.h>

#include "base/error.h"
#include "compare/compare_options.h"
#include "compare/output_matching.h"

namespace pg::compare {
namespace {

TEST(CompareOptions, Defaults) {
    const CompareOptions o = parse_compare_options({});
    const SimpleSettings s = resolve_simple(o, "out");
    EXPECT_EQ(s.atol.value, 1e-5);
    EXPECT_EQ(s.atol.repr, "1e-05");
    EXPECT_EQ(s.rtol.repr, "1e-05");
    EXPECT_EQ(s.stat, ErrorStat::kElemwise);
    EXPECT_EQ(s.quantile.value, 0.99);
    EXPECT_TRUE(s.check_shapes);
    EXPECT_EQ(o.func, CompareFunc::kSimple);
    EXPECT_EQ(o.index_tolerance.get("x"), 0);
}

TEST(CompareOptions, PerOutputSyntaxSplitsOnLastColon) {
    CompareArgs a;
    a.atol = {"0.003", "out:0:1e-3", "idx:2"};
    a.check_error_stat = {"mean", "out:0:max", "idx:median"};
    const CompareOptions o = parse_compare_options(a);
    EXPECT_EQ(o.atol.get("out:0").value, 1e-3);
    EXPECT_EQ(o.atol.get("out:0").repr, "0.001");
    EXPECT_EQ(o.atol.get("idx").value, 2);
    EXPECT_EQ(o.atol.get("idx").repr, "2");  // Polygraphy's cast() makes "2" an int
    EXPECT_EQ(o.atol.get("other").repr, "0.003");
    EXPECT_EQ(o.check_error_stat.get("out:0"), ErrorStat::kMax);
    EXPECT_EQ(o.check_error_stat.get("idx"), ErrorStat::kMedian);
    EXPECT_EQ(o.check_error_stat.get("zzz"), ErrorStat::kMean);
    EXPECT_EQ(split_key_value("a:b:c").first, "a:b");
    EXPECT_EQ(split_key_value("5").first, "");
}

TEST(CompareOptions, LaterValueWinsAndNoDefaultFallsBack) {
    CompareArgs a;
    a.rtol = {"x:0.1", "x:0.2"};
    const CompareOptions o = parse_compare_options(a);
    EXPECT_EQ(o.rtol.get("x").value, 0.2);
    EXPECT_EQ(o.rtol.get("y").value, 1e-5);
}

TEST(CompareOptions, BadValuesAreUsageErrors) {
    auto bad = [](CompareArgs a) {
        try {
            parse_compare_options(a);
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::kUsage);
            return std::string(e.what());
        }
        ADD_FAILURE() << "no error";
        return std::string();
    };
    CompareArgs a;
    a.check_error_stat = {"out:maximum"};
    EXPECT_NE(bad(a).find("--check-error-stat"), std::string::npos);
    a = {};
    a.atol = {"out:abc"};
    EXPECT_NE(bad(a).find("--atol"), std::string::npos);
    a = {};
    a.error_quantile = {"1.5"};
    EXPECT_NE(bad(a).find("[0, 1]"), std::string::npos);
    a = {};
    a.index_tolerance = {"1.5"};
    EXPECT_NE(bad(a).find("--index-tolerance"), std::string::npos);
    a = {};
    a.compare = "fancy";
    bad(a);
}

TEST(CompareOptions, WarnsAboutOptionsOfTheOtherFunction) {
    CompareArgs a;
    a.index_tolerance = {"1"};
    auto w = unused_option_warnings(a);
    ASSERT_EQ(w.size(), 1u);
    EXPECT_EQ(w[0],
              "Option: --index-tolerance is only valid for comparison function: 'indices'. The "
              "selected comparison function is: 'simple', so this option will be ignored.");
    a = {};
    a.compare = "indices";
    a.atol = {"1"};
    w = unused_option_warnings(a);
    ASSERT_EQ(w.size(), 1u);
    EXPECT_NE(w[0].find("--atol/--abs-tol"), std::string::npos);
}

TEST(CompareOptions, ExtraKeysWarning) {
    CompareArgs a;
    a.rtol = {"nope:1", "out:1", "2"};
    const auto w = extra_key_warnings(parse_compare_options(a), {"out"});
    ASSERT_EQ(w.size(), 1u);
    EXPECT_EQ(w[0], "Extra items in the rtol dictionary: {'nope'}");
}

TEST(OutputMatching, FindStrInIterable) {
    const std::vector<std::string> seq = {"Output_A", "b", "logits"};
    EXPECT_EQ(find_str_in_iterable("b", seq), "b");
    EXPECT_EQ(find_str_in_iterable("output", seq), "Output_A");  // case-insensitive substring
    EXPECT_EQ(find_str_in_iterable("logits:0", seq), "logits");  // element inside the name
    EXPECT_EQ(find_str_in_iterable("zzz", seq, 1), "b");         // by index
    EXPECT_FALSE(find_str_in_iterable("zzz", seq, 7));
    EXPECT_FALSE(find_str_in_iterable("zzz", seq));
}

TEST(OutputMatching, FallbacksAndSkips) {
    auto m = match_outputs({"out", "x", "y"}, {"out:0", "x", "w"}, "r1");
    ASSERT_EQ(m.matches.size(), 3u);
    EXPECT_EQ(m.matches[0].index1, 0u);  // substring
    EXPECT_EQ(m.matches[1].index1, 1u);  // exact
    EXPECT_EQ(m.matches[2].index1, 2u);  // index fallback
    ASSERT_EQ(m.lines.size(), 2u);
    EXPECT_EQ(m.lines[0].text,
              "Output names did not match exactly. Assuming r1 output: out:0 corresponds to "
              "output: out");
    // "ab" would fall back to result1's "a", but "a" is also an output of result0: skipped.
    m = match_outputs({"a", "ab"}, {"a"}, "r1");
    ASSERT_EQ(m.matches.size(), 1u);
    EXPECT_EQ(m.lines.at(0).severity, Severity::kVerbose);
}

TEST(OutputMatching, ConsecutivePairs) {
    const auto p = consecutive_pairs(3);
    ASSERT_EQ(p.size(), 2u);
    EXPECT_EQ(p[0], std::make_pair(size_t{0}, size_t{1}));
    EXPECT_EQ(p[1], std::make_pair(size_t{1}, size_t{2}));
    EXPECT_TRUE(consecutive_pairs(1).empty());
}

}  // namespace
}  // namespace pg::compare
