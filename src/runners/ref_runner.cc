#include "runners/ref_runner.h"

#include <chrono>

#include "base/error.h"

namespace pg::runners {

std::vector<TensorMeta> graph_input_metadata(const ir::Graph& g) {
    std::vector<TensorMeta> out;
    for (const ir::Value* v : g.inputs()) {
        if (v->is_initializer()) continue;
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

RefRunner::RefRunner(const ir::Model& model, runtime::SessionOptions options)
    : model_(model), session_(model, options), name_(make_runner_name("ref-runner")) {}

std::vector<TensorMeta> RefRunner::input_metadata() const { return graph_input_metadata(*model_.graph); }

NamedTensors RefRunner::infer(const std::map<std::string, Tensor>& feeds) {
    runtime::Feeds rt;
    for (const auto& [name, t] : feeds) rt[name] = ops::RtValue::of(t);
    const auto start = std::chrono::steady_clock::now();
    auto results = session_.run(rt);
    last_time_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    NamedTensors out;
    for (auto& [name, v] : results) {
        if (!v.is_tensor())
            throw Error(ErrorKind::kUnsupported, "output '" + name + "' is a sequence or optional; only tensor outputs can be compared");
        out.emplace_back(name, std::move(v.tensor()));
    }
    return out;
}

}  // namespace pg::runners
