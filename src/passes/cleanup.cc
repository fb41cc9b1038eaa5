#include "passes/cleanup.h"

#include <algorithm>
#include <unordered_set>
#include <vector>

#include "ir/graph.h"

namespace pg::passes {

namespace {

using ValueSet = std::unordered_set<const ir::Value*>;

// Marks every value of `g` read by a node of `sub` or of its nested subgraphs.
void mark_outer_reads(const ir::Graph& g, const ir::Graph& sub, ValueSet& live,
                      std::vector<ir::Value*>& work) {
    for (const auto& n : sub.nodes()) {
        for (ir::Value* in : n->inputs())
            if (in && in->graph() == &g && live.insert(in).second) work.push_back(in);
        for (ir::Graph* inner : n->subgraphs()) mark_outer_reads(g, *inner, live, work);
    }
}

// The nodes of g that contribute to its outputs, found by walking producers backwards.
std::unordered_set<const ir::Node*> live_nodes(const ir::Graph& g) {
    ValueSet live;
    std::vector<ir::Value*> work;
    for (ir::Value* out : g.outputs())
        if (out && live.insert(out).second) work.push_back(out);
    std::unordered_set<const ir::Node*> nodes;
    while (!work.empty()) {
        ir::Value* v = work.back();
        work.pop_back();
        ir::Node* p = v->producer();
        if (!p || p->graph() != &g || !nodes.insert(p).second) continue;
        for (ir::Value* in : p->inputs())
            if (in && in->graph() == &g && live.insert(in).second) work.push_back(in);
        for (ir::Graph* sub : p->subgraphs()) mark_outer_reads(g, *sub, live, work);
    }
    return nodes;
}

bool is_graph_output(const ir::Graph& g, const ir::Value* v) {
    return std::count(g.outputs().begin(), g.outputs().end(), v) > 0;
}

bool is_graph_input(const ir::Graph& g, const ir::Value* v) {
    return std::count(g.inputs().begin(), g.inputs().end(), v) > 0;
}

// Removes dead nodes of g (not its subgraphs); returns how many.
size_t remove_dead_nodes(ir::Graph& g) {
    const auto live = live_nodes(g);
    std::vector<ir::Node*> dead;
    for (const auto& n : g.nodes())
        if (!live.count(n.get())) dead.push_back(n.get());
    // Dead nodes may read each other in any order: disconnect them all before removing.
    for (ir::Node* n : dead) {
        n->truncate_inputs(0);
        for (ir::Graph* sub : n->subgraphs()) sub->detach_all_inputs();
    }
    for (ir::Node* n : dead) g.remove_node(n);
    return dead.size();
}

// Removes values of g with no producer and no use that are neither inputs nor outputs.
size_t remove_orphan_values(ir::Graph& g) {
    std::vector<ir::Value*> orphans;
    for (const auto& v : g.values())
        if (!v->producer() && v->uses().empty() && !is_graph_input(g, v.get()) &&
            !is_graph_output(g, v.get()))
            orphans.push_back(v.get());
    for (ir::Value* v : orphans) g.remove_value(v);
    return orphans.size();
}

void cleanup_graph(ir::Graph& g, const CleanupOptions& options, bool is_subgraph,
                   CleanupReport& report) {
    // Subgraphs first: their dead nodes may be the only readers of values of g.
    CleanupOptions sub_options = options;
    sub_options.remove_unused_graph_inputs = false;
    for (const auto& n : g.nodes())
        for (ir::Graph* sub : n->subgraphs()) cleanup_graph(*sub, sub_options, true, report);
    report.nodes_removed += remove_dead_nodes(g);
    if (options.remove_unused_node_outputs) {
        for (const auto& n : g.nodes())
            for (size_t i = 0; i < n->outputs().size(); ++i) {
                ir::Value* out = n->output(i);
                if (!out || !out->uses().empty() || is_graph_output(g, out)) continue;
                g.detach_node_output(n.get(), i);
                ++report.node_outputs_removed;
            }
    }
    if (options.remove_unused_graph_inputs && !is_subgraph) {
        std::vector<ir::Value*> kept;
        for (ir::Value* in : g.inputs()) {
            if (in->uses().empty() && !is_graph_output(g, in))
                ++report.inputs_removed;
            else
                kept.push_back(in);
        }
        g.set_inputs(std::move(kept));
    }
    report.values_removed += remove_orphan_values(g);
}

}  // namespace

CleanupReport cleanup(ir::Graph& g, const CleanupOptions& options) {
    CleanupReport report;
    cleanup_graph(g, options, g.parent() != nullptr, report);
    return report;
}

}  // namespace pg::passes
