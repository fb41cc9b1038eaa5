// The markers of `debug reduce` (debug/reduce.h) on synthetic checks: bisect and linear over
// both phases, best_bad / best_good bookkeeping, skipped trials, and the mode parser.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "base/error.h"
#include "debug/reduce.h"

namespace pg {
namespace {

using debug::ReduceMode;
using debug::ReducePhase;
using debug::Trial;

// Phase 1 on a chain of n nodes: the cut at i keeps i + 1 nodes and fails from `first_bad` on.
struct OutputsChain {
    size_t n, first_bad;
    std::vector<size_t> tried;
    Trial operator()(size_t i) {
        tried.push_back(i);
        return Trial{i < first_bad, i + 1, false};
    }
};

// Phase 2 on a chain of n nodes: the cut at i keeps n - i nodes and fails up to `last_bad`.
struct InputsChain {
    size_t n, last_bad;
    std::vector<size_t> tried;
    Trial operator()(size_t i) {
        tried.push_back(i);
        return Trial{i > last_bad, n - i, false};
    }
};

TEST(DebugReduceMarkers, BisectOutputsFindsTheEarliestFailingNode) {
    for (size_t first_bad = 0; first_bad < 12; ++first_bad) {
        OutputsChain c{12, first_bad, {}};
        auto r = debug::reduce_phase(ReducePhase::kOutputs, 12, 12, ReduceMode::kBisect,
                                     [&](size_t i) { return c(i); });
        ASSERT_TRUE(r.best_bad) << first_bad;
        EXPECT_EQ(*r.best_bad, first_bad);
        EXPECT_EQ(r.best_bad_nodes, first_bad + 1);
        EXPECT_LE(r.trials, 4u);  // ceil(log2(13))
        EXPECT_EQ(r.trials, c.tried.size());
        // The pass just below the answer is the closest good model (none when node 0 fails).
        if (first_bad == 0) {
            EXPECT_FALSE(r.best_good);
        } else {
            ASSERT_TRUE(r.best_good);
            EXPECT_EQ(*r.best_good, first_bad - 1);
        }
    }
}

TEST(DebugReduceMarkers, BisectOutputsWithoutFailureKeepsTheModel) {
    OutputsChain c{8, 100, {}};
    auto r = debug::reduce_phase(ReducePhase::kOutputs, 8, 8, ReduceMode::kBisect,
                                 [&](size_t i) { return c(i); });
    EXPECT_FALSE(r.best_bad);
    EXPECT_EQ(r.best_bad_nodes, 8u);
    ASSERT_TRUE(r.best_good);
    EXPECT_EQ(*r.best_good, 6u);  // the largest pass below the whole graph (8 nodes)
}

TEST(DebugReduceMarkers, BisectInputsFindsTheLatestFailingNode) {
    for (size_t last_bad = 0; last_bad < 9; ++last_bad) {
        InputsChain c{9, last_bad, {}};
        auto r = debug::reduce_phase(ReducePhase::kInputs, 9, 9, ReduceMode::kBisect,
                                     [&](size_t i) { return c(i); });
        ASSERT_TRUE(r.best_bad) << last_bad;
        EXPECT_EQ(*r.best_bad, last_bad);
        EXPECT_EQ(r.best_bad_nodes, 9 - last_bad);
        EXPECT_LE(r.trials, 4u);
        if (last_bad + 1 < 9) {
            ASSERT_TRUE(r.best_good);
            EXPECT_EQ(*r.best_good, last_bad + 1);
        }
    }
}

TEST(DebugReduceMarkers, LinearTriesEveryNodeInPolygraphyOrder) {
    OutputsChain out{6, 2, {}};
    auto r1 = debug::reduce_phase(ReducePhase::kOutputs, 6, 6, ReduceMode::kLinear,
                                  [&](size_t i) { return out(i); });
    EXPECT_EQ(out.tried, (std::vector<size_t>{5, 4, 3, 2, 1, 0}));
    EXPECT_EQ(*r1.best_bad, 2u);
    EXPECT_EQ(*r1.best_good, 1u);
    InputsChain in{6, 3, {}};
    auto r2 = debug::reduce_phase(ReducePhase::kInputs, 6, 6, ReduceMode::kLinear,
                                  [&](size_t i) { return in(i); });
    EXPECT_EQ(in.tried, (std::vector<size_t>{0, 1, 2, 3, 4, 5}));
    EXPECT_EQ(*r2.best_bad, 3u);
    EXPECT_EQ(*r2.best_good, 4u);
    EXPECT_EQ(r2.trials, 6u);
}

TEST(DebugReduceMarkers, LinearFindsTheSmallestFailureWhenFailuresDoNotPropagate) {
    // Only the cuts at 2 and 7 fail: bisect's monotonic assumption does not hold.
    const std::set<size_t> bad = {2, 7};
    auto fn = [&](size_t i) { return Trial{!bad.count(i), i + 1, false}; };
    auto r = debug::reduce_phase(ReducePhase::kOutputs, 10, 10, ReduceMode::kLinear, fn);
    EXPECT_EQ(*r.best_bad, 2u);
}

TEST(DebugReduceMarkers, TiesGoToTheLaterTrialAndSkippedTrialsAreNeverGood) {
    // Every cut keeps 5 nodes; 8 and 3 fail. Linear phase 1 tries 9, 8, ..., 0: 3 is later.
    auto fn = [](size_t i) { return Trial{i != 3 && i != 8, 5, false}; };
    auto r = debug::reduce_phase(ReducePhase::kOutputs, 10, 10, ReduceMode::kLinear, fn);
    EXPECT_EQ(*r.best_bad, 3u);
    // No pass below 5 nodes: the smallest pass at or above it.
    EXPECT_EQ(r.best_good_nodes, 5u);
    // Skipped trials pass (the search moves on) but are never the good model.
    auto skip = [](size_t i) { return Trial{true, i + 1, i != 9}; };
    auto s = debug::reduce_phase(ReducePhase::kOutputs, 10, 10, ReduceMode::kLinear, skip);
    EXPECT_FALSE(s.best_bad);
    ASSERT_TRUE(s.best_good);
    EXPECT_EQ(*s.best_good, 9u);
}

TEST(DebugReduceMarkers, BestGoodIsTheLargestPassBelowTheBadCount) {
    // Node counts are not monotonic in the index: pick by count, not by position.
    const std::vector<size_t> nodes = {9, 2, 6, 4, 3};
    auto fn = [&](size_t i) { return Trial{i != 4, nodes[i], false}; };
    auto r = debug::reduce_phase(ReducePhase::kInputs, 5, 10, ReduceMode::kLinear, fn);
    EXPECT_EQ(*r.best_bad, 4u);
    EXPECT_EQ(r.best_bad_nodes, 3u);
    EXPECT_EQ(*r.best_good, 1u);  // 2 nodes < 3
}

TEST(DebugReduceMarkers, ParseMode) {
    EXPECT_EQ(debug::parse_reduce_mode("bisect"), ReduceMode::kBisect);
    EXPECT_EQ(debug::parse_reduce_mode("linear"), ReduceMode::kLinear);
    try {
        debug::parse_reduce_mode("fast");
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    }
    EXPECT_STREQ(debug::phase_name(ReducePhase::kOutputs), "outputs");
    EXPECT_STREQ(debug::phase_name(ReducePhase::kInputs), "inputs");
}

}  // namespace
}  // namespace pg
