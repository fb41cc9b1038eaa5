// The search of `debug reduce` (polygraphy-spec.md §7.6): which node's outputs (phase 1) and
// which node's inputs (phase 2) cut the model down to the smallest subgraph that still fails.
// Model-free: a phase sees only node indices and a trial callback that builds and checks the
// candidate cut at an index, so the markers are unit-tested with synthetic checks. Both markers
// keep Polygraphy's bookkeeping (best_bad = the failing trial with the fewest nodes, the later
// one on ties; best_good = the pass closest in size below it). To add a mode: a marker function
// in reduce.cc and a branch in reduce_phase.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

namespace pg::debug {

enum class ReduceMode { kBisect, kLinear };
// "bisect" / "linear". Throws kUsage.
ReduceMode parse_reduce_mode(const std::string& s);

// Phase 1 cuts the graph outputs to a node's outputs and looks for the earliest failing one;
// phase 2 cuts the graph inputs to a node's inputs and looks for the latest failing one.
enum class ReducePhase { kOutputs, kInputs };
// "outputs" / "inputs" (the replay key suffix).
const char* phase_name(ReducePhase p);

// What one trial found.
struct Trial {
    bool passed = true;
    size_t num_nodes = 0;  // nodes of the candidate
    bool skipped = false;  // no candidate could be built (counts as a pass, never as best_good)
};
// Builds and checks the candidate cut at position `index` of the phase's cut points (the nodes
// of the graph that can be cut, in graph order).
using TrialFn = std::function<Trial(size_t index)>;

struct PhaseResult {
    std::optional<size_t> best_bad;   // index of the failing trial with the fewest nodes
    size_t best_bad_nodes = 0;        // its node count (the whole graph's when none failed)
    std::optional<size_t> best_good;  // index of the pass closest in size below best_bad
    size_t best_good_nodes = 0;
    size_t trials = 0;  // trials run in this phase
};

// Runs one phase over `n` cut points of a graph of `whole_nodes` nodes, which is known to fail.
// Bisect assumes monotonic failures (phase 1: a failing cut at i fails at every later i; phase
// 2: at every earlier i) and takes O(log n) trials. SPEC-DEVIATION: the interval starts one
// beyond both ends ([-1, n]), so node 0 (phase 1) and node n-1 (phase 2) can be the answer;
// Polygraphy's [0, n] never tries index 0 of phase 1. Linear tries every node once (n trials),
// phase 1 from n-1 down, phase 2 from 0 up, as Polygraphy. Logs "Iteration k | nodes n |
// interval [good, bad]" after each trial.
PhaseResult reduce_phase(ReducePhase phase, size_t n, size_t whole_nodes, ReduceMode mode,
                         const TrialFn& trial);

}  // namespace pg::debug
