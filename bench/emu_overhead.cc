// Benchmark of the precision emulator: `--emu --fp16` against `--ref` on the zoo models (same
// inputs, 2 threads of one shared pool; the two runners alternate run by run, 15 runs each or more
// for at least 300 ms, after a warm-up of each; medians), so that the shared machine's drift, which
// moves separate blocks of runs by 10-50 %, falls on both. Target: emulation costs at most 1.3x the
// reference time. Exits 1 when a model misses it.
//
// Usage: bench_emu_overhead [--only NAME] (NAME: one of the four below, e.g. zoo_mobilenet_style)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <utility>

#include "base/thread_pool.h"
#include "emu/emu_runner.h"
#include "runners/ref_runner.h"
#include "zoo/zoo.h"

namespace {

std::map<std::string, pg::Tensor> random_feeds(const pg::runners::Runner& r) {
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    std::map<std::string, pg::Tensor> feeds;
    for (const auto& m : r.input_metadata()) {
        std::vector<int64_t> dims;
        for (const auto& d : *m.shape) dims.push_back(d.value.value_or(1));
        pg::Tensor t = pg::Tensor::zeros(m.dtype, dims);
        if (m.dtype == pg::DataType::kFloat32)
            for (uint64_t i = 0; i < t.numel(); ++i)
                reinterpret_cast<float*>(t.mutable_bytes())[i] = u(rng);
        feeds[m.name] = t;
    }
    return feeds;
}

double median(std::vector<double> t) {
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

double time_ms(pg::runners::Runner& r, const std::map<std::string, pg::Tensor>& feeds) {
    const auto start = std::chrono::steady_clock::now();
    r.infer(feeds);
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
        .count();
}

// Medians of a's and b's times, the two run in alternation (see the file comment).
std::pair<double, double> alternating_ms(pg::runners::Runner& a, pg::runners::Runner& b,
                                         const std::map<std::string, pg::Tensor>& feeds) {
    constexpr int kMinRuns = 15;
    constexpr double kMinMs = 300.0;
    a.infer(feeds);
    b.infer(feeds);
    std::vector<double> ta, tb;
    double spent = 0;
    for (int i = 0; i < kMinRuns || (spent < kMinMs && i < 50 * kMinRuns); ++i) {
        ta.push_back(time_ms(a, feeds));
        tb.push_back(time_ms(b, feeds));
        spent += ta.back() + tb.back();
    }
    return {median(ta), median(tb)};
}

bool bench(const char* name, const pg::ir::Model& m) {
    // One pool for both runners: with a pool each, the runner that has just run leaves its
    // worker spinning beside the other's next run.
    const auto pool = std::make_shared<pg::ThreadPool>(2);
    pg::runners::RefRunnerOptions ro;
    ro.session.pool = pool;
    pg::runners::RefRunner ref(m, ro);
    pg::emu::EmuRunnerOptions eo;
    eo.session.pool = pool;
    eo.policy.default_precision = pg::emu::Precision::kFP16;
    pg::emu::EmuRunner emu(m, eo);
    const auto feeds = random_feeds(ref);
    const auto [tr, te] = alternating_ms(ref, emu, feeds);
    const bool ok = te <= 1.3 * tr;
    std::printf("%-22s | ref %8.2f ms | emu --fp16 %8.2f ms | x%.2f (target <= 1.3) | %s\n", name,
                tr, te, te / tr, ok ? "ok" : "MISSED");
    return ok;
}

}  // namespace

int main(int argc, char** argv) {
    const std::string only = argc == 3 && std::string(argv[1]) == "--only" ? argv[2] : "";
    if (argc != 1 && only.empty()) {
        std::fprintf(stderr, "usage: bench_emu_overhead [--only NAME]\n");
        return 2;
    }
    const std::pair<const char*, std::unique_ptr<pg::ir::Model> (*)()> models[] = {
        {"zoo_resnet_style", [] { return pg::zoo::resnet_style(); }},
        {"zoo_mobilenet_style", [] { return pg::zoo::mobilenet_style(); }},
        {"zoo_transformer", [] { return pg::zoo::transformer_encoder(); }},
        {"zoo_lstm", [] { return pg::zoo::lstm_model(); }}};
    bool ok = true, any = false;
    for (const auto& [name, make] : models)
        if (only.empty() || only == name) ok &= bench(name, *make()), any = true;
    if (!any) std::fprintf(stderr, "bench_emu_overhead: no model named '%s'\n", only.c_str());
    return ok && any ? 0 : 1;
}
