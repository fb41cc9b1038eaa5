// step_scaling: where a model loses time when it runs on more threads. Two sessions of one model
// (1 thread and N threads) run in alternation in one process, each with per-step timing
// (Session::run_timed); it prints both walls and the steps whose N-thread time is furthest above
// a perfect split of their 1-thread time. The models come from `interpreter_bench --save DIR`.
//
// Usage: step_scaling [--threads N] [--reps N] [--top N] MODEL.onnx...
//   --threads N: the second session's threads (default 2). --reps N: runs per session (default
//   20, after one warm-up each). --top N: steps listed (default 12). Inputs are uniform in
//   [-1, 1) for float32, zero otherwise, with symbolic dims set to 1.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "base/error.h"
#include "ir/graph.h"
#include "onnx/model_io.h"
#include "random_feeds.h"
#include "runtime/session.h"

namespace {

using pg::runtime::Session;
using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

// Per-step times of `reps` runs of each session (alternating) and their walls.
struct Samples {
    std::map<const pg::ir::Node*, std::vector<double>> steps[2];
    std::vector<double> wall[2];
};

Samples sample(Session* sessions[2], const pg::runtime::Feeds& feeds, int reps) {
    Samples s;
    for (int r = -1; r < reps; ++r) {
        for (int i = 0; i < 2; ++i) {
            std::vector<Session::StepTime> times;
            const auto t0 = Clock::now();
            sessions[i]->run_timed(feeds, times);
            const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
            if (r < 0) continue;
            s.wall[i].push_back(ms);
            for (const auto& t : times) s.steps[i][t.node].push_back(t.ms);
        }
    }
    return s;
}

void report(const std::string& path, int threads, int reps, int top) {
    const auto model = pg::onnx::load_model(path);
    pg::runtime::SessionOptions one, many;
    one.threads = 1, many.threads = threads;
    Session s1(*model, one), sn(*model, many);
    Session* sessions[2] = {&s1, &sn};
    const Samples s = sample(sessions, pg::bench::random_feeds(*model), reps);
    struct Row {
        const pg::ir::Node* node;
        double t1, tn;
    };
    std::vector<Row> rows;
    double lost = 0;
    for (const auto& [node, v] : s.steps[0]) {
        const auto it = s.steps[1].find(node);
        if (it == s.steps[1].end()) continue;
        rows.push_back({node, median(v), median(it->second)});
        lost += rows.back().tn - rows.back().t1 / threads;
    }
    auto excess = [&](const Row& r) { return r.tn - r.t1 / threads; };
    std::sort(rows.begin(), rows.end(),
              [&](const Row& a, const Row& b) { return excess(a) > excess(b); });
    const double w1 = median(s.wall[0]), wn = median(s.wall[1]);
    std::printf("%s: 1 thread %.2f ms, %d threads %.2f ms (x%.2f); %.2f ms above a perfect split\n",
                path.c_str(), w1, threads, wn, w1 / wn, lost);
    for (size_t i = 0; i < rows.size() && i < static_cast<size_t>(top); ++i)
        std::printf("  %-18s %-30s %8.3f -> %8.3f ms  x%.2f  +%.3f\n",
                    rows[i].node->op_type.c_str(),
                    std::string(rows[i].node->name).substr(0, 30).c_str(), rows[i].t1, rows[i].tn,
                    rows[i].t1 / rows[i].tn, excess(rows[i]));
    std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
    int threads = 2, reps = 20, top = 12;
    std::vector<std::string> models;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--threads" && i + 1 < argc)
            threads = std::max(2, std::atoi(argv[++i]));
        else if (a == "--reps" && i + 1 < argc)
            reps = std::max(1, std::atoi(argv[++i]));
        else if (a == "--top" && i + 1 < argc)
            top = std::max(0, std::atoi(argv[++i]));
        else
            models.push_back(a);
    }
    if (models.empty()) {
        std::fprintf(stderr, "usage: %s [--threads N] [--reps N] [--top N] MODEL.onnx...\n",
                     argv[0]);
        return 2;
    }
    try {
        for (const std::string& m : models) report(m, threads, reps, top);
    } catch (const pg::Error& e) {
        std::fprintf(stderr, "step_scaling: %s\n", e.what());
        return 1;
    }
    return 0;
}
