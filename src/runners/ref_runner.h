// The reference interpreter as a runner (--ref).
#pragma once

#include "ir/model.h"
#include "runners/runner.h"
#include "runtime/session.h"

namespace pg::runners {

class RefRunner : public Runner {
public:
    // `model` must outlive the runner.
    RefRunner(const ir::Model& model, runtime::SessionOptions options);
    const std::string& name() const override { return name_; }
    std::vector<TensorMeta> input_metadata() const override;
    NamedTensors infer(const std::map<std::string, Tensor>& feeds) override;
    double last_inference_time() const override { return last_time_; }
    runtime::Session& session() { return session_; }

private:
    const ir::Model& model_;
    runtime::Session session_;
    std::string name_;
    double last_time_ = 0;
};

// Input metadata of a graph (inputs with initializers excluded).
std::vector<TensorMeta> graph_input_metadata(const ir::Graph& g);

}  // namespace pg::runners
