#include "ir/graph.h"

#include <algorithm>
#include <unordered_set>

#include "base/error.h"

namespace pg::ir {

namespace {

void erase_use(std::vector<Use>& uses, Node* node, int index) {
    auto it = std::find(uses.begin(), uses.end(), Use{node, index});
    if (it != uses.end()) uses.erase(it);
}

}  // namespace

// ---- Node ----

void Node::set_input(size_t i, Value* v) {
    if (i >= inputs_.size()) throw Error(ErrorKind::kInternal, "set_input: slot out of range on " + describe());
    if (inputs_[i]) erase_use(inputs_[i]->uses_, this, static_cast<int>(i));
    inputs_[i] = v;
    if (v) v->uses_.push_back(Use{this, static_cast<int>(i)});
}

void Node::add_input(Value* v) {
    inputs_.push_back(nullptr);
    set_input(inputs_.size() - 1, v);
}

void Node::truncate_inputs(size_t count) {
    while (inputs_.size() > count) {
        set_input(inputs_.size() - 1, nullptr);
        inputs_.pop_back();
    }
}

const Attribute* Node::find_attribute(const std::string& attr_name) const {
    for (const auto& a : attributes)
        if (a.name == attr_name) return &a;
    return nullptr;
}

Attribute* Node::find_attribute(const std::string& attr_name) {
    for (auto& a : attributes)
        if (a.name == attr_name) return &a;
    return nullptr;
}

std::vector<Graph*> Node::subgraphs() const {
    std::vector<Graph*> out;
    for (const auto& a : attributes)
        for (const auto& g : a.graphs) out.push_back(g.get());
    return out;
}

std::string Node::describe() const { return "'" + name + "' (" + op_type + ")"; }

// ---- Graph ----

Graph::~Graph() {
    // Nodes here may use values of enclosing graphs: leave their use lists consistent.
    if (parent_) detach_all_inputs();
    for (auto& n : nodes_) n->attributes.clear();
    nodes_.clear();
}

Value* Graph::find_value(const std::string& value_name) const {
    auto it = by_name_.find(std::string_view(value_name));
    return it == by_name_.end() ? nullptr : it->second;
}

Value* Graph::lookup(const std::string& value_name) const {
    for (const Graph* g = this; g; g = g->parent_)
        if (Value* v = g->find_value(value_name)) return v;
    return nullptr;
}

Value* Graph::add_value(const std::string& value_name) {
    if (value_name.empty()) throw Error(ErrorKind::kInvalidInput, "a value needs a non-empty name");
    if (by_name_.count(std::string_view(value_name)))
        throw Error(ErrorKind::kInvalidInput, "duplicate value name '" + value_name + "'");
    auto v = std::make_unique<Value>();
    v->name_ = value_name;
    v->graph_ = this;
    Value* raw = v.get();
    values_.push_back(std::move(v));
    by_name_[std::string_view(raw->name_)] = raw;
    return raw;
}

Value* Graph::add_initializer(NamedTensor tensor) {
    Value* v = add_value(tensor.name);
    set_initializer(v, std::move(tensor));
    return v;
}

void Graph::set_initializer(Value* v, NamedTensor tensor) {
    if (v->producer_)
        throw Error(ErrorKind::kInvalidInput,
                    "initializer '" + v->name() + "' is also produced by node " + v->producer_->describe());
    if (v->initializer_)
        throw Error(ErrorKind::kInvalidInput, "duplicate initializer '" + v->name() + "'");
    tensor.name = v->name();
    v->initializer_ = std::make_unique<NamedTensor>(std::move(tensor));
    initializers_.push_back(v);
}

void Graph::clear_initializer(Value* v) {
    v->initializer_.reset();
    initializers_.erase(std::remove(initializers_.begin(), initializers_.end(), v), initializers_.end());
}

void Graph::add_input(Value* v) { inputs_.push_back(v); }
void Graph::set_inputs(std::vector<Value*> inputs) { inputs_ = std::move(inputs); }
void Graph::set_outputs(std::vector<Value*> outputs) { outputs_ = std::move(outputs); }

std::unique_ptr<Node> Graph::make_node(const std::string& op_type, const std::vector<Value*>& inputs,
                                       const std::vector<std::string>& output_names) {
    auto n = std::make_unique<Node>();
    n->op_type = op_type;
    n->graph_ = this;
    Node* raw = n.get();
    for (Value* in : inputs) raw->add_input(in);
    for (size_t k = 0; k < output_names.size(); ++k) {
        if (output_names[k].empty()) {
            raw->outputs_.push_back(nullptr);
            continue;
        }
        Value* existing = find_value(output_names[k]);
        if (existing && (existing->producer_ || existing->initializer_ ||
                         std::count(inputs_.begin(), inputs_.end(), existing))) {
            std::string by = existing->producer_ ? "node " + existing->producer_->describe()
                                                 : std::string("a graph input or initializer");
            throw Error(ErrorKind::kInvalidInput, "value '" + output_names[k] + "' of node '" +
                                                      raw->name + "' (" + op_type +
                                                      ") is already produced by " + by);
        }
        Value* v = existing ? existing : add_value(output_names[k]);
        v->producer_ = raw;
        v->producer_index_ = static_cast<int>(k);
        raw->outputs_.push_back(v);
    }
    return n;
}

Node* Graph::add_node(const std::string& op_type, const std::vector<Value*>& inputs,
                      const std::vector<std::string>& output_names) {
    nodes_.push_back(make_node(op_type, inputs, output_names));
    return nodes_.back().get();
}

Node* Graph::insert_node_before(Node* before, const std::string& op_type,
                                const std::vector<Value*>& inputs,
                                const std::vector<std::string>& output_names) {
    int pos = index_of(before);
    if (pos < 0) throw Error(ErrorKind::kInternal, "insert_node_before: node not in this graph");
    auto it = nodes_.insert(nodes_.begin() + pos, make_node(op_type, inputs, output_names));
    return it->get();
}

Value* Graph::add_node_output(Node* node, const std::string& value_name) {
    Value* v = add_value(value_name);
    v->producer_ = node;
    v->producer_index_ = static_cast<int>(node->outputs_.size());
    node->outputs_.push_back(v);
    return v;
}

void Graph::detach_node_output(Node* node, size_t i) {
    if (node->graph_ != this || i >= node->outputs_.size())
        throw Error(ErrorKind::kInternal, "detach_node_output: no output slot on " + node->describe());
    Value* v = node->outputs_[i];
    if (!v) return;
    v->producer_ = nullptr;
    v->producer_index_ = -1;
    node->outputs_[i] = nullptr;
}

void Graph::remove_node(Node* node) {
    int pos = index_of(node);
    if (pos < 0) throw Error(ErrorKind::kInternal, "remove_node: node not in this graph");
    for (Value* out : node->outputs_) {
        if (!out) continue;
        if (!out->uses_.empty() || std::count(outputs_.begin(), outputs_.end(), out))
            throw Error(ErrorKind::kInternal,
                        "remove_node: output '" + out->name() + "' of " + node->describe() + " is still used");
    }
    node->truncate_inputs(0);
    // Subgraph nodes may use outer values: detach them too.
    for (Graph* sub : node->subgraphs()) sub->detach_all_inputs();
    for (Value* out : node->outputs_) {
        if (!out) continue;
        out->producer_ = nullptr;
        remove_value(out);
    }
    nodes_.erase(nodes_.begin() + pos);
}

void Graph::replace_all_uses_with(Value* from, Value* to) {
    if (from == to) return;
    const std::vector<Use> uses = from->uses_;
    for (const Use& u : uses) u.node->set_input(static_cast<size_t>(u.index), to);
    for (auto& o : outputs_)
        if (o == from) o = to;
}

void Graph::remove_value(Value* v) {
    if (v->producer_ || !v->uses_.empty() || std::count(inputs_.begin(), inputs_.end(), v) ||
        std::count(outputs_.begin(), outputs_.end(), v))
        throw Error(ErrorKind::kInternal, "remove_value: '" + v->name() + "' is still in use");
    if (v->initializer_) clear_initializer(v);
    by_name_.erase(std::string_view(v->name_));
    auto it = std::find_if(values_.begin(), values_.end(), [&](const auto& p) { return p.get() == v; });
    if (it != values_.end()) values_.erase(it);
}

void Graph::rename_value(Value* v, const std::string& new_name) {
    if (v->name_ == new_name) return;
    if (by_name_.count(std::string_view(new_name)))
        throw Error(ErrorKind::kInvalidInput, "cannot rename '" + v->name_ + "': '" + new_name + "' exists");
    by_name_.erase(std::string_view(v->name_));  // before name_ (the key's storage) changes
    v->name_ = new_name;
    if (v->initializer_) v->initializer_->name = new_name;
    by_name_[std::string_view(v->name_)] = v;
}

void Graph::reorder_nodes(const std::vector<Node*>& order) {
    if (order.size() != nodes_.size())
        throw Error(ErrorKind::kInternal, "reorder_nodes: order is not a permutation");
    std::unordered_map<const Node*, size_t> pos;
    for (size_t i = 0; i < nodes_.size(); ++i) pos[nodes_[i].get()] = i;
    std::vector<std::unique_ptr<Node>> next;
    next.reserve(nodes_.size());
    for (Node* n : order) {
        auto it = pos.find(n);
        if (it == pos.end() || !nodes_[it->second])
            throw Error(ErrorKind::kInternal, "reorder_nodes: order is not a permutation");
        next.push_back(std::move(nodes_[it->second]));
    }
    nodes_ = std::move(next);
}

void Graph::detach_all_inputs() {
    for (auto& n : nodes_) {
        n->truncate_inputs(0);
        for (Graph* sub : n->subgraphs()) sub->detach_all_inputs();
    }
}

int Graph::index_of(const Node* node) const {
    for (size_t i = 0; i < nodes_.size(); ++i)
        if (nodes_[i].get() == node) return static_cast<int>(i);
    return -1;
}

std::string Graph::unique_name(const std::string& base) const {
    if (!lookup(base)) return base;
    for (int k = 0;; ++k) {
        std::string candidate = base + "_" + std::to_string(k);
        if (!lookup(candidate)) return candidate;
    }
}

}  // namespace pg::ir
