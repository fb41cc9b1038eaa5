// Layer-wise pairs when at least one runner can only mark outputs: the marking runner is re-run
// once per group of wanted tensors; groups are sized (from a sizing run of a streaming runner)
// to fit half the memory budget.
#include <set>

#include "base/error.h"
#include "base/log.h"
#include "layerwise/layerwise.h"

namespace pg::layerwise {

namespace {

using runners::Runner;
using Feeds = std::map<std::string, Tensor>;
using Groups = std::vector<std::vector<std::string>>;

struct SizeSink : runners::TensorSink {
    const std::set<std::string>& wanted;
    std::map<std::string, uint64_t> bytes;
    explicit SizeSink(const std::set<std::string>& w) : wanted(w) {}
    void on_tensor(const std::string&, const std::string& name, const Tensor& t) override {
        if (wanted.count(name)) bytes[name] = t.nbytes();
    }
};

// Greedy partition in order; `size_of` unknown -> count-based groups of 32.
Groups plan_groups(const std::vector<std::string>& names,
                   const std::map<std::string, uint64_t>* sizes, uint64_t cap) {
    Groups g(1);
    uint64_t held = 0;
    for (const auto& n : names) {
        const uint64_t b = sizes ? (sizes->count(n) ? sizes->at(n) : 0) : 0;
        const bool full = sizes ? (held + b > cap && !g.back().empty()) : g.back().size() >= 32;
        if (full) {
            g.emplace_back();
            held = 0;
        }
        g.back().push_back(n);
        held += b;
    }
    if (g.back().empty()) g.pop_back();
    return g;
}

std::unique_ptr<Runner> marked(const Runner& r, const std::vector<std::string>& names) {
    auto m = r.with_outputs(names);
    if (!m)
        throw Error(ErrorKind::kUnsupported,
                    "runner " + r.name() + " can neither stream nor mark intermediate tensors");
    return m;
}

std::map<std::string, Tensor> fetch(const Runner& r, const std::vector<std::string>& names,
                                    const Feeds& feeds) {
    auto m = marked(r, names);
    std::map<std::string, Tensor> out;
    for (auto& [n, t] : m->infer(feeds)) out[n] = std::move(t);
    return out;
}

// The streaming side pairs each wanted tensor with the marker's, fetching groups on demand.
struct LazyGroupSink : runners::TensorSink {
    const Runner& marker;
    const Feeds& feeds;
    const Groups& groups;
    std::map<std::string, size_t> group_of;
    size_t current = SIZE_MAX;
    std::map<std::string, Tensor> held;
    bool streamer_is_a;
    PairSink& out;
    Stats& stats;
    LazyGroupSink(const Runner& m, const Feeds& f, const Groups& g, bool a, PairSink& o, Stats& s)
        : marker(m), feeds(f), groups(g), streamer_is_a(a), out(o), stats(s) {
        for (size_t i = 0; i < g.size(); ++i)
            for (const auto& n : g[i]) group_of[n] = i;
    }
    void on_tensor(const std::string& producer, const std::string& name, const Tensor& t) override {
        auto it = group_of.find(name);
        if (it == group_of.end()) return;
        if (it->second != current) {
            held.clear();
            held = fetch(marker, groups[it->second], feeds);
            current = it->second;
            ++stats.groups;
        }
        auto h = held.find(name);
        if (h == held.end()) return stats.missing.push_back(name);
        if (streamer_is_a)
            out.on_pair(producer, name, t, h->second);
        else
            out.on_pair(producer, name, h->second, t);
        held.erase(h);
        ++stats.pairs;
    }
};

Stats both_marking(Runner& a, Runner& b, const Feeds& feeds, const Options& o, PairSink& sink) {
    Stats stats;
    for (const auto& g : plan_groups(o.tensors, nullptr, 0)) {
        auto ta = fetch(a, g, feeds);
        auto tb = fetch(b, g, feeds);
        stats.groups += 2;
        for (const auto& n : g) {
            if (!ta.count(n) || !tb.count(n)) {
                stats.missing.push_back(n);
                continue;
            }
            sink.on_pair("", n, ta[n], tb[n]);
            ++stats.pairs;
        }
    }
    return stats;
}

}  // namespace

Stats compare_marked(Runner& a, Runner& b, const Feeds& feeds, const Options& o, PairSink& sink) {
    if (!a.can_stream() && !b.can_stream()) return both_marking(a, b, feeds, o, sink);
    Runner& streamer = a.can_stream() ? a : b;
    Runner& marker = a.can_stream() ? b : a;
    const std::set<std::string> wanted(o.tensors.begin(), o.tensors.end());
    SizeSink sizes(wanted);
    streamer.infer_streaming(feeds, sizes);
    const Groups groups = plan_groups(o.tensors, &sizes.bytes, o.memory_budget / 2);
    log_verbose("Layer-wise: {} tensors in {} group(s) for {}", o.tensors.size(), groups.size(),
                marker.name());
    Stats stats;
    LazyGroupSink s(marker, feeds, groups, &streamer == &a, sink, stats);
    streamer.infer_streaming(feeds, s);
    return stats;
}

}  // namespace pg::layerwise
