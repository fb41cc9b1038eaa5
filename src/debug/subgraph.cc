#include "debug/subgraph.h"

#include <algorithm>
#include <set>

#include "base/error.h"
#include "base/log.h"
#include "ir/clone.h"
#include "ir/graph.h"
#include "passes/cleanup.h"
#include "runners/ref_runner.h"

namespace pg::debug {

namespace {

using ValueList = std::vector<ir::Value*>;

bool contains(const ValueList& v, const ir::Value* x) {
    return std::find(v.begin(), v.end(), x) != v.end();
}

// Values of `g` read by nodes of `sub` or of its nested subgraphs.
void outer_reads(const ir::Graph& g, const ir::Graph& sub, ValueList& out) {
    for (const auto& n : sub.nodes()) {
        for (ir::Value* in : n->inputs())
            if (in && in->graph() == &g && !contains(out, in)) out.push_back(in);
        for (ir::Graph* inner : n->subgraphs()) outer_reads(g, *inner, out);
    }
}

// What a node of `g` reads: its inputs (omitted ones skipped) and its subgraphs' outer reads.
ValueList effective_inputs(const ir::Graph& g, const ir::Node& n) {
    ValueList out;
    for (ir::Value* in : n.inputs())
        if (in && !contains(out, in)) out.push_back(in);
    for (ir::Graph* sub : n.subgraphs()) outer_reads(g, *sub, out);
    return out;
}

// Values read by nodes of g that nothing defines there.
ValueList unbound(const ir::Graph& g) {
    ValueList out;
    for (const auto& n : g.nodes())
        for (ir::Value* v : effective_inputs(g, *n))
            if (v->graph() == &g && !v->producer() && !v->is_initializer() &&
                !contains(g.inputs(), v) && !contains(out, v))
                out.push_back(v);
    return out;
}

// The spec of a new graph input or output: the model's own type for a value that is already a
// graph input, else the reference values' dtype and shape.
passes::TensorSpec spec_for(const ir::Graph& g, const ir::Value* v, const ReferenceValues& ref) {
    if (contains(g.inputs(), v)) return passes::TensorSpec{v->name(), {}, {}};
    auto s = ref.spec(v->name());
    if (!s)
        throw Error(ErrorKind::kUnsupported,
                    "tensor '" + v->name() + "' has no reference value (not a tensor?)");
    return *s;
}

// Extracts g between `inputs` (empty = keep) and `outputs`, then makes every value left without
// a producer an input too (up to a fixpoint) and drops unused inputs.
void make_cut(ir::Graph& g, ValueList inputs, const ValueList& outputs,
              const ReferenceValues& ref) {
    for (int round = 0;; ++round) {
        passes::ExtractOptions o;
        o.allow_missing_types = true;
        for (const ir::Value* v : inputs) o.inputs.push_back(spec_for(g, v, ref));
        for (const ir::Value* v : outputs) o.outputs.push_back(spec_for(g, v, ref));
        passes::extract(g, o);
        const ValueList missing = unbound(g);
        if (missing.empty()) break;
        if (inputs.empty()) inputs = g.inputs();
        if (round > 64) throw Error(ErrorKind::kInternal, "debug reduce: the cut does not close");
        inputs.insert(inputs.end(), missing.begin(), missing.end());
    }
    passes::CleanupOptions c;
    c.remove_unused_graph_inputs = true;
    passes::cleanup(g, c);
}

ir::Node* node_at(const ir::Graph& g, size_t index) {
    if (index >= g.nodes().size())
        throw Error(ErrorKind::kInternal,
                    "debug reduce: node index " + std::to_string(index) + " out of range");
    return g.nodes()[index].get();
}

// Every value reachable forward from `cut` through nodes of g (reads through subgraphs count).
std::set<const ir::Value*> downstream(const ir::Graph& g, const ValueList& cut,
                                      std::vector<const ir::Node*>& tainted_nodes) {
    std::set<const ir::Value*> t(cut.begin(), cut.end());
    for (const auto& n : g.nodes()) {
        const ValueList in = effective_inputs(g, *n);
        if (std::none_of(in.begin(), in.end(), [&](const ir::Value* v) { return t.count(v); }))
            continue;
        tainted_nodes.push_back(n.get());
        for (ir::Value* o : n->outputs())
            if (o) t.insert(o);
    }
    return t;
}

// Nodes of g that `outs` depend on (walking producers back through effective inputs).
std::set<const ir::Node*> ancestors(const ir::Graph& g, const ValueList& outs) {
    std::set<const ir::Node*> live;
    ValueList work = outs;
    while (!work.empty()) {
        ir::Value* v = work.back();
        work.pop_back();
        ir::Node* p = v->producer();
        if (!p || p->graph() != &g || !live.insert(p).second) continue;
        for (ir::Value* in : effective_inputs(g, *p)) work.push_back(in);
    }
    return live;
}

}  // namespace

std::set<const ir::Value*> constant_values(const ir::Graph& g) {
    std::set<const ir::Value*> out;
    for (const auto& v : g.values())
        if (v->is_initializer()) out.insert(v.get());
    for (const auto& n : g.nodes()) {
        if (!n->subgraphs().empty() || n->op_type.rfind("Random", 0) == 0 ||
            n->op_type == "Multinomial" || n->op_type == "Bernoulli")
            continue;
        const ValueList in = effective_inputs(g, *n);
        if (!std::all_of(in.begin(), in.end(), [&](const ir::Value* v) { return out.count(v); }))
            continue;
        for (const ir::Value* o : n->outputs())
            if (o) out.insert(o);
    }
    return out;
}

std::vector<size_t> output_cut_points(const ir::Model& m, const ReferenceValues& ref) {
    const ir::Graph& g = *m.graph;
    const auto constants = constant_values(g);
    std::vector<size_t> out;
    for (size_t i = 0; i < g.nodes().size(); ++i)
        for (const ir::Value* v : g.nodes()[i]->outputs())
            if (v && !constants.count(v) && ref.spec(v->name())) {
                out.push_back(i);
                break;
            }
    return out;
}

std::vector<size_t> input_cut_points(const ir::Model& m) {
    const ir::Graph& g = *m.graph;
    const auto constants = constant_values(g);
    std::vector<size_t> out;
    for (size_t i = 0; i < g.nodes().size(); ++i) {
        const ValueList in = effective_inputs(g, *g.nodes()[i]);
        if (std::any_of(in.begin(), in.end(), [&](const ir::Value* v) {
                return v->graph() == &g && !constants.count(v);
            }))
            out.push_back(i);
    }
    return out;
}

std::unique_ptr<ir::Model> cut_outputs(const ir::Model& model, size_t node_index,
                                       const ReferenceValues& ref) {
    auto m = ir::clone_model(model);
    ir::Graph& g = *m->graph;
    ValueList outs;
    for (ir::Value* v : node_at(g, node_index)->outputs())
        if (v && ref.spec(v->name())) outs.push_back(v);
    if (outs.empty())
        throw Error(ErrorKind::kUnsupported, "no output of node '" + node_at(g, node_index)->name +
                                                 "' has a reference value");
    make_cut(g, {}, outs, ref);
    return m;
}

std::unique_ptr<ir::Model> cut_inputs(const ir::Model& model, size_t node_index,
                                      const ReferenceValues& ref) {
    auto m = ir::clone_model(model);
    ir::Graph& g = *m->graph;
    const ir::Node* n = node_at(g, node_index);
    const auto constants = constant_values(g);
    ValueList cut;
    for (ir::Value* v : effective_inputs(g, *n))
        if (v->graph() == &g && !constants.count(v)) cut.push_back(v);
    if (cut.empty())
        throw Error(ErrorKind::kUnsupported, "node '" + n->name + "' reads no non-constant tensor");
    std::vector<const ir::Node*> kept;
    const auto reach = downstream(g, cut, kept);
    ValueList outs;
    for (ir::Value* o : g.outputs())
        if (reach.count(o) && !contains(cut, o) && !contains(outs, o)) outs.push_back(o);
    if (outs.empty())
        throw Error(ErrorKind::kUnsupported,
                    "no graph output depends on the inputs of node '" + n->name + "'");
    // Side branches: what the kept nodes read that the cut does not reach.
    const auto live = ancestors(g, outs);
    ValueList inputs = cut;
    for (const ir::Node* k : kept) {
        if (!live.count(k)) continue;
        for (ir::Value* v : effective_inputs(g, *k))
            if (v->graph() == &g && !reach.count(v) && !constants.count(v) && !contains(inputs, v))
                inputs.push_back(v);
    }
    make_cut(g, inputs, outs, ref);
    return m;
}

std::vector<std::string> compute_node_names(const ir::Model& m) {
    const auto constants = constant_values(*m.graph);
    std::vector<std::string> out;
    for (const auto& n : m.graph->nodes())
        if (std::any_of(n->outputs().begin(), n->outputs().end(),
                        [&](const ir::Value* v) { return v && !constants.count(v); }))
            out.push_back(n->name);
    return out;
}

std::vector<std::string> node_names(const ir::Model& m) {
    std::vector<std::string> out;
    for (const auto& n : m.graph->nodes()) out.push_back(n->name);
    return out;
}

}  // namespace pg::debug
