// Search algorithms of `debug precision`: which nodes must run in float32 for a check to pass.
// Each takes the candidate nodes (names) and a check that says whether a given float32 set
// passes; none knows about models, so they are unit-tested with synthetic checks. All assume
// the check is monotonic (more float32 nodes never turn a pass into a failure). To add a mode:
// write a function with the same shape here and a branch in tool_debug.cc.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace pg::debug {

using NodeSet = std::set<std::string>;
// True when the model passes with exactly `fp32_nodes` forced to float32.
using CheckFn = std::function<bool(const NodeSet& fp32_nodes)>;

enum class Direction { kForward, kReverse };
// "forward" / "reverse". Throws kUsage.
Direction parse_direction(const std::string& s);

struct SearchResult {
    bool passed = false;                  // a passing float32 set was found
    std::vector<std::string> fp32_nodes;  // the set found, in candidate order
    size_t evaluations = 0;               // distinct sets checked
};

// Where a search stands after an evaluation: the answer lies between the best known passing
// size (good) and the best known failing size (bad). bisect / linear: span lengths k. minimize,
// phase "greedy": prefix lengths of the ranking; phase "minimize": the size of the current
// passing set (good) and the number of its nodes proven necessary (bad).
struct SearchProgress {
    static constexpr size_t kUnknown = static_cast<size_t>(-1);
    const char* phase = "";
    size_t good = kUnknown, bad = kUnknown;
    size_t evaluations = 0;  // distinct sets checked so far
};
// Called after every new evaluation.
using ProgressFn = std::function<void(const SearchProgress&)>;

// A check that remembers verdicts (a set is evaluated once), counts evaluations and reports
// progress after each new one.
class CountingCheck {
  public:
    explicit CountingCheck(CheckFn check, ProgressFn progress = {})
        : check_(std::move(check)), progress_(std::move(progress)) {}
    bool operator()(const NodeSet& s);
    size_t evaluations() const { return cache_.size(); }
    // The interval the next report() carries.
    void set_interval(const char* phase, size_t good, size_t bad);
    // Reports progress when an evaluation happened since the last report.
    void report();

  private:
    CheckFn check_;
    ProgressFn progress_;
    SearchProgress state_;
    size_t reported_ = 0;
    std::map<NodeSet, bool> cache_;
};

// Greedy by rank, then 1-minimal: the shortest prefix of `ranked` (most suspicious first) that
// passes, found by galloping and binary search; then every node but the last of that prefix is
// tried for removal (halves first, then single nodes, latest-ranked first) and dropped when the
// check still passes. Checks the empty set first. O(log n + k log k) evaluations for a result of
// k nodes.
SearchResult minimize(const std::vector<std::string>& ranked, const CheckFn& check,
                      const ProgressFn& progress = {});

// Polygraphy's BisectMarker over the first (forward) or last (reverse) k of `topo` (§7.5):
// k = L first; on a pass good = k (round down), on a failure bad = k (round up); stops when k
// repeats or |good - bad| <= 1. The answer is the first/last `good` nodes.
// SPEC-DEVIATION: Polygraphy reports failure whenever good >= L, even when all L nodes in
// float32 passed; we report that all-float32 set as the (passing) answer. Like Polygraphy,
// k = 0 is never checked.
SearchResult bisect(const std::vector<std::string>& topo, Direction dir, const CheckFn& check,
                    const ProgressFn& progress = {});

// Polygraphy's LinearMarker: k = 0, 1, ... L; the first passing k is the answer.
SearchResult linear(const std::vector<std::string>& topo, Direction dir, const CheckFn& check,
                    const ProgressFn& progress = {});

// The first (forward) or last (reverse) `k` names of `topo`.
std::vector<std::string> select_span(const std::vector<std::string>& topo, Direction dir, size_t k);

}  // namespace pg::debug
