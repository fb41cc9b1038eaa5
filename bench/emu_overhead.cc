// Benchmark of the precision emulator: `--emu --fp16` against `--ref` on the zoo models (same
// inputs, 2 threads, median of 5 after a warm-up). Target: emulation costs at most 1.3x the
// reference time. Exits 1 when a model misses it.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>

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
            for (uint64_t i = 0; i < t.numel(); ++i) reinterpret_cast<float*>(t.mutable_bytes())[i] = u(rng);
        feeds[m.name] = t;
    }
    return feeds;
}

double median_ms(pg::runners::Runner& r, const std::map<std::string, pg::Tensor>& feeds) {
    r.infer(feeds);
    std::vector<double> t;
    for (int i = 0; i < 5; ++i) {
        const auto start = std::chrono::steady_clock::now();
        r.infer(feeds);
        t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(t.begin(), t.end());
    return t[2];
}

bool bench(const char* name, const pg::ir::Model& m) {
    pg::runners::RefRunnerOptions ro;
    ro.session.threads = 2;
    pg::runners::RefRunner ref(m, ro);
    pg::emu::EmuRunnerOptions eo;
    eo.session.threads = 2;
    eo.policy.default_precision = pg::emu::Precision::kFP16;
    pg::emu::EmuRunner emu(m, eo);
    const auto feeds = random_feeds(ref);
    const double tr = median_ms(ref, feeds), te = median_ms(emu, feeds);
    const bool ok = te <= 1.3 * tr;
    std::printf("%-22s | ref %8.2f ms | emu --fp16 %8.2f ms | x%.2f (target <= 1.3) | %s\n", name, tr, te, te / tr,
                ok ? "ok" : "MISSED");
    return ok;
}

}  // namespace

int main() {
    bool ok = true;
    ok &= bench("zoo_resnet_style", *pg::zoo::resnet_style());
    ok &= bench("zoo_mobilenet_style", *pg::zoo::mobilenet_style());
    ok &= bench("zoo_transformer", *pg::zoo::transformer_encoder());
    ok &= bench("zoo_lstm", *pg::zoo::lstm_model());
    return ok ? 0 : 1;
}
