// Benchmark of `debug precision`'s search modes on the zoo's planted-overflow model (210 nodes,
// two planted FP16 overflow points, tools/zoo/zoo.h) with the in-process check (--fp16, atol =
// rtol = 1e-2, one random feed in [0, 1), 2 threads): model evaluations and wall time (median of
// 3 searches; minimize includes its ranking run) of minimize, bisect and linear, forward and
// reverse. Targets: minimize returns exactly the four planted nodes in fewer than 40
// evaluations, and every mode's answer contains them. Exits 1 when one is missed.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <random>
#include <set>

#include "base/log.h"
#include "debug/precision_check.h"
#include "debug/search.h"
#include "zoo/zoo.h"

namespace {

using pg::debug::SearchResult;

pg::data::FeedList random_feed(const pg::ir::Model& m) {
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    pg::runners::NamedTensors feed;
    for (const auto& meta : pg::runners::graph_input_metadata(*m.graph)) {
        std::vector<int64_t> dims;
        for (const auto& d : *meta.shape) dims.push_back(d.value.value_or(1));
        pg::Tensor t = pg::Tensor::zeros(meta.dtype, dims);
        for (uint64_t i = 0; i < t.numel(); ++i)
            reinterpret_cast<float*>(t.mutable_bytes())[i] = u(rng);
        feed.emplace_back(meta.name, t);
    }
    return {feed};
}

bool contains_planted(const std::vector<std::string>& nodes) {
    const std::set<std::string> s(nodes.begin(), nodes.end());
    for (const auto& p : pg::zoo::planted_node_names())
        if (!s.count(p)) return false;
    return true;
}

bool bench(const char* mode, const std::function<SearchResult()>& run, bool exact) {
    std::vector<double> ms;
    SearchResult r;
    for (int i = 0; i < 3; ++i) {
        const auto start = std::chrono::steady_clock::now();
        r = run();
        ms.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count());
    }
    std::sort(ms.begin(), ms.end());
    bool ok = r.passed && contains_planted(r.fp32_nodes);
    if (exact) ok = ok && r.fp32_nodes.size() == 4 && r.evaluations < 40;
    std::printf("planted_210 | %-16s | %4zu evaluations | %4zu fp32 nodes | %9.1f ms | %s\n", mode,
                r.evaluations, r.fp32_nodes.size(), ms[1], ok ? "ok" : "MISSED");
    return ok;
}

}  // namespace

int main() {
    namespace d = pg::debug;
    pg::logger().set_threshold(pg::Severity::kWarning);
    auto model = pg::zoo::planted_overflow_model();
    pg::emu::EmuRunnerOptions base;
    base.session.threads = 2;
    base.policy.default_precision = pg::emu::Precision::kFP16;
    pg::compare::CompareOptions cmp;
    cmp.atol = {pg::compare::make_number(1e-2), {}};
    cmp.rtol = {pg::compare::make_number(1e-2), {}};
    d::PrecisionCheck check(*model, random_feed(*model), base, cmp);
    const auto fn = [&check](const d::NodeSet& s) { return check(s); };
    const auto& topo = check.candidates();
    bool ok = true;
    ok &= bench(
        "minimize", [&] { return d::minimize(check.ranked_candidates(), fn); }, true);
    for (const auto dir : {d::Direction::kForward, d::Direction::kReverse}) {
        const char* side = dir == d::Direction::kForward ? "forward" : "reverse";
        ok &= bench((std::string("bisect ") + side).c_str(),
                    [&] { return d::bisect(topo, dir, fn); }, false);
        ok &= bench((std::string("linear ") + side).c_str(),
                    [&] { return d::linear(topo, dir, fn); }, false);
    }
    return ok ? 0 : 1;
}
