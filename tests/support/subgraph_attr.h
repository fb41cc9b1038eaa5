// Building control-flow models in tests: a node's graph-valued attribute (If's then_branch /
// else_branch, Loop's body) added empty, for the test to fill with ir::GraphBuilder. To add a
// builder helper for subgraphs: declare it here and define it in subgraph_attr.cc.
#pragma once

#include <string>

#include "ir/graph.h"

namespace pg::test {

// Adds a graph-valued attribute `attr` to n and returns the (empty) subgraph it owns.
ir::Graph* add_branch(ir::Node* n, const std::string& attr);

}  // namespace pg::test
