#include "runners/marked_outputs.h"

#include <unordered_map>
#include <unordered_set>

#include "base/error.h"

namespace pg::runners {

namespace {

// Keeps the tensors a streaming run produces under the wanted names.
class KeepNamed : public TensorSink {
  public:
    explicit KeepNamed(const std::vector<std::string>& names) : wanted_(names.begin(), names.end()) {}
    void on_tensor(const std::string&, const std::string& name, const Tensor& t) override {
        if (wanted_.count(name)) kept_.insert_or_assign(name, t);
    }
    std::unordered_map<std::string, Tensor>& kept() { return kept_; }

  private:
    std::unordered_set<std::string> wanted_;
    std::unordered_map<std::string, Tensor> kept_;
};

// A streaming runner seen with the chosen tensors as its outputs.
class StreamedOutputs : public Runner {
  public:
    StreamedOutputs(Runner& inner, std::vector<std::string> names)
        : inner_(inner), names_(std::move(names)) {}
    const std::string& name() const override { return inner_.name(); }
    std::vector<TensorMeta> input_metadata() const override { return inner_.input_metadata(); }
    double last_inference_time() const override { return inner_.last_inference_time(); }

    NamedTensors infer(const std::map<std::string, Tensor>& feeds) override {
        KeepNamed sink(names_);
        for (auto& [name, t] : inner_.infer_streaming(feeds, sink))
            if (!sink.kept().count(name)) sink.on_tensor("", name, t);
        NamedTensors out;
        for (const std::string& n : names_) {
            auto it = sink.kept().find(n);
            if (it != sink.kept().end()) out.emplace_back(n, std::move(it->second));
        }
        return out;
    }

  private:
    Runner& inner_;
    std::vector<std::string> names_;
};

}  // namespace

std::unique_ptr<Runner> with_marked_outputs(Runner& runner, const std::vector<std::string>& names) {
    if (auto marked = runner.with_outputs(names)) return marked;
    if (runner.can_stream()) return std::make_unique<StreamedOutputs>(runner, names);
    throw Error(ErrorKind::kUnsupported,
                "runner " + runner.name() + " can neither mark nor stream intermediate tensors");
}

}  // namespace pg::runners
