// Node insertion (`surgeon insert`, polygraphy-spec.md §8.5): a new node reads existing tensors
// and produces existing tensors, replacing whatever used to produce them; the replaced part of
// the graph is then cleaned up.
#pragma once

#include <string>
#include <vector>

#include "ir/attribute.h"

namespace pg::ir {
class Graph;
class Node;
}  // namespace pg::ir

namespace pg::passes {

struct InsertOptions {
    std::string op;                    // op type, e.g. "Identity"
    std::string domain;                // "" = default domain
    std::string name;                  // node name ("" allowed)
    std::vector<std::string> inputs;   // existing tensor names, in slot order
    std::vector<std::string> outputs;  // existing tensor names, in slot order
    std::vector<ir::Attribute> attributes;
};

struct InsertReport {
    ir::Node* node = nullptr;          // the inserted node
    size_t position = 0;               // its index in the graph's node list
    size_t nodes_removed = 0;          // nodes cleaned up because the new node replaced them
    std::vector<std::string> renamed;  // "old -> new" for tensors renamed to make room
};

// Suffix of the tensor made (or renamed) when a tensor is both an input and an output.
inline constexpr const char* kInsertOutputSuffix = "_polygraphy_surgeon_insert_output";

// Inserts a node right after the last producer of its inputs, then cleans up. A name in both
// inputs and outputs gets a new tensor that takes over the old one's readers (and, when the
// old one is a graph output, its name). Throws kInvalidInput naming an unknown tensor.
//   before: [Relu(x) -> y, Neg(y) -> z]   insert Identity(y) -> y
//   after:  [Relu(x) -> y, Identity(y) -> y_polygraphy_surgeon_insert_output,
//            Neg(y_polygraphy_surgeon_insert_output) -> z]
InsertReport insert_node(ir::Graph& g, InsertOptions options);

}  // namespace pg::passes
