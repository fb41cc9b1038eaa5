#include "passes/toposort.h"

#include "base/error.h"
#include "ir/graph.h"
#include "ir/topo.h"

namespace pg::passes {

ToposortReport toposort(ir::Graph& g) {
    ToposortReport report;
    ir::check_acyclic(g);
    ir::TopoResult r = ir::topological_order(g);
    for (size_t i = 0; i < r.order.size(); ++i)
        if (r.order[i] != g.nodes()[i].get()) ++report.nodes_moved;
    g.reorder_nodes(r.order);
    for (const auto& n : g.nodes())
        for (ir::Graph* sub : n->subgraphs()) report.nodes_moved += toposort(*sub).nodes_moved;
    return report;
}

}  // namespace pg::passes
