#include "cli/runner_args.h"

#include <algorithm>

#include "base/error.h"
#include "base/log.h"
#include "runners/onnxrt_runner.h"
#include "runners/ref_runner.h"

namespace pg::cli {

namespace {

const std::vector<std::string> kRunnerDests = {"ref", "onnxrt", "trt"};

int threads_arg(const ParsedArgs& a) {
    if (!a.has("threads")) return 0;
    try {
        const int t = std::stoi(a.get("threads"));
        if (t >= 1) return t;
    } catch (const std::exception&) {
    }
    throw Error(ErrorKind::kUsage,
                "--threads expects a positive integer, got '" + a.get("threads") + "'");
}

std::unique_ptr<runners::Runner> make_ref(const ParsedArgs& a, const ir::Model& model) {
    runners::RefRunnerOptions o;
    o.session.threads = threads_arg(a);
    o.fp64 = a.get("ref_precision", "fp32") == "fp64";
    return std::make_unique<runners::RefRunner>(model, o);
}

std::unique_ptr<runners::Runner> make_onnxrt(const ParsedArgs& a, const ir::Model& model,
                                             const std::string& model_path) {
    runners::OnnxRtOptions o;
    o.model = &model;
    o.library = a.get("onnxrt_lib");
    o.intra_op_threads = threads_arg(a);
    if (a.has("ort_opt_level"))
        o.optimization = runners::parse_ort_opt_level(a.get("ort_opt_level"));
    if (a.has("providers")) o.providers = a.get_all("providers");
    return std::make_unique<runners::OnnxRtRunner>(model_path, o);
}

}  // namespace

void add_runner_args(ArgParser& p) {
    p.group("Runners (run in the order given; compared in consecutive pairs)");
    p.flag({"--ref"}, "ref", "Run the built-in reference CPU interpreter.");
    p.flag({"--onnxrt"}, "onnxrt",
           "Run ONNX Runtime (CPU), loaded from libonnxruntime.so.1 at run time.");
    p.flag({"--trt"}, "trt",
           "TensorRT is not available in this build: use --ref/--onnxrt, or the precision emulator "
           "when it lands.");
    p.value({"--threads"}, "threads", "N", "Threads for each runner (default: every core).");
    p.value(
        {"--ref-precision"}, "ref_precision", "{fp32,fp64}",
        "Precision of the reference runner: fp64 computes a float32 model in float64 end to end "
        "(a golden reference). Default: fp32.",
        {"fp32", "fp64"});
    p.group("ONNX Runtime");
    p.value({"--onnxrt-lib"}, "onnxrt_lib", "PATH",
            "libonnxruntime.so.1 to load (default: $POLYGRAPH_ONNXRT_LIB, then the copy `make "
            "setup` installs, then the system library).");
    p.values({"--providers", "--execution-providers"}, "providers", "PROVIDER",
             "Execution providers, in order of preference. Only the CPU provider is available.");
    p.value({"--ort-optimization-level"}, "ort_opt_level", "LEVEL",
            "ONNX Runtime graph optimization level: disable, basic, extended or all (default).");
}

std::vector<std::string> selected_runners(const ParsedArgs& a) {
    std::vector<std::string> out;
    for (const auto& d : a.sequence)
        if (std::count(kRunnerDests.begin(), kRunnerDests.end(), d)) out.push_back(d);
    return out;
}

std::vector<std::unique_ptr<runners::Runner>> make_runners(const ParsedArgs& a,
                                                           const ir::Model& model,
                                                           const std::string& model_path) {
    std::vector<std::unique_ptr<runners::Runner>> out;
    for (const auto& r : selected_runners(a)) {
        if (r == "trt")
            throw Error(
                ErrorKind::kUnsupported,
                "--trt: TensorRT is not available here. Use --ref (reference interpreter) or "
                "--onnxrt (ONNX Runtime); reduced-precision emulation (--emu) comes next.");
        out.push_back(r == "ref" ? make_ref(a, model) : make_onnxrt(a, model, model_path));
        log_verbose("Created runner: {}", out.back()->name());
    }
    return out;
}

}  // namespace pg::cli
