// ReferenceValues of debug/subgraph.h: the reference run of the original model per sample.
#include <set>

#include "base/error.h"
#include "debug/subgraph.h"
#include "ir/graph.h"
#include "runners/ref_runner.h"

namespace pg::debug {

namespace {

void collect_reads(const ir::Graph& main, const ir::Graph& g, std::set<std::string>& names) {
    for (const auto& n : g.nodes()) {
        for (const ir::Value* in : n->inputs())
            if (in && in->graph() == &main && !in->is_initializer()) names.insert(in->name());
        for (const ir::Graph* sub : n->subgraphs()) collect_reads(main, *sub, names);
    }
}

// Keeps the streamed tensors whose names are in `keep`.
class KeepSink : public runners::TensorSink {
  public:
    KeepSink(const std::set<std::string>& keep, std::map<std::string, Tensor>& out)
        : keep_(keep), out_(out) {}
    void on_tensor(const std::string&, const std::string& name, const Tensor& t) override {
        if (keep_.count(name)) out_.insert_or_assign(name, t);
    }

  private:
    const std::set<std::string>& keep_;
    std::map<std::string, Tensor>& out_;
};

}  // namespace

ReferenceValues::ReferenceValues(const ir::Model& model, const data::FeedList& feeds,
                                 const runtime::SessionOptions& session) {
    std::set<std::string> keep;
    collect_reads(*model.graph, *model.graph, keep);
    for (const ir::Value* v : model.graph->outputs()) keep.insert(v->name());
    runners::RefRunnerOptions o;
    o.session = session;
    runners::RefRunner ref(model, o);
    runner_ = ref.name();
    for (const auto& feed : feeds) {
        std::map<std::string, Tensor> values(feed.begin(), feed.end());
        KeepSink sink(keep, values);
        const auto outs =
            ref.infer_streaming(std::map<std::string, Tensor>(feed.begin(), feed.end()), sink);
        for (const auto& [name, t] : outs) values.insert_or_assign(name, t);
        samples_.push_back(std::move(values));
    }
}

ReferenceValues::ReferenceValues(std::vector<std::map<std::string, Tensor>> samples,
                                 std::string runner)
    : samples_(std::move(samples)), runner_(std::move(runner)) {}

const Tensor* ReferenceValues::find(size_t i, const std::string& name) const {
    if (i >= samples_.size()) return nullptr;
    auto it = samples_[i].find(name);
    return it == samples_[i].end() ? nullptr : &it->second;
}

std::optional<passes::TensorSpec> ReferenceValues::spec(const std::string& name) const {
    if (samples_.empty()) return std::nullopt;
    const Tensor* first = find(0, name);
    if (!first) return std::nullopt;
    const auto& dims = first->dims();
    ir::Shape shape = ir::make_shape(dims);
    bool same_rank = true;
    for (size_t i = 1; i < samples_.size(); ++i) {
        const Tensor* t = find(i, name);
        if (!t) return std::nullopt;
        if (t->dims().size() != dims.size()) {
            same_rank = false;
            continue;
        }
        for (size_t k = 0; k < dims.size(); ++k)
            if (t->dims()[k] != dims[k])
                shape[k] = ir::Dim::symbolic(name + "_d" + std::to_string(k));
    }
    passes::TensorSpec s{name, first->dtype(), std::nullopt};
    if (same_rank) s.shape = std::move(shape);
    return s;
}

data::FeedList ReferenceValues::feeds_for(const ir::Model& m) const {
    data::FeedList out;
    for (size_t i = 0; i < samples_.size(); ++i) {
        runners::NamedTensors feed;
        for (const ir::Value* v : m.graph->inputs()) {
            if (v->is_initializer()) continue;
            const Tensor* t = find(i, v->name());
            if (!t)
                throw Error(ErrorKind::kInternal,
                            "debug reduce: no reference value for input '" + v->name() + "'");
            feed.emplace_back(v->name(), *t);
        }
        out.push_back(std::move(feed));
    }
    return out;
}

data::RunResults ReferenceValues::outputs_for(const ir::Model& m) const {
    data::RunnerResults rr{runner_, {}};
    for (size_t i = 0; i < samples_.size(); ++i) {
        data::IterationResult it{{}, std::nullopt, runner_};
        for (const ir::Value* v : m.graph->outputs()) {
            const Tensor* t = find(i, v->name());
            if (!t)
                throw Error(ErrorKind::kInternal,
                            "debug reduce: no reference value for output '" + v->name() + "'");
            it.outputs.emplace_back(v->name(), *t);
        }
        rr.iterations.push_back(std::move(it));
    }
    return data::RunResults{{std::move(rr)}};
}

}  // namespace pg::debug
