// Benchmark of `polygraph debug reduce` on zoo::planted_overflow_model() (210 nodes, two planted
// FP16 overflow points) with the in-process check (--fp16, atol = rtol = 1e-2) and with an
// external check (--check polygraph run ... --ref --emu --fp16, one process per evaluation):
// model evaluations (iterations, the original model's check included) and wall time of each
// --mode, median of 3 runs of the real binary. Target: both modes reduce to at most 3 nodes. Exits
// 1 when a target is missed. Usage: bench_debug_reduce [--polygraph PATH] [--keep DIR]
// (--keep writes the model and reduced models to DIR instead of a temporary folder).
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
    nlohmann::json result;
};

// Runs `cmd` through the shell, capturing stdout (the --json result).
Measure run_once(const std::string& cmd) {
    Measure m;
    const auto start = std::chrono::steady_clock::now();
    FILE* p = popen((cmd + " 2>/dev/null").c_str(), "r");
    if (!p) return m;
    std::string out;
    char buf[4096];
    for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    const int rc = pclose(p);
    m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    m.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : 128;
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
    std::printf("%-13s %6s %12s %10s %8s %s\n", "mode", "nodes", "evaluations", "wall_s", "reduced",
                "target (<= 3 nodes)");
    bool ok = true;
    const std::string tol = " --atol 1e-2 --rtol 1e-2";
    const std::string check = " --check " + polygraph +
                              " run polygraph_debug.onnx --ref --emu --fp16 --load-inputs "
                              "polygraph_debug_inputs.json" +
                              tol;
    for (const bool external : {false, true})
        for (const std::string mode : {"bisect", "linear"}) {
            const std::string label = mode + (external ? "+check" : "");
            const std::string out = (dir / ("reduced_" + label + ".onnx")).string();
            const Measure r =
                median_of_3(polygraph + " debug reduce " + model + " --fp16" + tol +
                            " --json --mode " + mode + " -o " + out + (external ? check : ""));
            const bool valid =
                r.status == 0 && r.result.is_object() && r.result.contains("num_nodes");
            const int reduced = valid ? r.result["num_nodes"].get<int>() : -1;
            const int evals = valid ? r.result["evaluations"].get<int>() : -1;
            const bool hit = valid && reduced >= 1 && reduced <= 3;
            ok = ok && hit;
            std::printf("%-13s %6zu %12d %10.3f %8d %s\n", label.c_str(), nodes, evals, r.seconds,
                        reduced, hit ? "ok" : "MISSED");
        }
    if (keep.empty()) fs::remove_all(dir);
    return ok ? 0 : 1;
}
