#include "ir/builder.h"

namespace pg::ir {

std::unique_ptr<Model> new_model(int64_t opset, const std::string& graph_name) {
    auto m = std::make_unique<Model>();
    m->ir_version = opset <= 17 ? 8 : opset <= 21 ? 10 : 11;
    m->opset_imports.push_back({"", opset});
    m->producer_name = "polygraph";
    m->graph = std::make_unique<Graph>();
    m->graph->name = graph_name;
    return m;
}

Value* GraphBuilder::input(const std::string& name, DataType dt, const std::vector<int64_t>& dims) {
    return input(name, dt, make_shape(dims));
}

Value* GraphBuilder::input(const std::string& name, DataType dt, Shape shape) {
    Value* v = g_.add_value(name);
    v->set_type(TypeInfo::tensor(dt, std::move(shape)));
    g_.add_input(v);
    return v;
}

Value* GraphBuilder::constant(const std::string& name, Tensor t) {
    NamedTensor nt;
    nt.name = name;
    nt.tensor = std::move(t);
    return g_.add_initializer(std::move(nt));
}

Value* GraphBuilder::constant_f32(const std::string& name, const std::vector<int64_t>& dims,
                                  std::vector<float> values) {
    return constant(name, Tensor::from_values(DataType::kFloat32, dims, values));
}

Node* GraphBuilder::op_multi(const std::string& op_type, const std::vector<Value*>& inputs,
                             size_t num_outputs, std::vector<Attribute> attrs, const std::string& name) {
    const std::string node_name = name.empty() ? g_.unique_name(op_type + "_" + std::to_string(counter_++)) : name;
    std::vector<std::string> outs;
    for (size_t k = 0; k < num_outputs; ++k)
        outs.push_back(g_.unique_name(node_name + (num_outputs == 1 ? "_out" : "_out" + std::to_string(k))));
    Node* n = g_.add_node(op_type, inputs, outs);
    n->name = node_name;
    n->attributes = std::move(attrs);
    return n;
}

Value* GraphBuilder::op(const std::string& op_type, const std::vector<Value*>& inputs,
                        std::vector<Attribute> attrs, const std::string& name) {
    return op_multi(op_type, inputs, 1, std::move(attrs), name)->output(0);
}

void GraphBuilder::output(Value* v, DataType dt, const std::vector<int64_t>& dims) {
    v->set_type(TypeInfo::tensor(dt, make_shape(dims)));
    output(v);
}

void GraphBuilder::output(Value* v) {
    std::vector<Value*> outs = g_.outputs();
    outs.push_back(v);
    g_.set_outputs(std::move(outs));
}

}  // namespace pg::ir
