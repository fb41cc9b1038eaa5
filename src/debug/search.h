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

// A check that remembers verdicts (a set is evaluated once) and counts evaluations.
class CountingCheck {
  public:
    explicit CountingCheck(CheckFn check) : check_(std::move(check)) {}
    bool operator()(const NodeSet& s);
    size_t evaluations() const { return cache_.size(); }

  private:
    CheckFn check_;
    std::map<NodeSet, bool> cache_;
};

// Greedy by rank, then 1-minimal: the shortest prefix of `ranked` (most suspicious first) that
// passes, found by galloping and binary search; then every node but the last of that prefix is
// tried for removal (halves first, then single nodes, latest-ranked first) and dropped when the
// check still passes. Checks the empty set first. O(log n + k log k) evaluations for a result of
// k nodes.
SearchResult minimize(const std::vector<std::string>& ranked, const CheckFn& check);

// Polygraphy's BisectMarker over the first (forward) or last (reverse) k of `topo` (§7.5):
// k = L first; on a pass good = k (round down), on a failure bad = k (round up); stops when k
// repeats or |good - bad| <= 1. The answer is the first/last `good` nodes.
// SPEC-DEVIATION: Polygraphy reports failure whenever good >= L, even when all L nodes in
// float32 passed; we report that all-float32 set as the (passing) answer. Like Polygraphy,
// k = 0 is never checked.
SearchResult bisect(const std::vector<std::string>& topo, Direction dir, const CheckFn& check);

// Polygraphy's LinearMarker: k = 0, 1, ... L; the first passing k is the answer.
SearchResult linear(const std::vector<std::string>& topo, Direction dir, const CheckFn& check);

// The first (forward) or last (reverse) `k` names of `topo`.
std::vector<std::string> select_span(const std::vector<std::string>& topo, Direction dir, size_t k);

}  // namespace pg::debug
