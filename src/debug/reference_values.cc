// ReferenceValues of debug/subgraph.h: the reference run of the original model per sample, its
// values kept under the memory budget or recomputed on demand.
#include <algorithm>
#include <cstdio>
#include <limits>
#include <set>

#include "base/error.h"
#include "base/log.h"
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

// Hands the streamed tensors whose names are in `keep` to `take`.
template <class Take>
class KeepSink : public runners::TensorSink {
  public:
    KeepSink(const std::set<std::string>& keep, Take take) : keep_(keep), take_(take) {}
    void on_tensor(const std::string&, const std::string& name, const Tensor& t) override {
        if (keep_.count(name)) take_(name, t);
    }

  private:
    const std::set<std::string>& keep_;
    Take take_;
};

// "512 B", "3.2 KiB", "407.1 MiB", "unlimited".
std::string bytes_text(uint64_t bytes) {
    if (bytes == std::numeric_limits<uint64_t>::max()) return "unlimited";
    if (bytes < 1024) return std::to_string(bytes) + " B";
    const bool mega = bytes >= 1024 * 1024;
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f %s",
                  static_cast<double>(bytes) / (mega ? 1024.0 * 1024.0 : 1024.0),
                  mega ? "MiB" : "KiB");
    return buf;
}

std::map<std::string, Tensor> as_map(const runners::NamedTensors& feed) {
    return std::map<std::string, Tensor>(feed.begin(), feed.end());
}

}  // namespace

ReferenceValues::ReferenceValues(const ir::Model& model, const data::FeedList& feeds,
                                 const runtime::SessionOptions& session, uint64_t memory_budget) {
    collect_reads(*model.graph, *model.graph, keep_);
    for (const ir::Value* v : model.graph->outputs()) keep_.insert(v->name());
    runners::RefRunnerOptions o;
    o.session = session;
    ref_ = std::make_unique<runners::RefRunner>(model, o);
    runner_ = ref_->name();
    run_all(feeds, memory_budget);
    if (!on_demand_) {
        log_info(
            "debug reduce: keeping the {} of intermediate tensors over {} sample(s) in memory "
            "(within --memory-budget {})",
            bytes_text(recorded_bytes_), feeds.size(), bytes_text(memory_budget));
        return;
    }
    for (const auto& feed : feeds) feeds_.push_back(as_map(feed));
    log_info(
        "debug reduce: on-demand mode: the {} of intermediate tensors over {} sample(s) "
        "exceed --memory-budget {}; each candidate's cut values are recomputed by re-running "
        "the reference per sample (only the tensors it needs are kept)",
        bytes_text(recorded_bytes_), feeds.size(), bytes_text(memory_budget));
}

ReferenceValues::ReferenceValues(std::vector<std::map<std::string, Tensor>> samples,
                                 std::string runner)
    : runner_(std::move(runner)) {
    metas_.resize(samples.size());
    for (size_t i = 0; i < samples.size(); ++i)
        for (const auto& [name, t] : samples[i]) record(i, name, t);
    samples_ = std::move(samples);
}

ReferenceValues::~ReferenceValues() = default;

void ReferenceValues::record(size_t sample, const std::string& name, const Tensor& t) {
    const bool fresh = metas_[sample].insert_or_assign(name, Meta{t.dtype(), t.dims()}).second;
    if (fresh) recorded_bytes_ += t.nbytes();
}

// Records every sample; keeps values until the first one that would exceed `budget`, then
// drops them all (on-demand mode) and only records dtypes and dims for the remaining tensors.
void ReferenceValues::run_all(const data::FeedList& feeds, uint64_t budget) {
    metas_.resize(feeds.size());
    samples_.resize(feeds.size());
    uint64_t kept = 0;
    auto take = [&](size_t i, const std::string& name, const Tensor& t) {
        const bool is_feed = std::any_of(feeds[i].begin(), feeds[i].end(),
                                         [&](const auto& f) { return f.first == name; });
        if (!is_feed) record(i, name, t);
        if (on_demand_) return;
        if (!is_feed && !samples_[i].count(name)) kept += t.nbytes();
        if (kept > budget) {
            on_demand_ = true;
            samples_.assign(feeds.size(), {});
            return;
        }
        samples_[i].insert_or_assign(name, t);
    };
    for (size_t i = 0; i < feeds.size(); ++i) {
        for (const auto& [name, t] : feeds[i]) {
            metas_[i].insert_or_assign(name, Meta{t.dtype(), t.dims()});
            take(i, name, t);
        }
        auto f = [&, i](const std::string& name, const Tensor& t) { take(i, name, t); };
        KeepSink<decltype(f)> sink(keep_, f);
        const auto outs = ref_->infer_streaming(as_map(feeds[i]), sink);
        for (const auto& [name, t] : outs) take(i, name, t);
    }
}

void ReferenceValues::fetch(const std::set<std::string>& names) const {
    if (!on_demand_ || std::includes(cached_.begin(), cached_.end(), names.begin(), names.end()))
        return;
    samples_.assign(feeds_.size(), {});
    cached_.clear();
    ++reruns_;
    for (size_t i = 0; i < feeds_.size(); ++i) {
        Values& values = samples_[i];
        for (const auto& [name, t] : feeds_[i])
            if (names.count(name)) values.insert_or_assign(name, t);
        auto f = [&](const std::string& name, const Tensor& t) {
            values.insert_or_assign(name, t);
        };
        KeepSink<decltype(f)> sink(names, f);
        for (const auto& [name, t] : ref_->infer_streaming(feeds_[i], sink))
            if (names.count(name)) values.insert_or_assign(name, t);
    }
    cached_ = names;
}

void ReferenceValues::fetch_io(const ir::Model& m) const {
    std::set<std::string> names;
    for (const ir::Value* v : m.graph->inputs())
        if (!v->is_initializer()) names.insert(v->name());
    for (const ir::Value* v : m.graph->outputs()) names.insert(v->name());
    fetch(names);
}

const Tensor* ReferenceValues::find(size_t i, const std::string& name) const {
    if (i >= samples_.size()) return nullptr;
    auto it = samples_[i].find(name);
    return it == samples_[i].end() ? nullptr : &it->second;
}

std::optional<passes::TensorSpec> ReferenceValues::spec(const std::string& name) const {
    if (metas_.empty()) return std::nullopt;
    auto first = metas_[0].find(name);
    if (first == metas_[0].end()) return std::nullopt;
    const auto& dims = first->second.dims;
    ir::Shape shape = ir::make_shape(dims);
    bool same_rank = true;
    for (size_t i = 1; i < metas_.size(); ++i) {
        auto it = metas_[i].find(name);
        if (it == metas_[i].end()) return std::nullopt;
        const auto& d = it->second.dims;
        if (d.size() != dims.size()) {
            same_rank = false;
            continue;
        }
        for (size_t k = 0; k < dims.size(); ++k)
            if (d[k] != dims[k]) shape[k] = ir::Dim::symbolic(name + "_d" + std::to_string(k));
    }
    passes::TensorSpec s{name, first->second.dtype, std::nullopt};
    if (same_rank) s.shape = std::move(shape);
    return s;
}

data::FeedList ReferenceValues::feeds_for(const ir::Model& m) const {
    fetch_io(m);
    data::FeedList out;
    for (size_t i = 0; i < num_samples(); ++i) {
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
    fetch_io(m);
    data::RunnerResults rr{runner_, {}};
    for (size_t i = 0; i < num_samples(); ++i) {
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
