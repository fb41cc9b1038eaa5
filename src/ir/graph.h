// The graph IR: Values (named tensors with a type, one producer and a list of uses), Nodes
// (an operator applied to values) and Graphs (an ordered list of nodes with inputs, outputs and
// initializers; subgraphs of If / Loop / Scan see the values of their enclosing graphs).
//
// The Graph owns its Nodes and Values. Mutators keep producer and use lists consistent; passes
// (src/passes) are free functions built on them and never reach into the containers directly.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ir/attribute.h"
#include "ir/type.h"

namespace pg::ir {

class Graph;
class Node;

// One input slot of a node that reads a value.
struct Use {
    Node* node;
    int index;
    bool operator==(const Use&) const = default;
};

class Value {
public:
    const std::string& name() const { return name_; }
    // The graph whose scope defines this value.
    Graph* graph() const { return graph_; }
    // The node producing this value (nullptr for graph inputs, initializers and orphans).
    Node* producer() const { return producer_; }
    int producer_index() const { return producer_index_; }
    // Every node input that reads this value, across subgraphs too.
    const std::vector<Use>& uses() const { return uses_; }

    bool has_type() const { return type_.kind != TypeKind::kNone; }
    const TypeInfo& type() const { return type_; }
    void set_type(TypeInfo t) { type_ = std::move(t); }

    bool is_initializer() const { return initializer_ != nullptr; }
    const NamedTensor* initializer() const { return initializer_.get(); }
    NamedTensor* mutable_initializer() { return initializer_.get(); }

    // ValueInfoProto details kept for a faithful round trip.
    CompactString doc_string;
    Metadata metadata;
    CompactString unknown_fields;
    // True when the value is listed in the graph's value_info.
    bool in_value_info = false;

private:
    friend class Graph;
    friend class Node;
    std::string name_;
    Graph* graph_ = nullptr;
    Node* producer_ = nullptr;
    int producer_index_ = -1;
    std::vector<Use> uses_;
    TypeInfo type_;
    std::unique_ptr<NamedTensor> initializer_;
};

class Node {
public:
    std::string op_type;
    std::string domain;  // "" and "ai.onnx" both mean the default domain
    std::string name;
    CompactString overload;
    CompactString doc_string;
    Metadata metadata;
    CompactString unknown_fields;
    std::vector<Attribute> attributes;

    Graph* graph() const { return graph_; }
    // Inputs in slot order; nullptr marks an omitted optional input ("").
    const std::vector<Value*>& inputs() const { return inputs_; }
    // Outputs in slot order; nullptr marks an omitted optional output ("").
    const std::vector<Value*>& outputs() const { return outputs_; }
    Value* input(size_t i) const { return i < inputs_.size() ? inputs_[i] : nullptr; }
    Value* output(size_t i) const { return i < outputs_.size() ? outputs_[i] : nullptr; }

    // Rewires input slot i to v (nullptr omits it), updating use lists.
    //   before: n(a, b)   set_input(1, c)   after: n(a, c); b loses a use, c gains one.
    void set_input(size_t i, Value* v);
    // Appends an input slot.  before: n(a)  add_input(b)  after: n(a, b)
    void add_input(Value* v);
    // Drops input slots from `count` on.  before: n(a, b, c)  truncate_inputs(1)  after: n(a)
    void truncate_inputs(size_t count);

    const Attribute* find_attribute(const std::string& attr_name) const;
    Attribute* find_attribute(const std::string& attr_name);
    // Every subgraph held by this node's attributes.
    std::vector<Graph*> subgraphs() const;
    // "'conv_3' (Conv)" for messages.
    std::string describe() const;

private:
    friend class Graph;
    Graph* graph_ = nullptr;
    std::vector<Value*> inputs_;
    std::vector<Value*> outputs_;
};

class Graph {
public:
    explicit Graph(Graph* parent = nullptr) : parent_(parent) {}
    Graph(const Graph&) = delete;
    Graph& operator=(const Graph&) = delete;
    ~Graph();

    std::string name;
    std::string doc_string;
    Metadata metadata;
    std::string unknown_fields;
    std::vector<SparseTensor> sparse_initializers;
    std::vector<std::string> quantization_annotations;  // serialized TensorAnnotation messages

    // The enclosing graph of a subgraph (nullptr for the main graph).
    Graph* parent() const { return parent_; }
    void set_parent(Graph* p) { parent_ = p; }
    // The node whose attribute holds this subgraph (nullptr for the main graph).
    Node* owner_node() const { return owner_node_; }
    void set_owner_node(Node* n) { owner_node_ = n; }

    const std::vector<std::unique_ptr<Node>>& nodes() const { return nodes_; }
    size_t num_nodes() const { return nodes_.size(); }
    const std::vector<Value*>& inputs() const { return inputs_; }
    const std::vector<Value*>& outputs() const { return outputs_; }
    const std::vector<Value*>& initializers() const { return initializers_; }
    // All values owned by this graph, in creation order.
    const std::vector<std::unique_ptr<Value>>& values() const { return values_; }

    // The value named `name` in this graph only, or nullptr.
    Value* find_value(const std::string& value_name) const;
    // The value named `name` here or in an enclosing graph, or nullptr.
    Value* lookup(const std::string& value_name) const;

    // Creates a value with no producer. Throws kInvalidInput if the name is taken in this graph.
    Value* add_value(const std::string& value_name);
    // Creates a value holding constant data (an initializer).
    //   before: initializers {}   add_initializer({"w", T})   after: initializers {w}
    Value* add_initializer(NamedTensor tensor);
    // Attaches constant data to an existing value (an input with a default, as in old models).
    void set_initializer(Value* v, NamedTensor tensor);
    // Drops a value's constant data; the value stays.
    void clear_initializer(Value* v);
    void add_input(Value* v);
    void set_inputs(std::vector<Value*> inputs);
    void set_outputs(std::vector<Value*> outputs);

    // Appends a node whose outputs are new values with the given names ("" = omitted).
    //   before: [n0]   add_node("Relu", {x}, {"y"})   after: [n0, Relu(x) -> y]
    Node* add_node(const std::string& op_type, const std::vector<Value*>& inputs,
                   const std::vector<std::string>& output_names);
    // Like add_node, but placed right before `before`.
    Node* insert_node_before(Node* before, const std::string& op_type,
                             const std::vector<Value*>& inputs,
                             const std::vector<std::string>& output_names);
    // Gives a node an extra output value.  before: n -> (a)  add_output(n, "b")  after: n -> (a, b)
    Value* add_node_output(Node* node, const std::string& value_name);
    // Turns output slot i of `node` into an omitted output ("") and keeps its value in the graph
    // without a producer (to become a graph input, or to be removed). Slot positions are kept.
    //   before: Split(x) -> (a, b)   detach_node_output(split, 1)   after: Split(x) -> (a, ""); b
    void detach_node_output(Node* node, size_t i);
    // Removes a node. Its inputs lose their uses; its outputs must be unused and not graph
    // outputs (kInternal otherwise), and are deleted with it.
    //   before: x -> Relu -> y (unused)   remove_node(relu)   after: x
    void remove_node(Node* node);
    // Points every use of `from` (node inputs here and in subgraphs, graph outputs) at `to`.
    //   before: a -> Relu(a), out = a   replace_all_uses_with(a, b)   after: Relu(b), out = b
    void replace_all_uses_with(Value* from, Value* to);
    // Deletes a value that has no producer and no uses and is no graph input or output.
    void remove_value(Value* v);
    // Renames a value. Throws kInvalidInput if the new name is taken in this graph.
    void rename_value(Value* v, const std::string& new_name);
    // Reorders the nodes; `order` must be a permutation of nodes() (kInternal otherwise).
    void reorder_nodes(const std::vector<Node*>& order);
    // Disconnects every node input here and in nested subgraphs (before dropping a subgraph).
    void detach_all_inputs();
    // Index of `node` in nodes(), or -1.
    int index_of(const Node* node) const;
    // A value name not used in this graph or its enclosing graphs, built from `base`.
    std::string unique_name(const std::string& base) const;

private:
    std::unique_ptr<Node> make_node(const std::string& op_type, const std::vector<Value*>& inputs,
                    const std::vector<std::string>& output_names);

    Graph* parent_;
    Node* owner_node_ = nullptr;
    std::vector<std::unique_ptr<Node>> nodes_;
    std::vector<std::unique_ptr<Value>> values_;
    // Keys view each value's own name_ (values are heap objects that never move; rename_value
    // re-keys), so a name is stored once.
    std::unordered_map<std::string_view, Value*> by_name_;
    std::vector<Value*> inputs_;
    std::vector<Value*> outputs_;
    std::vector<Value*> initializers_;
};

}  // namespace pg::ir
