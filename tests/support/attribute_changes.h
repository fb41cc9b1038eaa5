// The attribute changes the attribute sweep and the ONNX Runtime differential suite make to an
// ONNX node test's model, one at a time: an attribute of one node (of the main graph or a
// subgraph) set to a hostile value of its type (negative, zero, huge, the int64 extremes; NaN,
// the infinities; empty strings and lists, lists one shorter or longer), given as another
// attribute type (an int as a float or a list), removed, or (for attributes of that op that
// other tests of the suite set) added.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ir/model.h"

namespace pg::test {

// One change to an attribute that exists (or was just added): its label and what it does.
struct AttributeVariant {
    std::string label;
    std::function<void(ir::Attribute&)> apply;
};

// Attributes other tests of a suite set, by op (domain and type) and name: one example each, to
// add to nodes of that op that do not set them. Graph attributes are not added.
using AttributeExamples = std::map<std::string, std::map<std::string, ir::Attribute>>;

// The examples of the models in `dirs` (each holding a model.onnx), plus the window attributes
// (strides, dilations, pads at their defaults) of the ops that slide one.
AttributeExamples collect_attribute_examples(const std::vector<std::filesystem::path>& dirs);

// What one change does: node `node` (its place in a depth-first walk of the model's nodes,
// subgraphs included), its attribute `name` (added from the examples when `added`).
struct AttributeTarget {
    size_t node;
    std::string name;
    bool added;
};

// Applies one change to `model`: `variant` (nullptr: the attribute removed, or added as the
// example has it) to `target`.
void apply_attribute_change(ir::Model& model, const AttributeExamples& examples,
                            const AttributeTarget& target, const AttributeVariant* variant);

// Calls `change` for every change of `model`, in a fixed order, with its label ("node 3 (Conv)
// strides all -1") and what apply_attribute_change needs to make it on a fresh copy.
void for_each_attribute_change(
    const ir::Model& model, const AttributeExamples& examples,
    const std::function<void(const std::string&, const AttributeTarget&, const AttributeVariant*)>&
        change);

}  // namespace pg::test
