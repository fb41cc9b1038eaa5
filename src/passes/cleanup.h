// Dead-code removal with onnx-graphsurgeon's `graph.cleanup()` semantics: nodes and values that do
// not contribute to the graph outputs are removed; graph outputs are never touched. Subgraphs are
// cleaned too, and a value read only inside a subgraph of a live node counts as used.
// To add an option: add a field to CleanupOptions and honour it in cleanup.cc.
#pragma once

#include <cstddef>

namespace pg::ir {
class Graph;
}

namespace pg::passes {

struct CleanupOptions {
    // Also drop graph inputs that nothing reads (never done inside subgraphs: their inputs are
    // positional).
    bool remove_unused_graph_inputs = false;
    // Also turn node outputs that nothing reads into omitted ("") outputs. SPEC-DEVIATION:
    // graphsurgeon removes them from the output list, shifting later slots; we keep positions.
    bool remove_unused_node_outputs = false;
};

struct CleanupReport {
    size_t nodes_removed = 0;         // over all graphs
    size_t values_removed = 0;        // unused initializers and orphan values, over all graphs
    size_t inputs_removed = 0;        // graph inputs dropped (remove_unused_graph_inputs)
    size_t node_outputs_removed = 0;  // outputs made omitted (remove_unused_node_outputs)
};

// Removes everything that does not contribute to g's outputs, in g and its subgraphs.
//   before: [Concat(e, f) -> g, Dropout(f) -> h, Identity(h) -> i], outputs {i}
//   after:  [Dropout(f) -> h, Identity(h) -> i]
CleanupReport cleanup(ir::Graph& g, const CleanupOptions& options = {});

}  // namespace pg::passes
