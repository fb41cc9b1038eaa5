// Topological sorting of a graph and its subgraphs.
#pragma once

#include <cstddef>

namespace pg::ir {
class Graph;
}

namespace pg::passes {

struct ToposortReport {
    size_t nodes_moved = 0;  // nodes whose position changed, over all graphs
};

// Sorts nodes so that producers come before consumers, keeping the current order wherever it is
// already valid (stable). Subgraphs are sorted too. Throws kInvalidInput on a cycle.
//   before: [Relu(t) -> y, Add(x, x) -> t]   after: [Add(x, x) -> t, Relu(t) -> y]
ToposortReport toposort(ir::Graph& g);

}  // namespace pg::passes
