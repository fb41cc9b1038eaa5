// Benchmark: loading a model with 1 GiB of external initializers (16 x 64 MiB) and running
// `polygraph inspect model` on it. Each load runs in a fresh child process (this binary
// re-executed with --load-only) so wall time and peak RSS (wait4 ru_maxrss) belong to the load
// alone. Prints one table line per case; exits 1 when a target is missed.
// Usage: bench_load_external_data [--polygraph PATH] [--keep]
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "base/error.h"
#include "ir/builder.h"
#include "onnx/model_io.h"

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kTensors = 16;
constexpr int64_t kFloatsPerTensor = int64_t{16} << 20;  // 64 MiB of float32
constexpr double kTargetSeconds = 2.0;
constexpr double kTargetMiB = 1.2 * 1024;
constexpr int kRepeats = 3;

struct Measure {
    double seconds = 0;
    double peak_mib = 0;
    bool ok = true;
};

// x -> Add(w0) -> Add(w1) -> ... -> Add(w15); the 16 initializers share one buffer in memory.
std::unique_ptr<pg::ir::Model> big_model() {
    auto m = pg::ir::new_model(17, "load_1GiB_external");
    pg::ir::GraphBuilder b(*m->graph);
    pg::ir::Value* v = b.input("x", pg::DataType::kFloat32, std::vector<int64_t>{kFloatsPerTensor});
    const pg::Tensor w = pg::Tensor::zeros(pg::DataType::kFloat32, {kFloatsPerTensor});
    for (int k = 0; k < kTensors; ++k) v = b.op("Add", {v, b.constant("w" + std::to_string(k), w)});
    b.output(v, pg::DataType::kFloat32, std::vector<int64_t>{kFloatsPerTensor});
    return m;
}

std::string write_model(const std::string& dir) {
    pg::onnx::SaveOptions opts;
    opts.external_data_path = "weights.bin";
    const std::string path = dir + "/model.onnx";
    pg::onnx::save_model(*big_model(), path, opts);
    return path;
}

// Runs argv in a child (output discarded); wall time and the child's own peak RSS.
Measure run_child(const std::vector<std::string>& argv) {
    std::fflush(stdout);  // or the child's freopen would print our buffered lines again
    const auto start = Clock::now();
    const pid_t pid = fork();
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stdout)) _exit(126);
        std::vector<char*> args;
        for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        execv(args[0], args.data());
        _exit(127);
    }
    int status = 0;
    struct rusage ru {};
    wait4(pid, &status, 0, &ru);
    Measure m;
    m.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    m.peak_mib = static_cast<double>(ru.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB
    m.ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    return m;
}

// Median time and largest peak RSS of kRepeats runs.
Measure repeat(const std::vector<std::string>& argv) {
    std::vector<Measure> runs;
    for (int k = 0; k < kRepeats; ++k) runs.push_back(run_child(argv));
    std::sort(runs.begin(), runs.end(), [](auto& a, auto& b) { return a.seconds < b.seconds; });
    Measure out = runs[kRepeats / 2];
    for (const auto& r : runs) {
        out.peak_mib = std::max(out.peak_mib, r.peak_mib);
        out.ok = out.ok && r.ok;
    }
    return out;
}

bool report(const char* name, const Measure& m) {
    const bool met = m.ok && m.seconds < kTargetSeconds && m.peak_mib < kTargetMiB;
    std::printf("%s: time %.3f s, peak RSS %.0f MiB (target < %.0f s, < %.1f GiB)%s\n", name,
                m.seconds, m.peak_mib, kTargetSeconds, kTargetMiB / 1024,
                !m.ok ? "  FAILED TO RUN"
                : met ? ""
                      : "  TARGET MISSED");
    return met;
}

// Child mode: load once; the parent measures the whole process.
int load_only(const std::string& path) {
    auto model = pg::onnx::load_model(path);
    return model->graph->initializers().size() == kTensors ? 0 : 1;
}

std::string arg_after(int argc, char** argv, const std::string& flag, const std::string& fallback) {
    for (int i = 1; i + 1 < argc; ++i)
        if (argv[i] == flag) return argv[i + 1];
    return fallback;
}

int run_bench(const std::string& self, const std::string& polygraph, bool keep) {
    char tmpl[] = "/tmp/pg_bench_XXXXXX";
    if (!mkdtemp(tmpl)) throw pg::Error(pg::ErrorKind::kIo, "cannot create a folder in /tmp");
    const std::string dir = tmpl;
    const std::string model = write_model(dir);
    bool met = report("load_1GiB_external", repeat({self, "--load-only", model}));
    met = report("inspect_1GiB_external", repeat({polygraph, "inspect", "model", model})) && met;
    if (keep)
        std::printf("kept %s\n", dir.c_str());
    else
        std::filesystem::remove_all(dir);
    return met ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        const std::string load = arg_after(argc, argv, "--load-only", "");
        if (!load.empty()) return load_only(load);
        const std::string self = std::filesystem::canonical("/proc/self/exe").string();
        const bool keep = argc > 1 && std::string(argv[argc - 1]) == "--keep";
        return run_bench(self, arg_after(argc, argv, "--polygraph", PG_BINARY), keep);
    } catch (const pg::Error& e) {
        std::fprintf(stderr, "bench_load_external_data: %s\n", e.what());
        return pg::exit_code_for(e.kind());
    }
}
