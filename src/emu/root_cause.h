// Root-cause classification of a divergence found by a layer-wise comparison against the
// emulator: starting at the first divergent node, walk its producers (nearest first) to the node
// whose evidence explains it (overflow past the format's range, underflow to zero, NaN/Inf
// produced). The divergent node is labelled with what it did to that error (inherited, or
// cancellation when it subtracts nearly equal rounded values), or with rounding/accumulation when
// no upstream evidence exists.
#pragma once

#include <string>

#include "emu/emulation.h"
#include "ir/model.h"

namespace pg::emu {

struct RootCause {
    bool found = false;           // a node with notable evidence explains the divergence
    std::string node, op;         // the root-cause node
    std::string label;            // "overflow", "underflow", "nan/inf", or "rounding/accumulation"
    std::string explanation;      // one sentence with the evidence figures
    std::string divergent_label;  // the divergent node's part: "inherited", "cancellation", "local"
};

RootCause find_root_cause(const ir::Model& m, const std::string& divergent_node,
                          const EvidenceTable& evidence);

}  // namespace pg::emu
