// Root-cause classification of the divergences found by a layer-wise comparison against the
// emulator. Labels (the words): "overflow" (exact values beyond the format's largest
// finite value), "underflow" (nonzero values rounded to zero), "nan/inf" (NaN/Inf produced from
// finite inputs), "quantization clipping" (INT8 values clipped at the calibrated range),
// "cancellation" (a Sub/Add whose result is much smaller than its rounded operands),
// "accumulation" (--accumulate fp16 summed a reduction with more error than the storage
// rounding), "inherited" (the error arrives from a divergent or evidence-bearing producer) and
// "rounding" (nothing else explains it). A node whose evidence shows overflow, NaN/Inf or INT8
// clipping above kClippingDivergenceRatio is divergent even when its output passes the
// tolerance (divergence_by_evidence). To add a label: extend evidence_label() (own evidence) or
// divergent_node_label() (relation to the producers) and document it here.
#pragma once

#include <set>
#include <string>

#include "emu/emulation.h"
#include "ir/model.h"

namespace pg::emu {

// INT8 nodes whose inputs saturated in more than this fraction of values are divergent.
inline constexpr double kClippingDivergenceRatio = 0.01;

struct RootCause {
    bool found = false;           // a node with notable evidence explains the divergence
    std::string node, op;         // the root-cause node
    std::string label;            // "overflow", "underflow", "nan/inf", "quantization clipping",
                                  // or (found == false) "accumulation" / "rounding"
    std::string explanation;      // one sentence with the evidence figures
    std::string divergent_label;  // the divergent node's part: "inherited", "cancellation", "local"
};

// The root cause of divergent node `divergent_node`: the nearest producer (or the node itself)
// whose evidence explains it.
RootCause find_root_cause(const ir::Model& m, const std::string& divergent_node,
                          const EvidenceTable& evidence);

// The label of `e`'s own evidence: "overflow", "nan/inf", "underflow", "quantization clipping"
// (any saturated INT8 input), "accumulation", or "" when it shows nothing.
std::string evidence_label(const NodeEvidence& e);

// Why `e` makes its node divergent whatever the tolerance ("divergent by evidence: overflow, ..."),
// or "" when it does not: overflow, NaN/Inf produced, INT8 clipping above
// kClippingDivergenceRatio of the input values.
std::string divergence_by_evidence(const NodeEvidence& e);

// The root-cause label of divergent node `node` given every divergent node's name: its own
// evidence's label, else "cancellation", "inherited" (a producer upstream is divergent or has
// evidence), "accumulation" or "rounding".
std::string divergent_node_label(const ir::Model& m, const std::string& node,
                                 const EvidenceTable& evidence,
                                 const std::set<std::string>& divergent);

}  // namespace pg::emu
