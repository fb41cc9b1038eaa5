// A small builder for models in code: tests, example generators and passes that create graphs.
//   auto m = ir::new_model(17);
//   ir::GraphBuilder b(*m->graph);
//   ir::Value* x = b.input("x", DataType::kFloat32, {1, 4});
//   ir::Value* y = b.op("Relu", {x});
//   b.output(y, DataType::kFloat32, {1, 4});
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/model.h"

namespace pg::ir {

// An empty model importing the default domain at `opset` (IR version 8 for opset <= 17,
// 10 for opset <= 21, 11 above).
std::unique_ptr<Model> new_model(int64_t opset, const std::string& graph_name = "main");

class GraphBuilder {
public:
    explicit GraphBuilder(Graph& g) : g_(g) {}

    // A graph input with a static shape.
    Value* input(const std::string& name, DataType dt, const std::vector<int64_t>& dims);
    // A graph input with any shape (symbolic dims allowed).
    Value* input(const std::string& name, DataType dt, Shape shape);
    // An initializer holding `t`.
    Value* constant(const std::string& name, Tensor t);
    // A float32 initializer filled with `values` (shape `dims`).
    Value* constant_f32(const std::string& name, const std::vector<int64_t>& dims, std::vector<float> values);
    // A node with one output named "<node name>_out" (node named "<op>_<k>" unless given).
    Value* op(const std::string& op_type, const std::vector<Value*>& inputs,
              std::vector<Attribute> attrs = {}, const std::string& name = "");
    // A node with `num_outputs` outputs.
    Node* op_multi(const std::string& op_type, const std::vector<Value*>& inputs, size_t num_outputs,
                   std::vector<Attribute> attrs = {}, const std::string& name = "");
    // Marks v as a graph output with a tensor type.
    void output(Value* v, DataType dt, const std::vector<int64_t>& dims);
    void output(Value* v);

    Graph& graph() { return g_; }

private:
    Graph& g_;
    int counter_ = 0;
};

}  // namespace pg::ir
