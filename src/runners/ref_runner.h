// The reference interpreter as a runner (--ref).
#pragma once

#include <memory>
#include "ir/model.h"
#include "runners/runner.h"

#include "runtime/session.h"

namespace pg::runners {

struct RefRunnerOptions {
    runtime::SessionOptions session;
    // Compute a float32 model in float64 end to end (--ref-precision fp64). float32 feeds are
    // widened; outputs stay float64.
    bool fp64 = false;
};

class RefRunner : public Runner {
  public:
    // `model` must outlive the runner (with fp64, the runner works on its own copy).
    RefRunner(const ir::Model& model, RefRunnerOptions options);
    const std::string& name() const override { return name_; }
    std::vector<TensorMeta> input_metadata() const override;
    NamedTensors infer(const std::map<std::string, Tensor>& feeds) override;
    double last_inference_time() const override { return last_time_; }
    bool can_stream() const override { return true; }
    std::unique_ptr<Runner> for_model(const ir::Model& model) const override;
    NamedTensors infer_streaming(const std::map<std::string, Tensor>& feeds,
                                 TensorSink& sink) override;
    runtime::Session& session() { return session_; }

  private:
    NamedTensors run(const std::map<std::string, Tensor>& feeds, runtime::NodeHook* hook);
    RefRunnerOptions options_;
    const ir::Model& original_;            // the caller's model (its inputs are what callers feed)
    std::unique_ptr<ir::Model> promoted_;  // set with fp64
    const ir::Model& model_;
    runtime::Session session_;
    bool fp64_;
    std::string name_;
    double last_time_ = 0;
};

// Input metadata of a graph (inputs with initializers excluded).
std::vector<TensorMeta> graph_input_metadata(const ir::Graph& g);

}  // namespace pg::runners
