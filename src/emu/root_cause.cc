#include "emu/root_cause.h"

#include <deque>
#include <set>

#include "base/pyformat.h"
#include "emu/precision.h"

namespace pg::emu {

namespace {

const ir::Node* node_named(const ir::Model& m, const std::string& name) {
    for (const auto& n : m.graph->nodes())
        if (n->name == name) return n.get();
    return nullptr;
}

std::string label_of(const NodeEvidence& e) {
    if (e.inputs.overflow + e.outputs.overflow) return "overflow";
    if (e.nonfinite_produced) return "nan/inf";
    if (e.inputs.underflow + e.outputs.underflow) return "underflow";
    if (e.inputs.saturated) return "saturation";
    return "";
}

std::string explain(const std::string& node, const NodeEvidence& e, const std::string& label) {
    const char* fmt_name = precision_name(e.precision);
    if (label == "overflow") {
        const double max_finite = format_spec(e.precision).max_finite;
        return "'" + node + "' (" + e.op + ") at " + fmt_name + ": its exact values exceed " +
               fmt_name + "'s largest finite value " + py_g(max_finite, 6) + " (max |x| " +
               py_g(std::max(e.inputs.max_abs, e.outputs.max_abs), 6) + " before rounding, " +
               std::to_string(e.inputs.overflow + e.outputs.overflow) + " value(s))";
    }
    if (label == "saturation")
        return "'" + node + "' (" + e.op + ") at int8: " + std::to_string(e.inputs.saturated) +
               " input value(s) clipped at the calibrated range +-127*scale (max |x| " +
               py_g(e.inputs.max_abs, 6) + ")";
    if (label == "underflow")
        return "'" + node + "' (" + e.op + ") at " + fmt_name + ": " +
               std::to_string(e.inputs.underflow + e.outputs.underflow) +
               " nonzero value(s) rounded to zero";
    return "'" + node + "' (" + e.op + ") at " + fmt_name + ": produced " +
           std::to_string(e.nonfinite_produced) + " NaN/Inf value(s) from finite inputs";
}

// Producers of `n`'s inputs, nearest first (breadth-first over the graph).
template <typename Visit>
void walk_back(const ir::Node* start, Visit visit) {
    std::deque<const ir::Node*> queue{start};
    std::set<const ir::Node*> seen{start};
    while (!queue.empty()) {
        const ir::Node* n = queue.front();
        queue.pop_front();
        if (visit(n)) return;
        for (const ir::Value* v : n->inputs())
            if (v && v->producer() && seen.insert(v->producer()).second)
                queue.push_back(v->producer());
    }
}

}  // namespace

RootCause find_root_cause(const ir::Model& m, const std::string& divergent_node,
                          const EvidenceTable& evidence) {
    RootCause rc;
    const ir::Node* start = node_named(m, divergent_node);
    if (!start) return rc;
    walk_back(start, [&](const ir::Node* n) {
        const NodeEvidence* e = evidence.find(n->name);
        if (!e || label_of(*e).empty()) return false;
        rc = RootCause{true, n->name, n->op_type, label_of(*e), explain(n->name, *e, label_of(*e)),
                       ""};
        return true;
    });
    if (!rc.found) {
        rc.node = start->name, rc.op = start->op_type, rc.label = "rounding/accumulation";
        rc.explanation =
            "no overflow, underflow or NaN/Inf upstream: the error comes from rounding and "
            "accumulation";
        rc.divergent_label = "local";
        return rc;
    }
    const bool subtracts = start->op_type == "Sub" || start->op_type == "Add";
    rc.divergent_label = rc.node == start->name ? "local"
                         : subtracts            ? "cancellation"
                                                : "inherited";
    return rc;
}

}  // namespace pg::emu
