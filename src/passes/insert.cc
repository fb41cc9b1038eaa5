#include "passes/insert.h"

#include <algorithm>

#include "base/error.h"
#include "ir/graph.h"
#include "passes/cleanup.h"

namespace pg::passes {

namespace {

ir::Value* get_tensor(const ir::Graph& g, const std::string& name) {
    ir::Value* v = g.find_value(name);
    if (!v)
        throw Error(ErrorKind::kInvalidInput, "Tensor: " + name + " does not exist in the model.");
    return v;
}

bool is_graph_output(const ir::Graph& g, const ir::Value* v) {
    return std::count(g.outputs().begin(), g.outputs().end(), v) > 0;
}

// For a tensor that is both read and written by the new node: a fresh value that takes over
// the old one's readers and graph-output slots. Returns the value the new node must produce.
ir::Value* split_tensor(ir::Graph& g, ir::Value* old, InsertReport& report) {
    const std::string name = old->name();
    const std::string alt = g.unique_name(name + kInsertOutputSuffix);
    ir::Value* fresh = nullptr;
    if (is_graph_output(g, old)) {
        // The graph output keeps its name (and type) on the new tensor.
        g.rename_value(old, alt);
        fresh = g.add_value(name);
        fresh->set_type(old->type());
        report.renamed.push_back(name + " -> " + alt);
    } else {
        fresh = g.add_value(alt);
    }
    g.replace_all_uses_with(old, fresh);
    return fresh;
}

// Index right after the last producer (in g) of `inputs`, or 0.
size_t insert_position(const ir::Graph& g, const std::vector<ir::Value*>& inputs) {
    size_t pos = 0;
    for (ir::Value* in : inputs) {
        ir::Node* p = in ? in->producer() : nullptr;
        int idx = p ? g.index_of(p) : -1;
        if (idx >= 0) pos = std::max(pos, static_cast<size_t>(idx) + 1);
    }
    return pos;
}

}  // namespace

InsertReport insert_node(ir::Graph& g, InsertOptions options) {
    InsertReport report;
    std::vector<ir::Value*> inputs;
    for (const auto& name : options.inputs) inputs.push_back(get_tensor(g, name));
    std::vector<ir::Value*> outputs;
    for (const auto& name : options.outputs) {
        ir::Value* v = get_tensor(g, name);
        if (std::count(options.inputs.begin(), options.inputs.end(), name))
            v = split_tensor(g, v, report);
        if (ir::Node* p = v->producer())
            g.detach_node_output(p, static_cast<size_t>(v->producer_index()));
        outputs.push_back(v);
    }
    std::vector<std::string> out_names;
    for (ir::Value* v : outputs) out_names.push_back(v->name());
    const size_t pos = insert_position(g, inputs);
    ir::Node* n = pos < g.num_nodes()
                      ? g.insert_node_before(g.nodes()[pos].get(), options.op, inputs, out_names)
                      : g.add_node(options.op, inputs, out_names);
    n->name = options.name;
    n->domain = options.domain;
    n->attributes = std::move(options.attributes);
    report.nodes_removed = cleanup(g).nodes_removed;
    report.node = n;
    report.position = static_cast<size_t>(g.index_of(n));
    return report;
}

}  // namespace pg::passes
