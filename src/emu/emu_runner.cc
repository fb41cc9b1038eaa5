#include "emu/emu_runner.h"

#include "runners/session_io.h"

#include <unordered_map>

#include "base/error.h"

namespace pg::emu {

namespace {

std::vector<std::pair<const ir::Node*, Precision>> resolve_all(const ir::Model& m,
                                                               const PrecisionPolicy& policy) {
    std::vector<std::pair<const ir::Node*, Precision>> out;
    for (const auto& n : m.graph->nodes()) out.emplace_back(n.get(), policy.resolve(*n));
    return out;
}

// Forwards every tensor output of each top-level node to a TensorSink.

}  // namespace

EmuRunner::EmuRunner(const ir::Model& model, EmuRunnerOptions options)
    : evidence_(std::make_shared<EvidenceTable>()),
      rounded_(std::make_shared<RoundedValues>()),
      resolved_(model.graph ? resolve_all(model, options.policy)
                            : std::vector<std::pair<const ir::Node*, Precision>>{}),
      options_(std::move(options)),
      model_(model),
      name_(runners::make_runner_name("emu-runner")) {
    std::unordered_map<const ir::Node*, Precision> by_node(resolved_.begin(), resolved_.end());
    // Shared with runners made by for_model(), so they see the same calibration.
    if (!options_.emulation.int8_scales)
        options_.emulation.int8_scales = std::make_shared<ScaleTable>();
    runtime::SessionOptions so = options_.session;
    so.kernel_wrapper = [by_node, o = options_.emulation, ev = evidence_, rv = rounded_](
                            const ir::Node& n, ops::KernelFn k) {
        auto it = by_node.find(&n);
        const Precision p = it == by_node.end() ? Precision::kFP32 : it->second;
        return emulate_kernel(n, std::move(k), p, o, ev.get(), rv.get());
    };
    session_ = std::make_unique<runtime::Session>(model, so);
}

std::unique_ptr<runners::Runner> EmuRunner::for_model(const ir::Model& model) const {
    return std::make_unique<EmuRunner>(model, options_);
}

std::vector<const ir::Node*> EmuRunner::int8_nodes() const {
    std::vector<const ir::Node*> out;
    for (const auto& [n, p] : resolved_)
        if (p == Precision::kINT8) out.push_back(n);
    return out;
}

const ScaleTable& EmuRunner::calibrate(const std::vector<runners::NamedTensors>& feeds,
                                       const CalibrationOptions& o) {
    std::vector<runtime::Feeds> rt;
    for (const auto& f : feeds) {
        runtime::Feeds one;
        for (const auto& [name, t] : f) one[name] = ops::RtValue::of(t);
        rt.push_back(std::move(one));
    }
    *options_.emulation.int8_scales = emu::calibrate(model_, int8_nodes(), rt, o);
    return *options_.emulation.int8_scales;
}

void EmuRunner::set_int8_scales(ScaleTable scales) {
    for (const ir::Node* n : int8_nodes())
        for (const auto& name : int8_activation_inputs(*n))
            if (!scales.count(name))
                throw Error(ErrorKind::kInvalidInput,
                            "the INT8 calibration scales have no entry for '" + name +
                                "', an input of INT8 node '" + n->name + "' (" + n->op_type +
                                "); delete the calibration cache to recalibrate");
    *options_.emulation.int8_scales = std::move(scales);
}

std::vector<runners::TensorMeta> EmuRunner::input_metadata() const {
    return runners::graph_input_metadata(*model_.graph);
}

runners::NamedTensors EmuRunner::infer(const std::map<std::string, Tensor>& feeds) {
    return run(feeds, nullptr);
}

runners::NamedTensors EmuRunner::infer_streaming(const std::map<std::string, Tensor>& feeds,
                                                 runners::TensorSink& sink) {
    runners::SinkHook hook(sink);
    return run(feeds, &hook);
}

runners::NamedTensors EmuRunner::run(const std::map<std::string, Tensor>& feeds,
                                     runtime::NodeHook* hook) {
    evidence_->clear();
    rounded_->next_run();
    runtime::Feeds rt;
    for (const auto& [name, t] : feeds) rt[name] = ops::RtValue::of(t);
    return runners::run_session(*session_, rt, hook, &last_time_);
}

}  // namespace pg::emu
