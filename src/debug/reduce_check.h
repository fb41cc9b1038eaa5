// The in-process check of `debug reduce`: a candidate subgraph on the precision emulator (its
// inputs fed, sample by sample, from the reference run of the original model) against the
// reference values of its outputs, under the `run` comparator options. The reference side is
// not re-run: the candidate's float32 outputs are the stored reference tensors (the interpreter
// is deterministic). To check something else in process: another class with the same call.
#pragma once

#include "compare/compare_options.h"
#include "debug/subgraph.h"
#include "emu/emu_runner.h"

namespace pg::debug {

class SubgraphCheck {
  public:
    // `ref` must outlive the check.
    SubgraphCheck(const ReferenceValues& ref, emu::EmuRunnerOptions emu,
                  compare::CompareOptions compare);
    // True when every output of every sample matches. An error while planning or running the
    // candidate is logged and counts as a failure (as a crashing external check would), unless
    // `rethrow` (the original model: an error there is the user's, with its own exit status).
    bool operator()(const ir::Model& candidate, bool rethrow = false) const;

  private:
    bool compare_all(const ir::Model& candidate) const;
    const ReferenceValues& ref_;
    emu::EmuRunnerOptions emu_;
    compare::CompareOptions compare_;
};

}  // namespace pg::debug
