// The precision emulator as a runner (--emu): the reference interpreter with every main-graph
// node's kernel wrapped to run at the precision the policy resolves for it (emulation.h).
// It streams its (rounded) intermediate tensors like --ref, and keeps the per-node evidence of
// the last inference.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "emu/emulation.h"
#include "emu/policy.h"
#include "runners/ref_runner.h"

namespace pg::emu {

struct EmuRunnerOptions {
    runtime::SessionOptions session;  // kernel_wrapper is set by the runner
    PrecisionPolicy policy;
    EmulationOptions emulation;
};

class EmuRunner : public runners::Runner {
  public:
    // Resolves every node's precision and plans the model, which must outlive the runner.
    // Throws kUnsupported (obey violations, int8, ops without kernels).
    EmuRunner(const ir::Model& model, EmuRunnerOptions options);
    const std::string& name() const override { return name_; }
    std::vector<runners::TensorMeta> input_metadata() const override;
    runners::NamedTensors infer(const std::map<std::string, Tensor>& feeds) override;
    double last_inference_time() const override { return last_time_; }
    bool can_stream() const override { return true; }
    runners::NamedTensors infer_streaming(const std::map<std::string, Tensor>& feeds,
                                          runners::TensorSink& sink) override;
    // The emulator with the same policy and options on another model (--attribute-error re-runs
    // single nodes; the policy resolves them by their names and op types as here).
    std::unique_ptr<runners::Runner> for_model(const ir::Model& model) const override;

    // INT8 (calibration.h). The main-graph nodes resolved to INT8, in graph order.
    std::vector<const ir::Node*> int8_nodes() const;
    // Calibrates the activation scales of the INT8 nodes on the float32 model over `feeds`
    // (one run per feed) and installs them; returns them.
    const ScaleTable& calibrate(const std::vector<runners::NamedTensors>& feeds,
                                const CalibrationOptions& o);
    // Installs scales read from a calibration cache. Throws kInvalidInput naming the first
    // activation tensor of an INT8 node that has no scale.
    void set_int8_scales(ScaleTable scales);
    const ScaleTable& int8_scales() const { return *options_.emulation.int8_scales; }

    // Per node (reduced-precision nodes only): what rounding did during the last inference.
    const EvidenceTable& evidence() const { return *evidence_; }
    // Every main-graph node with its resolved precision, in graph order.
    const std::vector<std::pair<const ir::Node*, Precision>>& resolved_precisions() const {
        return resolved_;
    }

  private:
    std::shared_ptr<EvidenceTable> evidence_;
    std::shared_ptr<RoundedValues> rounded_;
    std::vector<std::pair<const ir::Node*, Precision>> resolved_;
    runners::NamedTensors run(const std::map<std::string, Tensor>& feeds, runtime::NodeHook* hook);
    EmuRunnerOptions options_;
    const ir::Model& model_;
    std::unique_ptr<runtime::Session> session_;
    std::string name_;
    double last_time_ = 0;
};

}  // namespace pg::emu
