// `polygraph debug precision`: which nodes must run in float32 for a reduced-precision model
// (emulated --fp16 / --bf16 / --tf32 / --fp8 / --int8) to match the float32 reference. The
// check is in-process (debug/precision_check.h) or an external command (--check); the search
// modes are debug/search.h's; iterations, replay and artifacts are debug/iteration.h's; the
// INT8 / FP8 model form is debug/qdq_model.h's. SIGINT stops at the current iteration with exit
// status 130 (debug/interrupt.h). To add a mode: a function in debug/search.h and a branch in
// search() below.
#include "cli/tool_debug_precision.h"

#include <cstdio>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/fs.h"
#include "base/log.h"
#include "base/pyformat.h"
#include "cli/common.h"
#include "cli/trt_compat_args.h"
#include "cli/debug_check_args.h"
#include "cli/run_options.h"
#include "cli/run_support.h"
#include "cli/runner_args.h"
#include "data/data_files.h"
#include "debug/external_check.h"
#include "debug/iteration.h"
#include "debug/precision_check.h"
#include "debug/qdq_model.h"
#include "debug/search.h"
#include "ir/clone.h"
#include "passes/convert_fp16.h"
#include "runners/ref_runner.h"

namespace pg::cli {

namespace {

constexpr const char* kPlaceholder = "polygraph_debug.onnx";

ArgParser precision_parser() {
    ArgParser p("polygraph debug precision",
                "Find the nodes that must run in float32 for an emulated reduced-precision run "
                "(--fp16, --bf16, --tf32, --fp8, --int8) to match the float32 reference. Exit "
                "status 1 when no set passes, 130 when interrupted (resume with "
                "--load-debug-replay). Example: polygraph debug precision model.onnx --fp16 -o "
                "fixed.onnx");
    p.positional("model_file", "Path to the ONNX model.");
    p.value({"--model"}, "model_file", "PATH", "The model, as an option instead of the positional.");
    p.group("Precision search");
    p.flag({"--fp16"}, "fp16", "Reduced precision: float16 (default).");
    p.flag({"--bf16"}, "bf16", "Reduced precision: bfloat16.");
    p.flag({"--tf32"}, "tf32",
           "Reduced precision: TF32 operands of MatMul/Gemm/Conv/ConvTranspose (no model form: "
           "-o and --check are refused).");
    add_fp8_flag(p,
                 "Reduced precision: FP8, e4m3fn (default; saturates at 448) or e5m2 (overflows "
                 "to inf). -o / --check write float8 Q/DQ pairs (opset >= 19).");
    p.flag({"--int8"}, "int8",
           "Reduced precision: INT8 fake quantization of Conv/ConvTranspose/MatMul/Gemm inputs "
           "(activation scales calibrated over the inputs). -o / --check write QuantizeLinear/"
           "DequantizeLinear pairs with those scales (opset >= 13).");
    add_calibration_args(p);
    p.value({"--mode"}, "mode", "{minimize,bisect,linear}",
            "minimize (default): rank nodes by local error, add float32 nodes greedily, then drop "
            "the unneeded ones. bisect / linear: Polygraphy's search over a topological "
            "prefix or suffix.",
            {"minimize", "bisect", "linear"});
    p.value({"--dir", "--direction"}, "direction", "{forward,reverse}",
            "bisect/linear: float32 for the first (forward, default) or last k nodes.",
            {"forward", "reverse"});
    p.value({"--threads"}, "threads", "N", "Threads for each run (default: every core).");
    p.flag({"--json"}, "json", "Print the result as JSON on stdout (logs go to stderr).");
    add_check_args(
        p,
        "An external check: every token after --check is the command (run without a shell; "
        "exit status 0 = pass). Tokens containing polygraph_debug.onnx get the path of the "
        "iteration's candidate model (the reduced-precision model with the float32 set kept, as "
        "-o writes it). Without --check the in-process check runs (reference float32 vs the "
        "emulator).");
    add_iteration_args(
        p,
        "Keep each iteration's candidate model (iteration_N.onnx) and its verdict "
        "(verdicts.txt) here.",
        "Save the verdict of every evaluated float32 set to this JSON file after each "
        "iteration.",
        "Answer the float32 sets recorded in this replay without running the check (resume "
        "an interrupted search).");
    add_debug_common_args(p);
    add_trt_compat_args(p);
    return p;
}

// The reduced precision: --fp16 when no precision flag is given. Throws kUsage for two.
emu::Precision reduced_precision(const ParsedArgs& a) {
    std::vector<std::string> given;
    for (const char* d : {"fp16", "bf16", "tf32", "fp8", "int8"})
        if (a.has(d)) given.push_back(std::string("--") + d);
    if (given.size() > 1)
        throw Error(ErrorKind::kUsage, "debug precision: choose one of " + given[0] + " and " +
                                           given[1] + " (the search is over one precision)");
    return given.empty() ? emu::Precision::kFP16 : default_precision(a);
}

bool is_16bit(emu::Precision p) {
    return p == emu::Precision::kFP16 || p == emu::Precision::kBF16;
}

debug::CheckCommandOptions check_command(const ParsedArgs& a) {
    check_trt_compat_args(a);
    auto cmd = check_command_options(a);
    if (a.has("check")) note_fixed_copies(cmd.command, {kPlaceholder});
    return cmd;
}

// The model an engine runs with `nodes` kept in float32: the 16-bit conversion, or Q/DQ pairs
// around the other reduced-precision nodes (INT8 / FP8), made from a copy of `source` (the model
// as loaded once). Logs what changed when `verbose`.
void write_model(const ParsedArgs& a, const ir::Model& source, emu::Precision p,
                 const debug::PrecisionCheck& check, const std::vector<std::string>& nodes,
                 const std::string& path, bool verbose) {
    auto model = ir::clone_model(source);
    if (is_16bit(p)) {
        passes::ConvertFp16Options o;
        o.target = p == emu::Precision::kBF16 ? DataType::kBFloat16 : DataType::kFloat16;
        o.node_block_list = nodes;
        const auto rep = passes::convert_float_to_fp16(*model, o);
        if (verbose)
            log_info("Converted to {} with {} node(s) kept in float32, {} Cast(s) inserted",
                     emu::precision_name(p), rep.nodes_blocked, rep.casts_inserted);
    } else {
        const debug::NodeSet keep(nodes.begin(), nodes.end());
        std::vector<std::string> quantized;
        for (const auto& n : check.candidates())
            if (!keep.count(n)) quantized.push_back(n);
        const auto rep =
            debug::insert_qdq(*model, quantized, p, check.tensor_dtypes(), check.int8_scales());
        if (verbose)
            log_info("Quantized {} node(s) at {} with {} Q/DQ pair(s); {} node(s) kept in float32",
                     rep.nodes, emu::precision_name(p), rep.pairs, nodes.size());
    }
    save_model_from_args(*model, a, path);
}

// "iteration k, N evaluated, interval [good, bad]" on stderr after every new evaluation.
void show_progress(const debug::SearchProgress& p, const debug::IterativeCheck& it) {
    if (!logger().enabled(Severity::kInfo)) return;
    auto bound = [](size_t v) {
        return v == debug::SearchProgress::kUnknown ? std::string("?") : std::to_string(v);
    };
    const std::string msg = fmt::format(
        "Progress | iteration {}, {} evaluated ({} checked, {} from replay), interval [{}, {}] "
        "({})",
        it.iterations(), p.evaluations, it.checks_run(), it.replayed(), bound(p.good), bound(p.bad),
        p.phase);
    std::fputs(Logger::format_lines(Severity::kInfo, msg).c_str(), stderr);
}

debug::SearchResult search(const ParsedArgs& a, debug::PrecisionCheck& check,
                           const debug::CheckFn& fn, const debug::ProgressFn& progress) {
    const std::string mode = a.get("mode", "minimize");
    const auto dir = debug::parse_direction(a.get("direction", "forward"));
    log_info("Searching {} candidate node(s) with --mode {}", check.candidates().size(), mode);
    if (mode == "bisect") return debug::bisect(check.candidates(), dir, fn, progress);
    if (mode == "linear") return debug::linear(check.candidates(), dir, fn, progress);
    auto r = debug::minimize(check.ranked_candidates(), fn, progress);
    // Report in graph order, as the other modes do.
    const debug::NodeSet found(r.fp32_nodes.begin(), r.fp32_nodes.end());
    r.fp32_nodes.clear();
    for (const auto& n : check.candidates())
        if (found.count(n)) r.fp32_nodes.push_back(n);
    return r;
}

void report(const ParsedArgs& a, emu::Precision p, const debug::SearchResult& r,
            const debug::IterativeCheck& it) {
    const size_t n = it.iterations();
    log_info("Finished {} iteration(s) | Passed: {}/{} | Pass Rate: {}%", n, it.passed(), n,
             py_float(n ? 100.0 * static_cast<double>(it.passed()) / static_cast<double>(n) : 0.0));
    const std::string lp = debug::layer_precisions_string(r.fp32_nodes);
    const std::string trt = debug::trtexec_string(r.fp32_nodes);
    if (a.count("json")) {
        nlohmann::ordered_json j{{"fp32_nodes", r.fp32_nodes},
                                 {"evaluations", r.evaluations},
                                 {"checks_run", it.checks_run()},
                                 {"replayed", it.replayed()},
                                 {"passed", r.passed},
                                 {"precision", emu::precision_name(p)},
                                 {"layer_precisions", lp},
                                 {"trtexec", trt}};
        std::printf("%s\n", j.dump(2).c_str());
        return;
    }
    if (!r.passed) {
        log_error("No float32 node set passed the check ({} evaluation(s))", r.evaluations);
        return;
    }
    std::string names;
    for (const auto& name : r.fp32_nodes) names += "\n    " + name;
    log_info("Nodes to run in float32 ({}, {} evaluation(s), {} check(s) run, {} from replay):{}",
             r.fp32_nodes.size(), r.evaluations, it.checks_run(), it.replayed(), names);
    log_info("--layer-precisions {}", lp);
    log_info("trtexec {}", trt);
}

// INT8 scales from --calibration-cache when it holds some (else the check calibrates).
void load_calibration_cache(const ParsedArgs& a, emu::EmuRunnerOptions& base) {
    const std::string cache = a.get("calibration_cache");
    std::error_code ec;
    if (cache.empty() || !std::filesystem::is_regular_file(cache, ec) ||
        std::filesystem::file_size(cache, ec) == 0 || ec)
        return;
    base.emulation.int8_scales =
        std::make_shared<emu::ScaleTable>(emu::parse_calibration_cache(read_file(cache), cache));
    log_info("INT8 calibration | read {} activation scale(s) from {}",
             base.emulation.int8_scales->size(), cache);
}

// -o and --check need a model form of `p`: none for TF32, Q/DQ opsets for INT8 / FP8.
void require_model_form(const ParsedArgs& a, emu::Precision p, const ir::Model& model) {
    if (!a.has("check") && !a.has("output")) return;
    if (p == emu::Precision::kTF32)
        throw Error(ErrorKind::kUnsupported,
                    "--tf32 has no model form (TF32 is an engine setting, not a tensor type): "
                    "-o and --check are unsupported; use the reported --layerPrecisions");
    if (!is_16bit(p)) debug::require_qdq_opset(model, p);
}

// Writes the scales the check calibrated to --calibration-cache (when given).
void save_calibration_cache(const ParsedArgs& a, const emu::CalibrationOptions& calibration,
                            const debug::PrecisionCheck& check) {
    if (!check.calibrated() || !a.has("calibration_cache")) return;
    std::string method = emu::calibration_method_name(calibration.method);
    if (calibration.method == emu::CalibrationMethod::kPercentile)
        method += fmt::format(" {:g}", calibration.percentile);
    write_file_atomic(a.get("calibration_cache"),
                      emu::format_calibration_cache(check.int8_scales(), method));
    log_info("INT8 calibration | wrote the calibration cache {}", a.get("calibration_cache"));
}

debug::IterationOptions precision_iteration_options(const ParsedArgs& a) {
    debug::IterationOptions io = iteration_options(a);
    io.replay_by_index = a.get("mode", "minimize") != "minimize";
    return io;
}

int search_main(const ParsedArgs& a) {
    const emu::Precision p = reduced_precision(a);
    const auto opts = compare::parse_compare_options(compare_args(a));
    const auto cmd = check_command(a);
    auto model = load_model_from_args(a);
    require_model_form(a, p, *model);  // before the search, not after it
    emu::EmuRunnerOptions base;
    base.session.threads = static_cast<int>(int_arg(a, "threads", "--threads", 0));
    base.policy.default_precision = p;
    if (p == emu::Precision::kINT8) load_calibration_cache(a, base);
    auto feeds = make_feeds(a, *model, runners::graph_input_metadata(*model->graph));
    if (a.has("save_inputs")) data::save_inputs(a.get("save_inputs"), feeds);
    const auto calibration = calibration_options(a);
    debug::PrecisionCheck check(*model, std::move(feeds), base, opts, calibration);
    save_calibration_cache(a, calibration, check);
    const bool external = a.has("check");
    const bool named = mentions_placeholder(cmd.command, {kPlaceholder});
    const bool keep = a.has("no_remove_intermediate");
    debug::IterativeCheck iter(
        precision_iteration_options(a),
        [&](const debug::NodeSet& s, const std::string& path) {
            write_model(a, *model, p, check, std::vector<std::string>(s.begin(), s.end()), path,
                        false);
        },
        [&](const debug::NodeSet& s, const std::string& path) {
            if (!external) return check(s);
            if (!named)
                return debug::run_check_with_copies(cmd, cmd.command, {{path, kPlaceholder}},
                                                    keep);
            return debug::run_check_command(cmd,
                                            debug::substitute(cmd.command, kPlaceholder, path));
        });
    const auto r = search(
        a, check, [&iter](const debug::NodeSet& s) { return iter(s); },
        [&iter](const debug::SearchProgress& sp) { show_progress(sp, iter); });
    report(a, p, r, iter);
    if (r.passed && a.has("output"))
        write_model(a, *model, p, check, r.fp32_nodes, a.get("output"), true);
    return r.passed ? 0 : 1;
}

}  // namespace

int run_debug_precision(const std::vector<std::string>& argv) {
    return run_debug_tool(precision_parser(), argv, "Search", search_main);
}

}  // namespace pg::cli
