#include "runners/ref_runner.h"

#include <set>

#include "runners/session_io.h"

#include "base/error.h"
#include "ir/clone.h"
#include "passes/promote_float64.h"

namespace pg::runners {

std::vector<TensorMeta> graph_input_metadata(const ir::Graph& g) {
    std::vector<TensorMeta> out;
    std::set<const ir::Value*> listed;  // an input listed twice is one input (as Polygraphy's dict)
    for (const ir::Value* v : g.inputs()) {
        if (v->is_initializer() || !listed.insert(v).second) continue;
        TensorMeta m;
        m.name = v->name();
        if (v->type().is_tensor()) {
            m.dtype = v->type().elem_type;
            m.shape = v->type().shape;
        }
        out.push_back(std::move(m));
    }
    return out;
}

namespace {

std::unique_ptr<ir::Model> promoted_copy(const ir::Model& model) {
    auto copy = ir::clone_model(model);
    passes::promote_to_float64(*copy);
    return copy;
}

Tensor widen_feed(const Tensor& t) {
    if (t.dtype() != DataType::kFloat32) return t;
    Tensor out = Tensor::zeros(DataType::kFloat64, t.dims());
    double* dst = reinterpret_cast<double*>(out.mutable_bytes());
    for (uint64_t i = 0; i < t.numel(); ++i) dst[i] = t.data<float>()[i];
    return out;
}

}  // namespace

RefRunner::RefRunner(const ir::Model& model, RefRunnerOptions options)
    : options_(options),
      original_(model),
      promoted_(options.fp64 ? promoted_copy(model) : nullptr),
      model_(promoted_ ? *promoted_ : model),
      session_(model_, options.session),
      fp64_(options.fp64),
      name_(make_runner_name("ref-runner")) {}

std::vector<TensorMeta> RefRunner::input_metadata() const {
    // Callers feed what the original model takes (with fp64, its float32 inputs are widened on
    // the way in; inputs that were float64 already stay float64).
    return graph_input_metadata(*original_.graph);
}

NamedTensors RefRunner::infer(const std::map<std::string, Tensor>& feeds) {
    return run(feeds, nullptr);
}

std::unique_ptr<Runner> RefRunner::for_model(const ir::Model& model) const {
    return std::make_unique<RefRunner>(model, options_);
}

NamedTensors RefRunner::infer_streaming(const std::map<std::string, Tensor>& feeds,
                                        TensorSink& sink) {
    SinkHook hook(sink);
    return run(feeds, &hook);
}

NamedTensors RefRunner::run(const std::map<std::string, Tensor>& feeds, runtime::NodeHook* hook) {
    runtime::Feeds rt;
    for (const auto& [name, t] : feeds) rt[name] = ops::RtValue::of(fp64_ ? widen_feed(t) : t);
    return run_session(session_, rt, hook, &last_time_);
}

}  // namespace pg::runners
