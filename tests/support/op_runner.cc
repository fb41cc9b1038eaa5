#include "support/op_runner.h"

#include "ir/builder.h"
#include "runtime/session.h"

namespace pg::test {

std::vector<Tensor> run_op(const std::string& op_type, const std::vector<Tensor>& inputs,
                           std::vector<ir::Attribute> attrs, int64_t opset, size_t num_outputs,
                           int threads) {
    auto m = ir::new_model(opset);
    ir::GraphBuilder b(*m->graph);
    std::vector<ir::Value*> ins;
    runtime::Feeds feeds;
    for (size_t i = 0; i < inputs.size(); ++i) {
        if (inputs[i].dtype() == DataType::kUndefined) {
            ins.push_back(nullptr);
            continue;
        }
        const std::string name = "x" + std::to_string(i);
        ins.push_back(b.input(name, inputs[i].dtype(), inputs[i].dims()));
        feeds[name] = ops::RtValue::of(inputs[i]);
    }
    ir::Node* n = b.op_multi(op_type, ins, num_outputs, std::move(attrs), "node");
    for (ir::Value* out : n->outputs()) b.output(out);
    runtime::SessionOptions opts;
    opts.threads = threads;
    runtime::Session s(*m, opts);
    std::vector<Tensor> out;
    for (auto& [name, v] : s.run(feeds)) out.push_back(v.is_tensor() ? v.tensor() : Tensor());
    return out;
}

Tensor f32(std::vector<int64_t> dims, std::vector<float> values) {
    return Tensor::from_values(DataType::kFloat32, std::move(dims), values);
}

Tensor i64(std::vector<int64_t> dims, std::vector<int64_t> values) {
    return Tensor::from_values(DataType::kInt64, std::move(dims), values);
}

std::vector<float> values_f32(const Tensor& t) {
    return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
}

}  // namespace pg::test
