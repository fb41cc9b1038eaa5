// Deep copies of graphs and attributes. Tensor bytes are shared (they are immutable), so a copy
// of a graph with large weights costs no weight memory.
#pragma once

#include <memory>
#include <unordered_map>

#include "ir/model.h"

namespace pg::ir {

// Copies `src` into a new graph whose parent is `parent`. Values of graphs enclosing `src` that
// `src` reads are mapped through `outer` (value of the old scope -> value of the new scope);
// unmapped outer values are looked up by name in `parent`'s scope chain.
std::unique_ptr<Graph> clone_graph(const Graph& src, Graph* parent,
                                   const std::unordered_map<const Value*, Value*>& outer = {});

// Copies an attribute; subgraphs are cloned with `parent` as their enclosing graph.
Attribute clone_attribute(const Attribute& a, Graph* parent);

// Copies a whole model.
std::unique_ptr<Model> clone_model(const Model& m);

}  // namespace pg::ir
