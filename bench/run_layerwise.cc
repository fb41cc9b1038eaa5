// Benchmark of `polygraph run`: the cost of layer-wise comparison (--onnx-outputs mark all)
// against the plain run, with two streaming runners (--ref --ref) and with ONNX Runtime under
// --memory-budget 256M, and the wall time of a run on a tiny model. Each case runs the real
// binary in a child process; peak memory is the child's max RSS (wait4). Median of 3 runs.
// Targets: mark all <= 1.5x time and <= 2x memory (streaming); <= 2x memory (ORT, 256M budget);
// tiny model < 50 ms wall. Exits 1 when a target is missed.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "onnx/model_io.h"
#include "zoo/zoo.h"

namespace {

struct Measure {
    double seconds = 0;
    double peak_mib = 0;
    int status = 0;
};

Measure run_once(const std::vector<std::string>& args) {
    std::fflush(stdout);
    const auto start = std::chrono::steady_clock::now();
    pid_t pid = fork();
    if (pid == 0) {
        std::freopen("/dev/null", "w", stdout);
        std::freopen("/dev/null", "w", stderr);
        std::vector<char*> argv;
        for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        execv(argv[0], argv.data());
        _exit(127);
    }
    int status = 0;
    rusage ru{};
    wait4(pid, &status, 0, &ru);
    Measure m;
    m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    m.peak_mib = static_cast<double>(ru.ru_maxrss) / 1024.0;
    m.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
    return m;
}

Measure median_of_3(const std::vector<std::string>& args) {
    std::vector<Measure> ms;
    for (int i = 0; i < 3; ++i) ms.push_back(run_once(args));
    std::sort(ms.begin(), ms.end(),
              [](const Measure& a, const Measure& b) { return a.seconds < b.seconds; });
    Measure med = ms[1];
    for (const auto& m : ms) med.peak_mib = std::max(med.peak_mib, m.peak_mib);
    return med;
}

bool report(const char* name, const Measure& base, const Measure& lw, double max_time,
            double max_mem) {
    const double tr = lw.seconds / base.seconds, mr = lw.peak_mib / base.peak_mib;
    const bool ok =
        (max_time <= 0 || tr <= max_time) && mr <= max_mem && lw.status <= 1 && base.status <= 1;
    std::printf(
        "%-28s | plain %7.3f s %7.1f MiB | mark all %7.3f s %7.1f MiB | time x%.2f mem x%.2f | "
        "%s\n",
        name, base.seconds, base.peak_mib, lw.seconds, lw.peak_mib, tr, mr, ok ? "ok" : "MISSED");
    return ok;
}

}  // namespace

int main(int argc, char** argv) {
    std::string polygraph = PG_BINARY;
    for (int i = 1; i + 1 < argc; ++i)
        if (std::string(argv[i]) == "--polygraph") polygraph = argv[i + 1];
    const std::string dir =
        std::filesystem::temp_directory_path() / ("pg_bench_run_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    pg::zoo::ResNetOptions ro;
    ro.blocks = {3, 4, 6, 3};  // ResNet-34-like: 100+ nodes
    auto model = pg::zoo::resnet_style(ro);
    const std::string m = dir + "/resnet34.onnx";
    pg::onnx::save_model(*model, m);
    std::printf("model: %zu nodes (%s)\n", model->graph->num_nodes(), m.c_str());
    for (int i = 1; i + 1 < argc; ++i)
        if (std::string(argv[i]) == "--save-model") {  // for profiling by hand
            pg::onnx::save_model(*model, argv[i + 1]);
            return 0;
        }
    bool ok = true;
    const std::vector<std::string> two_ref = {polygraph, "run",       m,  "--ref",
                                              "--ref",   "--threads", "1"};
    auto lw_ref = two_ref;
    lw_ref.insert(lw_ref.end(), {"--onnx-outputs", "mark", "all"});
    ok &= report("ref+ref (streaming)", median_of_3(two_ref), median_of_3(lw_ref), 1.5, 2.0);
    const std::vector<std::string> ort = {polygraph, "run",       m,  "--onnxrt",
                                          "--ref",   "--threads", "2"};
    const Measure ort_plain = median_of_3(ort);
    if (ort_plain.status <= 1) {
        auto lw_ort = ort;
        lw_ort.insert(lw_ort.end(), {"--onnx-outputs", "mark", "all", "--memory-budget", "256M"});
        ok &= report("onnxrt+ref, budget 256M", ort_plain, median_of_3(lw_ort), 0, 2.0);
    } else {
        std::printf("onnxrt+ref: ONNX Runtime not available, skipped\n");
    }
    auto tiny = pg::zoo::chain_model(8);
    pg::onnx::save_model(*tiny, dir + "/tiny.onnx");
    const Measure t = median_of_3({polygraph, "run", dir + "/tiny.onnx", "--ref"});
    const bool tiny_ok = t.seconds < 0.05 && t.status == 0;
    std::printf("%-28s | wall %.1f ms (target < 50 ms) | %s\n", "tiny model run --ref",
                t.seconds * 1000, tiny_ok ? "ok" : "MISSED");
    ok &= tiny_ok;
    std::filesystem::remove_all(dir);
    return ok ? 0 : 1;
}
