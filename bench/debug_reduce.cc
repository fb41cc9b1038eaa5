// Benchmark of `polygraph debug reduce` on zoo::planted_overflow_model() (210 nodes, two planted
// FP16 overflow points) with the in-process check (--fp16, atol = rtol = 1e-2) and with an
// external check (--check polygraph run ... --ref --emu --fp16, one process per evaluation):
// model evaluations (iterations, the original model's check included) and wall time of each
// --mode, median of 3 runs of the real binary; the "+ondemand" rows force on-demand reference
// values (--memory-budget 1K: every candidate re-runs the reference per sample; reruns column).
// Then peak RSS (the child's ru_maxrss) of the kept and on-demand modes on a wider planted model
// (width 65536, 3 samples: ~160 MiB of intermediate tensors; on-demand with --memory-budget 16M).
// Target: every mode reduces to at most 3 nodes, and on-demand stays below half the kept peak.
// Exits 1 when a target is missed. Usage: bench_debug_reduce [--polygraph PATH] [--keep DIR]
// (--keep writes the model and reduced models to DIR instead of a temporary folder).
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "onnx/model_io.h"
#include "zoo/zoo.h"

namespace {

struct Measure {
    double seconds = 0;
    int status = -1;
    long peak_kib = 0;  // ru_maxrss of the shell running `cmd` (the binary is exec'd in place)
    nlohmann::json result;
};

// Runs `exec cmd` through the shell, capturing stdout (the --json result) and the peak RSS.
Measure run_once(const std::string& cmd) {
    Measure m;
    int fds[2];
    if (pipe(fds) != 0) return m;
    const auto start = std::chrono::steady_clock::now();
    const pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        execl("/bin/sh", "sh", "-c", ("exec " + cmd + " 2>/dev/null").c_str(), (char*)nullptr);
        _exit(127);
    }
    close(fds[1]);
    std::string out;
    char buf[4096];
    for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, n);
    close(fds[0]);
    int rc = 0;
    rusage ru{};
    if (pid < 0 || wait4(pid, &rc, 0, &ru) != pid) return m;
    m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    m.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : 128;
    m.peak_kib = ru.ru_maxrss;
    m.result = nlohmann::json::parse(out, nullptr, false);
    return m;
}

Measure median_of_3(const std::string& cmd) {
    std::vector<Measure> ms;
    for (int i = 0; i < 3; ++i) ms.push_back(run_once(cmd));
    std::sort(ms.begin(), ms.end(),
              [](const Measure& a, const Measure& b) { return a.seconds < b.seconds; });
    return ms[1];
}

// Peak RSS of bisect on a planted model of width 65536 with 3 samples, kept vs on demand.
bool peak_rss(const std::string& polygraph, const std::filesystem::path& dir) {
    const std::string model = (dir / "planted_wide.onnx").string();
    pg::zoo::PlantedOptions po;
    po.width = 65536;
    pg::onnx::save_model(*pg::zoo::planted_overflow_model(po), model);
    std::printf("\nplanted width %lld, --iterations 3, bisect:\n",
                static_cast<long long>(po.width));
    std::printf("%-22s %11s %12s %8s %10s %12s %8s\n", "reference values", "mode", "evaluations",
                "reruns", "wall_s", "peak_rss_MiB", "reduced");
    std::vector<std::string> files;
    long kept_peak = 0, lean_peak = 0;
    bool ok = true;
    for (const std::string budget : {"", "16M"}) {
        const std::string out = (dir / ("wide" + budget + ".onnx")).string();
        const Measure r = run_once(polygraph + " debug reduce " + model +
                                   " --fp16 --atol 1e-2 --rtol 1e-2 --iterations 3 --json -o " +
                                   out + (budget.empty() ? "" : " --memory-budget " + budget));
        const bool valid = r.status == 0 && r.result.is_object() && r.result.contains("num_nodes");
        ok = ok && valid;
        (budget.empty() ? kept_peak : lean_peak) = r.peak_kib;
        std::printf("%-22s %11s %12d %8d %10.3f %12.1f %8d\n",
                    budget.empty() ? "default budget" : "--memory-budget 16M",
                    valid ? r.result["reference_mode"].get<std::string>().c_str() : "?",
                    valid ? r.result["evaluations"].get<int>() : -1,
                    valid ? r.result["reference_reruns"].get<int>() : -1, r.seconds,
                    static_cast<double>(r.peak_kib) / 1024.0,
                    valid ? r.result["num_nodes"].get<int>() : -1);
    }
    const bool lower = lean_peak > 0 && 2 * lean_peak < kept_peak;
    std::printf("on-demand peak below half the kept peak: %s\n", lower ? "ok" : "MISSED");
    return ok && lower;
}

}  // namespace

int main(int argc, char** argv) {
    std::string polygraph = PG_BINARY, keep;
    for (int i = 1; i + 1 < argc; ++i) {
        if (std::string(argv[i]) == "--polygraph") polygraph = argv[i + 1];
        if (std::string(argv[i]) == "--keep") keep = argv[i + 1];
    }
    namespace fs = std::filesystem;
    const fs::path dir =
        keep.empty() ? fs::temp_directory_path() / ("pg_bench_reduce_" + std::to_string(getpid()))
                     : fs::path(keep);
    fs::create_directories(dir);
    const std::string model = (dir / "planted.onnx").string();
    auto m = pg::zoo::planted_overflow_model();
    const size_t nodes = m->graph->nodes().size();
    pg::onnx::save_model(*m, model);
    std::printf("%-16s %6s %12s %8s %10s %8s %s\n", "mode", "nodes", "evaluations", "reruns",
                "wall_s", "reduced", "target (<= 3 nodes)");
    bool ok = true;
    const std::string tol = " --atol 1e-2 --rtol 1e-2";
    const std::string check = " --check " + polygraph +
                              " run polygraph_debug.onnx --ref --emu --fp16 --load-inputs "
                              "polygraph_debug_inputs.json" +
                              tol;
    const std::vector<std::string> extras = {"", "+check", "+ondemand"};
    for (const std::string& extra : extras)
        for (const std::string mode : {"bisect", "linear"}) {
            const std::string label = mode + extra;
            const std::string out = (dir / ("reduced_" + label + ".onnx")).string();
            const std::string flags = extra == "+check"      ? check
                                      : extra == "+ondemand" ? " --memory-budget 1K"
                                                             : "";
            const Measure r = median_of_3(polygraph + " debug reduce " + model + " --fp16" + tol +
                                          " --json --mode " + mode + " -o " + out + flags);
            const bool valid =
                r.status == 0 && r.result.is_object() && r.result.contains("num_nodes");
            const int reduced = valid ? r.result["num_nodes"].get<int>() : -1;
            const int evals = valid ? r.result["evaluations"].get<int>() : -1;
            const int reruns = valid ? r.result.value("reference_reruns", -1) : -1;
            const bool hit = valid && reduced >= 1 && reduced <= 3;
            ok = ok && hit;
            std::printf("%-16s %6zu %12d %8d %10.3f %8d %s\n", label.c_str(), nodes, evals, reruns,
                        r.seconds, reduced, hit ? "ok" : "MISSED");
        }
    ok = peak_rss(polygraph, dir) && ok;
    if (keep.empty()) fs::remove_all(dir);
    return ok ? 0 : 1;
}
