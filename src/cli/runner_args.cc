#include "cli/runner_args.h"

#include <algorithm>
#include <filesystem>

#include "base/error.h"
#include "base/fs.h"
#include "base/log.h"
#include "emu/emu_runner.h"
#include "emu/root_cause.h"
#include "runners/onnxrt_runner.h"
#include "runners/ref_runner.h"

namespace pg::cli {

namespace {

const std::vector<std::string> kRunnerDests = {"ref", "onnxrt", "trt", "emu"};
// The precision flags that set the emulator's default precision (at most one; --tf32 yields).
const std::vector<std::string> kPrecisionDests = {"fp16", "bf16", "fp8", "int8"};

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

emu::Precision default_precision(const ParsedArgs& a) {
    std::vector<std::string> given;
    for (const auto& d : kPrecisionDests)
        if (a.has(d)) given.push_back("--" + d);
    if (given.size() > 1)
        throw Error(ErrorKind::kUsage, "choose one of " + given[0] + " and " + given[1] +
                                           ": the emulator runs each node at one precision "
                                           "(use --layer-precisions for mixed precision)");
    if (a.has("fp16")) return emu::Precision::kFP16;
    if (a.has("bf16")) return emu::Precision::kBF16;
    if (a.has("int8")) return emu::Precision::kINT8;
    if (a.has("fp8")) {
        const std::string f = a.get("fp8");
        if (f.empty() || f == "e4m3fn" || f == "e4m3") return emu::Precision::kFP8E4M3;
        if (f == "e5m2") return emu::Precision::kFP8E5M2;
        throw Error(ErrorKind::kUsage, "--fp8 expects e4m3fn or e5m2, got '" + f + "'");
    }
    return a.has("tf32") ? emu::Precision::kTF32 : emu::Precision::kFP32;
}

namespace {

emu::PrecisionPolicy precision_policy(const ParsedArgs& a) {
    emu::PrecisionPolicy policy;
    policy.default_precision = default_precision(a);
    policy.layers = emu::parse_layer_precisions(a.get_all("layer_precisions"));
    policy.constraints = emu::parse_constraints(a.get("precision_constraints", "none"));
    return policy;
}

void show_precisions(const emu::EmuRunner& r) {
    std::string s = "Precisions | " + r.name() + " (node (op): precision)";
    for (const auto& [node, p] : r.resolved_precisions())
        s += "\n    " + node->name + " (" + node->op_type + "): " + emu::precision_name(p);
    log_info("{}", s);
}

std::unique_ptr<runners::Runner> make_emu(const ParsedArgs& a, const ir::Model& model) {
    emu::EmuRunnerOptions o;
    o.session.threads = threads_arg(a);
    o.policy = precision_policy(a);
    o.emulation.rounding = emu::parse_rounding_mode(a.get("rounding", "nearest-even"));
    o.emulation.accumulate_fp16 = a.get("accumulate", "fp32") == "fp16";
    auto r = std::make_unique<emu::EmuRunner>(model, std::move(o));
    if (a.count("show_precisions")) show_precisions(*r);
    return r;
}

void add_emu_args(ArgParser& p) {
    p.group("Precision emulation (--emu)");
    p.flag({"--fp16"}, "fp16",
           "Run float compute nodes in float16. Without a precision flag the emulator runs "
           "float32 (as TensorRT does without --fp16), apart from --layer-precisions.");
    p.flag({"--bf16"}, "bf16", "Run float compute nodes in bfloat16.");
    p.flag({"--tf32"}, "tf32",
           "Round the operands of MatMul/Gemm/Conv/ConvTranspose to TF32 (yields to --fp16, "
           "--bf16 or --fp8 when given with one of them).");
    add_fp8_flag(p,
                 "Run float compute nodes in FP8: e4m3fn (default; saturates at 448) or e5m2 "
                 "(overflows to inf).");
    p.flag({"--int8"}, "int8",
           "Run Conv/ConvTranspose/MatMul/Gemm in INT8 by fake quantization: inputs quantized "
           "and dequantized (activations per tensor with calibrated scales, weights per output "
           "channel), float32 compute and output. Other ops stay float32.");
    add_calibration_args(p);
    p.values({"--layer-precisions"}, "layer_precisions", "SELECTOR:PRECISION",
             "Per-node precisions: SELECTOR is a node-name regex (full match) or op:OpType; "
             "entries comma- or space-separated, the last matching entry wins. Example: "
             "'.*Conv.*':fp16,'.*Gemm.*':fp32 Add:float32");
    p.value({"--precision-constraints"}, "precision_constraints", "{obey,prefer,none}",
            "As TensorRT: with prefer (and none) a node whose op has no reduced-precision form "
            "stays float32; with obey an explicit --layer-precisions entry on such a node is an "
            "error. Default: none.",
            {"obey", "prefer", "none"});
    p.value({"--accumulate"}, "accumulate", "{fp32,fp16}",
            "Accumulation of MatMul/Gemm at 16/8-bit precisions: fp16 rounds each 32-wide "
            "K-block partial sum into a float16 running sum. Default: fp32.",
            {"fp32", "fp16"});
    p.value({"--rounding"}, "rounding", "{nearest-even,nearest-away,toward-zero}",
            "Rounding to reduced formats. Default: nearest-even.",
            {"nearest-even", "nearest-away", "toward-zero"});
    p.flag({"--show-precisions"}, "show_precisions",
           "Log each node's resolved precision when the emulator is built.");
}

}  // namespace

void add_fp8_flag(ArgParser& p, const std::string& help) {
    OptionSpec fp8;
    fp8.names = {"--fp8"};
    fp8.dest = "fp8";
    fp8.nargs = Nargs::kOptionalOne;
    fp8.metavar = "FORMAT";
    fp8.help = help;
    p.add(std::move(fp8));
}

void add_calibration_args(ArgParser& p) {
    p.value({"--calibration-cache"}, "calibration_cache", "PATH",
            "INT8 activation scales: read from PATH when it exists and is non-empty, else "
            "calibrated over the inputs (--iterations) and written to PATH. Text format: a "
            "header line, then 'tensor_name: scale' per line.");
    p.value({"--calibration-method"}, "calibration_method", "{minmax,percentile,entropy}",
            "INT8 calibration: minmax (default) takes max |x|; percentile the "
            "--calibration-percentile of |x| (outliers saturate); entropy the threshold with "
            "the least KL divergence between the 2048-bin histogram of |x| and its 128-level "
            "quantized form (TensorRT's entropy calibrator).",
            {"minmax", "percentile", "entropy"});
    p.value({"--calibration-percentile"}, "calibration_percentile", "P",
            "Percentile of |x| for --calibration-method percentile. Default: 99.99.");
}

void add_runner_args(ArgParser& p) {
    p.group("Runners (run in the order given; compared in consecutive pairs)");
    p.flag({"--ref"}, "ref", "Run the built-in reference CPU interpreter.");
    p.flag({"--onnxrt"}, "onnxrt",
           "Run ONNX Runtime (CPU), loaded from libonnxruntime.so.1 at run time.");
    p.flag({"--emu"}, "emu",
           "Run the reference interpreter under a per-node precision policy (--fp16, "
           "--layer-precisions, ...): emulates reduced-precision inference.");
    p.flag({"--trt"}, "trt",
           "TensorRT is not available in this build: use --ref/--onnxrt, or --emu to emulate "
           "its reduced precisions.");
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
    add_emu_args(p);
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
                "--onnxrt (ONNX Runtime); --emu emulates reduced precisions.");
        if (r == "emu")
            out.push_back(make_emu(a, model));
        else
            out.push_back(r == "ref" ? make_ref(a, model) : make_onnxrt(a, model, model_path));
        log_verbose("Created runner: {}", out.back()->name());
    }
    warn_unused_precision_flags(a);
    return out;
}

void warn_unused_precision_flags(const ParsedArgs& a) {
    const auto r = selected_runners(a);
    if (std::count(r.begin(), r.end(), "emu")) return;
    for (const char* d : {"fp16", "bf16", "tf32", "fp8", "int8", "layer_precisions",
                          "precision_constraints", "accumulate", "rounding", "show_precisions",
                          "calibration_cache", "calibration_method", "calibration_percentile"})
        if (a.has(d))
            log_warning("Precision options (--{}) only apply to --emu, which was not selected", d);
}

emu::CalibrationOptions calibration_options(const ParsedArgs& a) {
    emu::CalibrationOptions o;
    o.method = emu::parse_calibration_method(a.get("calibration_method", "minmax"));
    o.threads = threads_arg(a);
    if (a.has("calibration_percentile")) {
        const std::string v = a.get("calibration_percentile");
        try {
            size_t used = 0;
            o.percentile = std::stod(v, &used);
            if (used != v.size()) throw std::invalid_argument(v);
        } catch (const std::exception&) {
            throw Error(ErrorKind::kUsage,
                        "--calibration-percentile expects a number in (0, 100], got '" + v + "'");
        }
        if (!(o.percentile > 0 && o.percentile <= 100))
            throw Error(ErrorKind::kUsage,
                        "--calibration-percentile expects a number in (0, 100], got '" + v + "'");
        if (o.method != emu::CalibrationMethod::kPercentile)
            log_warning("--calibration-percentile only applies to --calibration-method percentile");
    }
    return o;
}

void prepare_int8(const ParsedArgs& a, const std::vector<std::unique_ptr<runners::Runner>>& runners,
                  const std::vector<runners::NamedTensors>& feeds) {
    for (const auto& r : runners) {
        auto* e = dynamic_cast<emu::EmuRunner*>(r.get());
        if (!e || e->int8_nodes().empty()) continue;
        const std::string cache = a.get("calibration_cache");
        std::error_code ec;
        if (!cache.empty() && std::filesystem::is_regular_file(cache, ec) &&
            std::filesystem::file_size(cache, ec) > 0 && !ec) {
            e->set_int8_scales(emu::parse_calibration_cache(read_file(cache), cache));
            log_info("INT8 calibration | {} | read {} activation scale(s) from {}", e->name(),
                     e->int8_scales().size(), cache);
            continue;
        }
        const auto o = calibration_options(a);
        if (feeds.empty())
            throw Error(ErrorKind::kUsage, "--int8: calibration needs at least one input");
        const auto& scales = e->calibrate(feeds, o);
        std::string method = emu::calibration_method_name(o.method);
        if (o.method == emu::CalibrationMethod::kPercentile)
            method += fmt::format(" {:g}", o.percentile);
        log_info(
            "INT8 calibration | {} | {} over {} input(s): {} activation scale(s) for {} INT8 "
            "node(s)",
            e->name(), method, feeds.size(), scales.size(), e->int8_nodes().size());
        if (!cache.empty()) {
            write_file_atomic(cache, emu::format_calibration_cache(scales, method));
            log_info("INT8 calibration | wrote the calibration cache {}", cache);
        }
    }
}

namespace {

// The first node (in execution order) whose evidence alone makes it divergent, with its
// root-cause label: a plain (outputs-only) run names the node without a layer-wise comparison.
void log_first_divergent_by_evidence(const emu::EmuRunner& e) {
    for (const auto& [name, ev] : e.evidence().entries()) {
        const std::string why = emu::divergence_by_evidence(ev);
        if (why.empty()) continue;
        log_warning(
            "First node divergent by evidence: '{}' ({}) | {} | root cause: {} | compare every "
            "layer with --onnx-outputs mark all",
            name, ev.op, why, emu::evidence_label(ev));
        return;
    }
}

}  // namespace

void log_precision_evidence(const std::vector<std::unique_ptr<runners::Runner>>& runners,
                            bool layerwise) {
    for (const auto& r : runners) {
        const auto* e = dynamic_cast<const emu::EmuRunner*>(r.get());
        if (!e) continue;
        const auto int8 = emu::int8_evidence_lines(e->evidence());
        if (!int8.empty()) {
            std::string s =
                fmt::format("INT8 evidence | {} | {} INT8 node(s):", e->name(), int8.size());
            for (const auto& l : int8) s += "\n    " + l;
            log_info("{}", s);
        }
        const auto lines = emu::evidence_lines(e->evidence());
        if (lines.empty()) {
            log_info(
                "Precision evidence | {} | no overflow, underflow to zero or NaN/Inf at any "
                "node",
                e->name());
            continue;
        }
        std::string s = fmt::format(
            "Precision evidence | {} | {} node(s) with overflow, "
            "underflow to zero, NaN/Inf or INT8 saturation:",
            e->name(), lines.size());
        for (const auto& l : lines) s += "\n    " + l;
        log_warning("{}", s);
        if (!layerwise) log_first_divergent_by_evidence(*e);
    }
}

}  // namespace pg::cli
