// The conformance sweeps' harness (tests/support/sweep_harness.h): a crash in a phase the caller
// names is counted as that phase's kind and the test goes on with the next case in a new child;
// a crash anywhere else fails the test, naming the case.
#include <gtest/gtest.h>

#include <csignal>
#include <cstdio>

#include "support/sweep_harness.h"

namespace pg {
namespace {

constexpr uint64_t kCeiling = 64ull << 20;

// Three cases; the second one crashes (SIGABRT) after marking phase `phase`.
void three_cases(FILE* out, const char* phase) {
    test::sweep_case(out, "first", [] { return test::SweepOutcome(false, "ran"); });
    test::sweep_case(out, "second", [&]() -> test::SweepOutcome {
        test::sweep_phase(out, phase);
        std::raise(SIGABRT);
        return {false, "ran"};
    });
    test::sweep_case(out, "third", [] { return test::SweepOutcome(false, "x", "agree"); });
}

TEST(SweepHarness, CrashInANamedPhaseIsCountedAndTheTestGoesOn) {
    test::SweepTally tally;
    test::sweep_isolated(
        "t", [](FILE* out) { three_cases(out, "other"); }, kCeiling, 30, false, tally,
        {{"other", "other-crashed"}});
    EXPECT_TRUE(tally.failures.empty());
    EXPECT_EQ(tally.tests, 1);
    EXPECT_EQ(tally.cases, 3);
    EXPECT_EQ(tally.ran, 1);
    EXPECT_EQ(tally.kinds["other-crashed"], 1);
    EXPECT_EQ(tally.kinds["agree"], 1);  // the third case ran once, in the second child
}

TEST(SweepHarness, CrashElsewhereFailsTheTestNamingTheCase) {
    test::SweepTally tally;
    test::sweep_isolated(
        "t", [](FILE* out) { three_cases(out, "mine"); }, kCeiling, 30, false, tally,
        {{"other", "other-crashed"}});
    ASSERT_EQ(tally.failures.size(), 1u);
    EXPECT_NE(tally.failures[0].find("signal 6"), std::string::npos) << tally.failures[0];
    EXPECT_NE(tally.failures[0].find("while running: second"), std::string::npos);
    EXPECT_EQ(tally.cases, 1);  // the third case never ran
}

}  // namespace
}  // namespace pg
