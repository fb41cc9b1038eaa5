// `polygraph run`: run a model on one or more runners with the same inputs, compare them (and any
// saved outputs) in consecutive pairs, optionally layer by layer, validate, and time.
// Exit status 1 when a comparison or validation fails.
#include <cstdio>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/log.h"
#include "cli/common.h"
#include "cli/render.h"
#include "cli/run_layerwise.h"
#include "cli/run_options.h"
#include "cli/run_support.h"
#include "cli/runner_args.h"
#include "cli/tools.h"
#include "cli/trt_compat_args.h"
#include "compare/comparator.h"
#include "compare/validate.h"
#include "data/data_files.h"
#include "emu/emu_runner.h"
#include "emu/root_cause.h"
#include "layerwise/layerwise.h"
#include "runners/marked_outputs.h"
#include "runners/ref_runner.h"

namespace pg::cli {

namespace {

using nlohmann::ordered_json;

ArgParser run_parser() {
    ArgParser p(
        "polygraph run",
        "Run a model with one or more runners on the same inputs and compare their outputs in "
        "consecutive pairs (and against saved outputs). Exit status 1 when a comparison or "
        "--validate fails. Example: polygraph run model.onnx --onnxrt --ref --atol 1e-3 --rtol "
        "1e-3");
    p.positional("model_file", "Path to the ONNX model.", false);
    add_runner_args(p);
    add_model_load_args(p);
    add_model_type_arg(p);
    add_data_loader_args(p);
    add_comparator_args(p);
    add_layerwise_args(p);
    add_trt_compat_args(p);
    p.group("Output");
    p.flag({"--json"}, "json",
           "Print the verdict and per-output figures as JSON on stdout (logs go to stderr).");
    add_logger_args(p);
    return p;
}

std::vector<runners::TensorMeta> feed_metadata(
    const ir::Model& model, const std::vector<std::unique_ptr<runners::Runner>>& runners) {
    if (!runners.empty()) return runners.front()->input_metadata();
    return runners::graph_input_metadata(*model.graph);
}

compare::ComparatorContext comparator_context(const compare::CompareOptions& opts) {
    compare::ComparatorContext ctx;
    ctx.options = opts;
    ctx.values = [](const Tensor& t) { return numpy_str(t); };
    ctx.sink = [](const compare::LogLines& l) { compare::emit(l); };
    return ctx;
}

ordered_json stats_json(const emu::RoundingStats& r) {
    return {
        {"values", r.values},       {"overflow", r.overflow},   {"underflow_to_zero", r.underflow},
        {"nonfinite", r.nonfinite}, {"saturated", r.saturated}, {"max_abs", r.max_abs}};
}

// Every emulator runner's per-node evidence (precision, rounding counters of inputs and outputs).
ordered_json evidence_json(const std::vector<std::unique_ptr<runners::Runner>>& runners) {
    ordered_json j = ordered_json::object();
    for (const auto& r : runners) {
        const auto* emu_runner = dynamic_cast<const emu::EmuRunner*>(r.get());
        if (!emu_runner) continue;
        ordered_json nodes = ordered_json::array();
        for (const auto& [name, e] : emu_runner->evidence().entries()) {
            nodes.push_back({{"node", name},
                             {"op", e.op},
                             {"precision", emu::precision_name(e.precision)},
                             {"inputs", stats_json(e.inputs)},
                             {"outputs", stats_json(e.outputs)},
                             {"nonfinite_produced", e.nonfinite_produced},
                             {"accumulation_error", e.accumulation_error},
                             {"accumulation_rounding", e.accumulation_rounding}});
            if (const std::string l = emu::evidence_label(e); !l.empty()) nodes.back()["label"] = l;
            if (const std::string why = emu::divergence_by_evidence(e); !why.empty())
                nodes.back()["divergent_by_evidence"] = why;
        }
        j[r->name()] = nodes;
    }
    return j;
}

ordered_json figures_json(const compare::AccuracyResult& acc, bool validated) {
    ordered_json j;
    j["passed"] = acc.passed() && validated;
    j["comparisons"] = compare::accuracy_to_json(acc);
    return j;
}

struct RunState {
    std::unique_ptr<ir::Model> model;
    std::vector<std::unique_ptr<runners::Runner>> runners;
    // `--onnx-outputs` with one runner: it with the chosen tensors as its outputs (run_all runs
    // these instead; the emulator's evidence stays on the runner in `runners`).
    std::vector<std::unique_ptr<runners::Runner>> marked;
    data::FeedList feeds;
    std::vector<compare::RunResult> results;
    std::vector<std::vector<double>> times;
};

void run_all(const ParsedArgs& a, RunState& s) {
    const int64_t warm_up = int_arg(a, "warm_up", "--warm-up", 0);
    const double duration = seconds_arg(a, "duration", "--duration");
    for (auto& r : s.marked.empty() ? s.runners : s.marked) {
        s.times.emplace_back();
        s.results.push_back(run_runner(*r, s.feeds, warm_up, &s.times.back(), duration));
    }
    if (a.has("save_outputs")) {
        log_info("Saving inference results to {}", a.get("save_outputs"));
        data::save_outputs(a.get("save_outputs"), to_data_results(s.results, s.times));
    }
    for (const auto& path : a.get_all("load_outputs")) {
        log_info("Loading inference results from {}", path);
        // Without a model (comparing saved outputs only) the file names its own tensors.
        auto loaded = from_data_results(data::load_outputs(
            path, s.model ? data::ModelNames{input_names(*s.model), output_names(*s.model)}
                          : data::ModelNames{}));
        s.results.insert(s.results.end(), loaded.begin(), loaded.end());
    }
}

int finish(const ParsedArgs& a, RunState& s, const compare::CompareOptions& opts) {
    compare::AccuracyResult acc;
    if (s.results.size() >= 2) {
        auto ctx = comparator_context(opts);
        acc = compare::compare_accuracy(s.results, ctx);
    }
    bool valid = true;
    if (opts.validate) {
        auto v = compare::validate_runs(s.results);
        compare::emit(v.lines);
        valid = v.passed();
    }
    ordered_json j = figures_json(acc, valid);
    j["precision_evidence"] = evidence_json(s.runners);
    if (a.has("save_results")) write_file_atomic(a.get("save_results"), j.dump(2) + "\n");
    if (a.count("json")) std::printf("%s\n", j.dump(2).c_str());
    return acc.passed() && valid ? 0 : 1;
}

int run_layerwise_mode(const ParsedArgs& a, RunState& s, const compare::CompareOptions& opts) {
    LayerwiseOutcome lw = run_layerwise(a, *s.model, s.runners, s.feeds, opts);
    ordered_json j{{"passed", lw.passed},
                   {"layerwise", lw.json},
                   {"precision_evidence", evidence_json(s.runners)}};
    if (a.has("save_results")) write_file_atomic(a.get("save_results"), j.dump(2) + "\n");
    if (a.count("json")) std::printf("%s\n", j.dump(2).c_str());
    return lw.passed ? 0 : 1;
}

// `--onnx-outputs` with fewer than two runners: the chosen tensors become the runner's outputs
// for the ordinary run (Polygraphy's `run --onnxrt --onnx-outputs mark all --validate`).
void mark_outputs(const ParsedArgs& a, RunState& s) {
    if (s.runners.empty()) return log_warning("--onnx-outputs has no effect without runners");
    const auto names = layerwise::select_tensors(*s.model, a.get_all("onnx_outputs"));
    log_info("Marking {} tensor(s) as outputs", names.size());
    for (auto& r : s.runners) s.marked.push_back(runners::with_marked_outputs(*r, names));
}

int run_main(const ParsedArgs& a) {
    if (a.count("json")) logger().set_all_to_stderr(true);
    const auto opts = compare::parse_compare_options(compare_args(a));
    for (const auto& w : compare::unused_option_warnings(compare_args(a))) log_warning("{}", w);
    check_trt_compat_args(a);
    const auto runner_flags = selected_runners(a);
    if (!runner_flags.empty() && !a.has("model_file"))
        throw Error(ErrorKind::kUsage,
                    "polygraph run: a model is required when runners are selected");
    RunState s;
    if (a.has("model_file")) s.model = load_model_from_args(a);
    if (runner_flags.empty())
        log_warning("No runners were provided; only saved outputs are compared.");
    if (s.model) s.runners = make_runners(a, *s.model, a.get("model_file"));
    if (s.model) s.feeds = make_feeds(a, *s.model, feed_metadata(*s.model, s.runners));
    prepare_int8(a, s.runners, s.feeds);  // INT8 scales before the timed runs
    if (a.has("save_inputs")) {
        log_info("Saving inference input data to {}", a.get("save_inputs"));
        data::save_inputs(a.get("save_inputs"), s.feeds);
    }
    if (a.has("onnx_outputs") && s.runners.size() < 2) {
        mark_outputs(a, s);
    } else if (a.has("onnx_outputs")) {
        const int rc = run_layerwise_mode(a, s, opts);
        log_precision_evidence(s.runners, true);
        return rc;
    }
    run_all(a, s);
    const int rc = finish(a, s, opts);
    log_precision_evidence(s.runners);
    return rc;
}

}  // namespace

int run_run(const std::vector<std::string>& argv) {
    return run_tool_with_banner(run_parser(), argv, run_main);
}

}  // namespace pg::cli
