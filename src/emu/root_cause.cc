#include "emu/root_cause.h"

#include <algorithm>
#include <deque>

#include "base/pyformat.h"
#include "emu/precision.h"

namespace pg::emu {

namespace {

const ir::Node* node_named(const ir::Model& m, const std::string& name) {
    for (const auto& n : m.graph->nodes())
        if (n->name == name) return n.get();
    return nullptr;
}

double clipped_ratio(const NodeEvidence& e) {
    return e.inputs.values
               ? static_cast<double>(e.inputs.saturated) / static_cast<double>(e.inputs.values)
               : 0.0;
}

// Evidence that explains a divergence by itself (accumulation excluded: it is weaker).
std::string strong_label(const NodeEvidence& e) {
    if (e.inputs.overflow + e.outputs.overflow) return "overflow";
    if (e.nonfinite_produced) return "nan/inf";
    if (e.inputs.underflow + e.outputs.underflow) return "underflow";
    if (e.inputs.saturated) return "quantization clipping";
    return "";
}

// --accumulate fp16 added at least twice the error that rounding the float32-accumulated
// result to storage does.
bool accumulation_dominates(const NodeEvidence& e) {
    return e.accumulation_error > 0 && e.accumulation_error > 2 * e.accumulation_rounding;
}

std::string explain(const std::string& node, const NodeEvidence& e, const std::string& label) {
    const char* fmt_name = precision_name(e.precision);
    const std::string who = "'" + node + "' (" + e.op + ") at " + fmt_name + ": ";
    if (label == "overflow") {
        const double max_finite = format_spec(e.precision).max_finite;
        return who + "its exact values exceed " + fmt_name + "'s largest finite value " +
               py_g(max_finite, 6) + " (max |x| " +
               py_g(std::max(e.inputs.max_abs, e.outputs.max_abs), 6) + " before rounding, " +
               std::to_string(e.inputs.overflow + e.outputs.overflow) + " value(s))";
    }
    if (label == "quantization clipping")
        return who + std::to_string(e.inputs.saturated) + " of " + std::to_string(e.inputs.values) +
               " input value(s) (" + py_g(100 * clipped_ratio(e), 4) +
               "%) clipped at the calibrated range +-127*scale (max |x| " +
               py_g(e.inputs.max_abs, 6) + ")";
    if (label == "underflow")
        return who + std::to_string(e.inputs.underflow + e.outputs.underflow) +
               " nonzero value(s) rounded to zero";
    if (label == "accumulation")
        return who + "accumulating in float16 moved its outputs by up to " +
               py_g(e.accumulation_error, 5) + " (rounding the float32 sum would move them by " +
               py_g(e.accumulation_rounding, 5) + ")";
    return who + "produced " + std::to_string(e.nonfinite_produced) +
           " NaN/Inf value(s) from finite inputs";
}

// Nodes from `start` back through its producers, nearest first (breadth-first); stops when
// `visit` returns true.
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

// The nearest node from `start` whose evidence `pick` labels; false when none.
template <typename Pick>
bool nearest(const ir::Node* start, const EvidenceTable& evidence, Pick pick, RootCause& rc) {
    bool found = false;
    walk_back(start, [&](const ir::Node* n) {
        const NodeEvidence* e = evidence.find(n->name);
        const std::string label = e ? pick(*e) : "";
        if (label.empty()) return false;
        rc.node = n->name, rc.op = n->op_type, rc.label = label;
        rc.explanation = explain(n->name, *e, label);
        return found = true;
    });
    return found;
}

// A Sub/Add whose result is far smaller than its operands (with evidence), or, without evidence
// (a float32 node), any Sub/Add fed by an error.
bool cancels(const ir::Node& n, const NodeEvidence* e) {
    if (n.op_type != "Sub" && n.op_type != "Add") return false;
    return !e || e->outputs.max_abs * 8 <= e->inputs.max_abs;
}

}  // namespace

std::string evidence_label(const NodeEvidence& e) {
    const std::string s = strong_label(e);
    return !s.empty() ? s : accumulation_dominates(e) ? "accumulation" : "";
}

std::string divergence_by_evidence(const NodeEvidence& e) {
    const char* fmt_name = precision_name(e.precision);
    if (e.inputs.overflow + e.outputs.overflow) {
        const double max_finite = format_spec(e.precision).max_finite;
        return "divergent by evidence: overflow, " +
               std::to_string(e.inputs.overflow + e.outputs.overflow) + " exact value(s) beyond " +
               fmt_name + "'s largest finite value " + py_g(max_finite, 6) + " (max |x| " +
               py_g(std::max(e.inputs.max_abs, e.outputs.max_abs), 6) + ")";
    }
    if (e.nonfinite_produced)
        return "divergent by evidence: " + std::to_string(e.nonfinite_produced) +
               " NaN/Inf produced from finite inputs at " + fmt_name;
    if (e.precision == Precision::kINT8 && clipped_ratio(e) > kClippingDivergenceRatio)
        return "divergent by evidence: quantization clipping, " +
               std::to_string(e.inputs.saturated) + " of " + std::to_string(e.inputs.values) +
               " input value(s) (" + py_g(100 * clipped_ratio(e), 4) + "%) saturated";
    return "";
}

RootCause find_root_cause(const ir::Model& m, const std::string& divergent_node,
                          const EvidenceTable& evidence) {
    RootCause rc;
    const ir::Node* start = node_named(m, divergent_node);
    if (!start) return rc;
    const NodeEvidence* own = evidence.find(start->name);
    rc.found = nearest(start, evidence, strong_label, rc);
    if (!rc.found) {
        rc.node = start->name, rc.op = start->op_type;
        const auto accumulation = [](const NodeEvidence& e) {
            return accumulation_dominates(e) ? std::string("accumulation") : std::string();
        };
        rc.found = nearest(start, evidence, accumulation, rc);
        if (!rc.found) {
            rc.label = "rounding";
            rc.explanation =
                "no overflow, underflow, NaN/Inf, clipping or float16 accumulation "
                "error upstream: the error comes from rounding";
        }
    }
    rc.divergent_label = rc.node == start->name ? "local"
                         : cancels(*start, own) ? "cancellation"
                                                : "inherited";
    if (rc.label == "rounding" && own && cancels(*start, own)) rc.divergent_label = "cancellation";
    return rc;
}

std::string divergent_node_label(const ir::Model& m, const std::string& node,
                                 const EvidenceTable& evidence,
                                 const std::set<std::string>& divergent) {
    const ir::Node* start = node_named(m, node);
    if (!start) return "";
    const NodeEvidence* own = evidence.find(node);
    if (own && !strong_label(*own).empty()) return strong_label(*own);
    if (own && cancels(*start, own)) return "cancellation";
    bool upstream = false;
    walk_back(start, [&](const ir::Node* n) {
        if (n == start) return false;
        const NodeEvidence* e = evidence.find(n->name);
        upstream = divergent.count(n->name) || (e && !evidence_label(*e).empty());
        return upstream;
    });
    if (upstream) return cancels(*start, own) ? "cancellation" : "inherited";
    return own && accumulation_dominates(*own) ? "accumulation" : "rounding";
}

}  // namespace pg::emu
