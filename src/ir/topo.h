// Read-only ordering analysis of a graph: dependencies between its nodes (including those
// created by subgraphs that read values of this graph) and a stable topological order.
#pragma once

#include <vector>

namespace pg::ir {

class Graph;
class Node;

struct TopoResult {
    std::vector<Node*> order;  // every node, producers before consumers (when acyclic)
    std::vector<Node*> cycle;  // non-empty when the graph has a cycle: nodes on one cycle
    bool acyclic() const { return cycle.empty(); }
};

// The node of `g` that contains `n` (n itself, or the node whose subgraph holds n), or nullptr.
Node* ancestor_in(const Graph& g, Node* n);

// Stable topological order: among the nodes ready at each step, the one earliest in the
// current order goes first, so an already sorted graph keeps its order.
TopoResult topological_order(const Graph& g);

// Throws kInvalidInput naming the nodes of a cycle, in this graph or any subgraph.
void check_acyclic(const Graph& g);

}  // namespace pg::ir
