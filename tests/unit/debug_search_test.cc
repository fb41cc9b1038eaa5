// The search algorithms of `debug precision` against synthetic checks (no models).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "debug/search.h"

namespace pg::debug {
namespace {

std::vector<std::string> names(size_t n) {
    std::vector<std::string> v;
    for (size_t i = 0; i < n; ++i) v.push_back("n" + std::to_string(i));
    return v;
}

// Passes iff every node of `needed` is in the float32 set.
CheckFn needs(std::set<std::string> needed, size_t* calls = nullptr) {
    return [needed, calls](const NodeSet& s) {
        if (calls) ++*calls;
        return std::includes(s.begin(), s.end(), needed.begin(), needed.end());
    };
}

TEST(DebugSearch, MinimizeFindsThePlantedSet) {
    size_t calls = 0;
    auto r = minimize(names(200), needs({"n3", "n17"}, &calls));
    EXPECT_TRUE(r.passed);
    EXPECT_EQ(r.fp32_nodes, (std::vector<std::string>{"n3", "n17"}));
    EXPECT_EQ(r.evaluations, calls);  // each distinct set once
    EXPECT_LE(r.evaluations, 30u);
}

TEST(DebugSearch, MinimizeFindsThePlantedSetWhateverTheRanking) {
    auto ranked = names(200);
    std::shuffle(ranked.begin(), ranked.end(), std::mt19937(7));
    auto r = minimize(ranked, needs({"n3", "n17", "n150"}));
    EXPECT_TRUE(r.passed);
    EXPECT_EQ(NodeSet(r.fp32_nodes.begin(), r.fp32_nodes.end()), (NodeSet{"n3", "n17", "n150"}));
    EXPECT_LE(r.evaluations, 60u);
}

TEST(DebugSearch, MinimizeEmptyWhenNothingIsNeeded) {
    auto r = minimize(names(10), needs({}));
    EXPECT_TRUE(r.passed);
    EXPECT_TRUE(r.fp32_nodes.empty());
    EXPECT_EQ(r.evaluations, 1u);
}

TEST(DebugSearch, MinimizeFailsWhenEvenAllFloat32Fails) {
    auto r = minimize(names(50), [](const NodeSet&) { return false; });
    EXPECT_FALSE(r.passed);
    EXPECT_TRUE(r.fp32_nodes.empty());
    EXPECT_LE(r.evaluations, 8u);  // empty, 1, 2, 4, ..., 32, 50
}

TEST(DebugSearch, BisectForwardFindsSmallestPrefix) {
    // Needs n12: the smallest passing prefix is 13 nodes.
    auto r = bisect(names(100), Direction::kForward, needs({"n12"}));
    EXPECT_TRUE(r.passed);
    EXPECT_EQ(r.fp32_nodes.size(), 13u);
    EXPECT_EQ(r.fp32_nodes.back(), "n12");
    EXPECT_LE(r.evaluations, 9u);  // ~ log2(100) + 1
}

TEST(DebugSearch, BisectReverseFindsSmallestSuffix) {
    auto r = bisect(names(100), Direction::kReverse, needs({"n90"}));
    EXPECT_TRUE(r.passed);
    EXPECT_EQ(r.fp32_nodes.size(), 10u);
    EXPECT_EQ(r.fp32_nodes.front(), "n90");
}

TEST(DebugSearch, BisectAllNodesWhenOnlyAllPass) {
    auto r = bisect(names(8), Direction::kForward, needs({"n7"}));
    EXPECT_TRUE(r.passed);
    EXPECT_EQ(r.fp32_nodes.size(), 8u);
}

TEST(DebugSearch, BisectFailsWhenAllFloat32Fails) {
    auto r = bisect(names(8), Direction::kForward, [](const NodeSet&) { return false; });
    EXPECT_FALSE(r.passed);
    EXPECT_EQ(r.evaluations, 1u);  // k = L fails: good - bad = 1
}

TEST(DebugSearch, LinearStopsAtFirstPass) {
    auto r = linear(names(20), Direction::kForward, needs({"n4"}));
    EXPECT_TRUE(r.passed);
    EXPECT_EQ(r.fp32_nodes.size(), 5u);
    EXPECT_EQ(r.evaluations, 6u);  // k = 0..5
    auto rr = linear(names(20), Direction::kReverse, needs({"n18"}));
    EXPECT_EQ(rr.fp32_nodes, (std::vector<std::string>{"n18", "n19"}));
    EXPECT_EQ(rr.evaluations, 3u);
}

TEST(DebugSearch, LinearFailsAfterAllNodes) {
    auto r = linear(names(5), Direction::kForward, [](const NodeSet&) { return false; });
    EXPECT_FALSE(r.passed);
    EXPECT_EQ(r.evaluations, 6u);
}

// Every new evaluation is reported once, and the last report brackets the answer.
TEST(DebugSearch, ProgressReportsEveryEvaluationAndTheFinalInterval) {
    std::vector<SearchProgress> seen;
    auto keep = [&seen](const SearchProgress& p) { seen.push_back(p); };
    auto b = bisect(names(64), Direction::kForward, needs({"n20"}), keep);
    ASSERT_EQ(seen.size(), b.evaluations);
    for (size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i].evaluations, i + 1);
    EXPECT_STREQ(seen.back().phase, "bisect");
    EXPECT_EQ(seen.back().good, 21u);
    EXPECT_EQ(seen.back().bad, 20u);

    seen.clear();
    auto l = linear(names(10), Direction::kForward, needs({"n2"}), keep);
    ASSERT_EQ(seen.size(), l.evaluations);
    EXPECT_EQ(seen.front().good, SearchProgress::kUnknown);
    EXPECT_EQ(seen.front().bad, 0u);
    EXPECT_EQ(seen.back().good, 3u);
    EXPECT_EQ(seen.back().bad, 2u);

    seen.clear();
    auto m = minimize(names(100), needs({"n3", "n50"}), keep);
    ASSERT_EQ(seen.size(), m.evaluations);
    EXPECT_STREQ(seen.front().phase, "greedy");
    EXPECT_EQ(seen.front().bad, 0u);  // the empty set failed
    EXPECT_STREQ(seen.back().phase, "minimize");
    EXPECT_EQ(seen.back().good, 2u);  // the answer's size, both nodes proven necessary
    EXPECT_EQ(seen.back().bad, 2u);
}

}  // namespace
}  // namespace pg::debug
