// Structural comparison of two models for round-trip tests: nodes (op, domain, name, inputs,
// outputs, attributes incl. subgraphs), initializer bytes, opsets, metadata, functions.
#pragma once

#include <string>

#include "ir/model.h"

namespace pg::test {

// "" when equal, else a description of the first difference.
std::string diff_models(const ir::Model& a, const ir::Model& b);
std::string diff_graphs(const ir::Graph& a, const ir::Graph& b, const std::string& where);

}  // namespace pg::test
