// `polygraph debug reduce`: delta debugging of an ONNX model down to a small subgraph that still
// fails (polygraphy-spec.md §3.7, §7.6). The original model runs once per input sample on the
// reference interpreter, keeping every intermediate tensor while they fit --memory-budget, else
// recomputing each candidate's cut values on demand (debug/subgraph.h); each candidate takes its
// inputs from those values. Phase 1 cuts the outputs, phase 2 the inputs
// (debug/reduce.h); each trial is one iteration of debug/keyed_iteration.h, checked in process
// (debug/reduce_check.h: emulated float16/bfloat16 vs the float32 reference) or by --check CMD.
// Writes the reduced model with its inputs and golden outputs beside it.
#include <cstdio>
#include <optional>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/log.h"
#include "cli/common.h"
#include "cli/debug_check_args.h"
#include "cli/run_options.h"
#include "cli/run_support.h"
#include "cli/tool_debug_reduce.h"
#include "cli/tool_surgeon.h"
#include "data/data_files.h"
#include "debug/keyed_iteration.h"
#include "debug/reduce.h"
#include "debug/reduce_check.h"
#include "debug/subgraph.h"
#include "ir/clone.h"
#include "ir/graph.h"
#include "layerwise/layerwise.h"
#include "passes/override_input_shapes.h"
#include "passes/toposort.h"
#include "runners/ref_runner.h"

namespace pg::cli {

namespace {

constexpr const char* kModelPlaceholder = "polygraph_debug.onnx";
constexpr const char* kInputsPlaceholder = "polygraph_debug_inputs.json";

void add_reduce_flags(ArgParser& p) {
    p.group("Reduction");
    p.value({"--min-good", "--minimal-good"}, "min_good", "PATH",
            "Also write the passing candidate closest in size below the reduced model (with "
            "PATH's _inputs.json and _golden.json).");
    p.flag({"--no-reduce-inputs"}, "no_reduce_inputs",
           "Do not reduce the inputs (skip phase 2: only the outputs are cut).");
    p.flag({"--no-reduce-outputs"}, "no_reduce_outputs",
           "Do not reduce the outputs (skip phase 1: only the inputs are cut).");
    p.value({"--mode"}, "mode", "{bisect,linear}",
            "bisect (default): binary search for the earliest failing outputs and the latest "
            "failing inputs (assumes failures propagate; O(log n) checks per phase). linear: "
            "try every node once per phase (n checks; finds the smallest failing cut even when "
            "failures do not propagate).",
            {"bisect", "linear"});
    p.flag({"--fp16"}, "fp16", "In-process check: emulate float16 (default).");
    p.flag({"--bf16"}, "bf16", "In-process check: emulate bfloat16.");
    p.values({"--layer-precisions"}, "layer_precisions", "SELECTOR:PRECISION",
             "In-process check: per-node precisions of the emulator, as in `run --emu`.");
    p.value({"--threads"}, "threads", "N", "Threads for each run (default: every core).");
    p.value({"--memory-budget"}, "memory_budget", "SIZE",
            "Bytes of reference tensors kept for the candidates (e.g. 256M). When the "
            "intermediate tensors of every sample exceed it, each candidate's cut values are "
            "recomputed by re-running the reference per sample instead (same results, more "
            "time). Default: a quarter of physical memory.");
    p.flag({"--json"}, "json", "Print the result as JSON on stdout (logs go to stderr).");
    p.group("Model");
    p.values({"--model-input-shapes", "--model-inputs"}, "model_input_shapes", "NAME:SHAPE",
             "Override the model's input shapes before reducing, e.g. --model-inputs "
             "x:[1,3,224,224].");
    p.group("ONNX Shape Inference");
    p.flag({"--no-shape-inference"}, "no_shape_inference",
           "Accepted for Polygraphy compatibility; changes nothing: the types and shapes of cut "
           "points always come from the reference run of the model.");
    p.flag({"--force-fallback-shape-inference"}, "force_fallback_shape_inference",
           "Accepted for Polygraphy compatibility; changes nothing (the reference run is "
           "always used, as Polygraphy's fallback inference would be).");
}

ArgParser reduce_parser() {
    ArgParser p("polygraph debug reduce",
                "Reduce a failing ONNX model to a small subgraph that still fails. Without "
                "--check, a candidate fails when the emulator (--fp16/--bf16) does not match the "
                "float32 reference under the comparator options. Every candidate's inputs come "
                "from a reference run of the original model per input sample; its intermediate "
                "tensors are kept in memory within --memory-budget, else recomputed per "
                "candidate. Exit status 0 when a "
                "reduced failing model was written, 1 when the original model does not fail, 130 "
                "when interrupted (resume with --load-debug-replay). "
                "Example: polygraph debug reduce model.onnx --fp16 --atol 1e-2 -o reduced.onnx");
    p.positional("model_file", "Path to the ONNX model.");
    p.value({"--model"}, "model_file", "PATH", "The model, as an option instead of the positional.");
    add_reduce_flags(p);
    add_check_args(p,
                   "An external check: every token after --check is the command (run without "
                   "a shell; exit status 0 = pass). polygraph_debug.onnx in a token becomes the "
                   "candidate model's path and polygraph_debug_inputs.json the path of its "
                   "inputs (Polygraphy JSON, one dict per sample), e.g. --check polygraph run "
                   "polygraph_debug.onnx --ref --emu --fp16 --load-inputs "
                   "polygraph_debug_inputs.json.");
    add_iteration_args(
        p,
        "Keep each iteration's candidate (N<i>_<phase>.onnx), its inputs "
        "(N<i>_<phase>_inputs.json) and its verdict (verdicts.txt) here.",
        "Save every iteration's verdict (keys _N0_original for the original model, then "
        "_N<i>_outputs / _N<i>_inputs; state {\"num_nodes\": n, \"node_index\": i}) to "
        "this JSON file after each iteration.",
        "Answer the iterations recorded in this replay without running the check (resume "
        "an interrupted search; it reaches the same answer).");
    add_debug_common_args(p);
    return p;
}

emu::EmuRunnerOptions emu_options(const ParsedArgs& a) {
    if (a.has("fp16") && a.has("bf16"))
        throw Error(ErrorKind::kUsage, "debug reduce: choose one of --fp16 and --bf16");
    emu::EmuRunnerOptions o;
    o.session.threads = static_cast<int>(int_arg(a, "threads", "--threads", 0));
    o.policy.default_precision = a.has("bf16") ? emu::Precision::kBF16 : emu::Precision::kFP16;
    o.policy.layers = emu::parse_layer_precisions(a.get_all("layer_precisions"));
    return o;
}

void override_shapes(const ParsedArgs& a, ir::Model& m) {
    std::vector<std::pair<std::string, ir::Shape>> shapes;
    for (const auto& s :
         parse_meta(a.get_all("model_input_shapes"), true, false, "--model-input-shapes"))
        if (s.shape) shapes.emplace_back(s.name, *s.shape);
    if (shapes.empty()) return;
    passes::override_input_shapes(*m.graph, shapes);
}

// "<path without .onnx>" + suffix.
std::string beside(const std::string& path, const std::string& suffix) {
    const std::string ext = ".onnx";
    const bool has_ext = path.size() > ext.size() && path.ends_with(ext);
    return (has_ext ? path.substr(0, path.size() - ext.size()) : path) + suffix;
}

struct Outcome {
    std::unique_ptr<ir::Model> bad;   // the reduced failing model
    std::unique_ptr<ir::Model> good;  // the --min-good candidate (may be null)
};

// Nodes that compute non-constant values (what the markers and the report count).
size_t compute_nodes(const ir::Model& m) {
    return debug::compute_node_names(m).size();
}

// "a, b": the candidate's graph outputs (phase 1) or inputs (phase 2).
std::string value_names(const ir::Model& m, debug::ReducePhase ph) {
    const auto& values =
        ph == debug::ReducePhase::kOutputs ? m.graph->outputs() : m.graph->inputs();
    std::string s;
    for (const ir::Value* v : values) s += (s.empty() ? "" : ", ") + v->name();
    return s;
}

// One reduction: the iterations, their check, and the two phases over candidate cuts.
class Reducer {
  public:
    Reducer(const ParsedArgs& a, const debug::ReferenceValues& ref, emu::EmuRunnerOptions emu,
            compare::CompareOptions compare, debug::CheckCommandOptions cmd)
        : a_(a),
          ref_(ref),
          check_(ref, std::move(emu), std::move(compare)),
          cmd_(std::move(cmd)),
          external_(a.has("check")),
          named_(mentions_placeholder(cmd_.command, {kModelPlaceholder, kInputsPlaceholder})),
          keep_(a.has("no_remove_intermediate")),
          iter_(iteration_options(a)) {}

    // The original model: errors in its in-process check propagate.
    void set_original(const ir::Model* m) { original_ = m; }

    // Runs (or replays) the check of `m` as iteration `index` of `suffix`; true = it fails.
    bool fails(const ir::Model& m, const std::string& suffix, size_t index,
               const nlohmann::json& state) {
        const bool passed = iter_(
            suffix, index, state, [&](const debug::IterationFiles& f) { write_files(m, f); },
            [&](const debug::IterationFiles& f) { return verdict(m, f); });
        return !passed;
    }

    // Phase 1 then phase 2. SPEC-DEVIATION: the --min-good model is a candidate that was
    // checked and passed (phase 2's best good, else phase 1's), not Polygraphy's rebuild of the
    // original with the best-good outputs and inputs, which may never have been checked.
    Outcome run(const ir::Model& original, debug::ReduceMode mode, bool outputs, bool inputs) {
        std::optional<size_t> good1, good2;
        auto after_outputs = outputs ? phase(original, debug::ReducePhase::kOutputs, mode, good1)
                                     : ir::clone_model(original);
        Outcome o;
        o.bad = inputs ? phase(*after_outputs, debug::ReducePhase::kInputs, mode, good2)
                       : ir::clone_model(*after_outputs);
        if (good2)
            o.good = debug::cut_inputs(*after_outputs, *good2, ref_);
        else if (good1)
            o.good = debug::cut_outputs(original, *good1, ref_);
        return o;
    }

    const debug::KeyedIterations& iterations() const { return iter_; }

  private:
    void write_files(const ir::Model& m, const debug::IterationFiles& f) {
        save_model_from_args(m, a_, f.model);
        data::save_inputs(f.inputs, ref_.feeds_for(m));
    }

    bool verdict(const ir::Model& m, const debug::IterationFiles& f) {
        if (!external_) return check_(m, &m == original_);
        int rc = 0;
        bool ok = false;
        if (!named_) {
            ok = debug::run_check_with_copies(
                cmd_, cmd_.command,
                {{f.model, kModelPlaceholder}, {f.inputs, kInputsPlaceholder}}, keep_, &rc);
        } else {
            auto argv = debug::substitute(cmd_.command, kInputsPlaceholder, f.inputs);
            ok = debug::run_check_command(cmd_, debug::substitute(argv, kModelPlaceholder, f.model),
                                          &rc);
        }
        if (&m == original_ && rc == 2)
            log_warning(
                "--check exited with status 2 on the original model: a usage error of the check "
                "command itself? (every token after --check belongs to it, so options of debug "
                "reduce go before --check). The reduction counts it as a failure.");
        return ok;
    }

    debug::Trial trial(const ir::Model& base, debug::ReducePhase ph, size_t node, size_t& count) {
        std::unique_ptr<ir::Model> cand;
        try {
            cand = ph == debug::ReducePhase::kOutputs ? debug::cut_outputs(base, node, ref_)
                                                      : debug::cut_inputs(base, node, ref_);
        } catch (const Error& e) {
            if (e.kind() == ErrorKind::kInternal) throw;
            log_warning("Skipping node {} ({}): {}", node, base.graph->nodes()[node]->name,
                        e.what());
            return debug::Trial{true, 0, true};
        }
        log_info("Marking model {}: [{}]", debug::phase_name(ph), value_names(*cand, ph));
        const size_t n = compute_nodes(*cand);
        const bool bad =
            fails(*cand, debug::phase_name(ph), count++, {{"num_nodes", n}, {"node_index", node}});
        return debug::Trial{!bad, n, false};
    }

    // One phase over the cut points of `base`; returns the best failing cut (or a copy of
    // base when none failed) and sets `good` to the best passing cut's node index.
    std::unique_ptr<ir::Model> phase(const ir::Model& base, debug::ReducePhase ph,
                                     debug::ReduceMode mode, std::optional<size_t>& good) {
        const bool outputs = ph == debug::ReducePhase::kOutputs;
        const auto points =
            outputs ? debug::output_cut_points(base, ref_) : debug::input_cut_points(base);
        size_t count = 0;
        const auto r =
            debug::reduce_phase(ph, points.size(), compute_nodes(base), mode,
                                [&](size_t k) { return trial(base, ph, points[k], count); });
        if (r.best_good) good = points[*r.best_good];
        if (!r.best_bad) {
            log_info("No cut of the model {} failed; keeping them", debug::phase_name(ph));
            return ir::clone_model(base);
        }
        const size_t node = points[*r.best_bad];
        return outputs ? debug::cut_outputs(base, node, ref_) : debug::cut_inputs(base, node, ref_);
    }

    const ParsedArgs& a_;
    const debug::ReferenceValues& ref_;
    debug::SubgraphCheck check_;
    debug::CheckCommandOptions cmd_;
    bool external_;
    bool named_;  // the command names a placeholder (else fixed copies in the working directory)
    bool keep_;   // --no-remove-intermediate
    debug::KeyedIterations iter_;
    const ir::Model* original_ = nullptr;
};

// Writes the model, PATH_inputs.json and PATH_golden.json.
void write_repro(const ParsedArgs& a, const ir::Model& m, const debug::ReferenceValues& ref,
                 const std::string& path) {
    save_model_from_args(m, a, path);
    const std::string inputs = beside(path, "_inputs.json"), golden = beside(path, "_golden.json");
    data::save_inputs(inputs, ref.feeds_for(m));
    data::save_outputs(golden, ref.outputs_for(m));
    log_info("Saved its inputs to {} and reference outputs to {}", inputs, golden);
}

std::string names_text(const std::vector<std::string>& names) {
    std::string s;
    for (const auto& n : names) s += "\n    " + n;
    return s;
}

void report(const ParsedArgs& a, const ir::Model* bad, const Reducer& r,
            const debug::ReferenceValues& ref, size_t original) {
    const auto& it = r.iterations();
    const std::vector<std::string> nodes =
        bad ? debug::compute_node_names(*bad) : std::vector<std::string>{};
    if (a.count("json")) {
        nlohmann::ordered_json j{
            {"nodes", nodes},
            {"num_nodes", nodes.size()},
            {"constant_nodes", bad ? bad->graph->nodes().size() - nodes.size() : 0},
            {"original_nodes", original},
            {"evaluations", it.iterations()},
            {"checks_run", it.checks_run()},
            {"replayed", it.replayed()},
            {"reference_mode", ref.on_demand() ? "on-demand" : "kept"},
            {"reference_reruns", ref.reruns()},
            {"failed", bad != nullptr},
            {"output", bad && a.has("output") ? nlohmann::ordered_json(a.get("output"))
                                              : nlohmann::ordered_json()}};
        std::printf("%s\n", j.dump(2).c_str());
    }
    log_info("Finished {} iteration(s) | {} check(s) run, {} from replay | reference {}{}",
             it.iterations(), it.checks_run(), it.replayed(),
             ref.on_demand() ? "on demand, re-run " : "values kept",
             ref.on_demand() ? std::to_string(ref.reruns()) + " time(s)" : "");
    if (bad)
        log_info("Minimum Bad Model: {} of {} node(s) (+{} constant node(s)){}", nodes.size(),
                 original, bad->graph->nodes().size() - nodes.size(), names_text(nodes));
}

void validate(const ParsedArgs& a) {
    if (!a.has("output") && !a.has("min_good"))
        throw Error(ErrorKind::kUsage,
                    "debug reduce: at least one of -o and --min-good is required");
    if (a.has("no_reduce_inputs") && a.has("no_reduce_outputs"))
        throw Error(ErrorKind::kUsage,
                    "debug reduce: --no-reduce-inputs and --no-reduce-outputs are mutually "
                    "exclusive");
}

void save_outcome(const ParsedArgs& a, const Outcome& o, const debug::ReferenceValues& ref,
                  debug::ReduceMode mode, size_t original) {
    const size_t n = compute_nodes(*o.bad);
    if (mode == debug::ReduceMode::kBisect && n > 1 && 4 * n >= original)
        log_warning(
            "It looks like this model could potentially be reduced further.\n    You may want to "
            "reduce it again using --mode=linear.");
    if (a.has("output")) write_repro(a, *o.bad, ref, a.get("output"));
    if (!a.has("min_good")) return;
    if (!o.good)
        log_warning(
            "Could not find a minimal model close in size to the reduced model that does not "
            "cause a failure.");
    else
        write_repro(a, *o.good, ref, a.get("min_good"));
}

int reduce_body(const ParsedArgs& a) {
    validate(a);
    const auto mode = debug::parse_reduce_mode(a.get("mode", "bisect"));
    auto emu = emu_options(a);
    auto compare = compare::parse_compare_options(compare_args(a));
    auto cmd = check_command_options(a);
    if (a.has("check")) note_fixed_copies(cmd.command, {kModelPlaceholder, kInputsPlaceholder});
    auto model = load_model_from_args(a);
    override_shapes(a, *model);
    passes::toposort(*model->graph);  // the markers walk nodes in graph order
    const auto feeds = make_feeds(a, *model, runners::graph_input_metadata(*model->graph));
    if (a.has("save_inputs")) data::save_inputs(a.get("save_inputs"), feeds);
    log_info("Running the original model on the reference interpreter ({} sample(s))",
             feeds.size());
    const uint64_t budget = a.has("memory_budget") ? layerwise::parse_budget(a.get("memory_budget"))
                                                   : layerwise::default_budget();
    const debug::ReferenceValues ref(*model, feeds, emu.session, budget);
    Reducer r(a, ref, emu, compare, cmd);
    const size_t original = compute_nodes(*model);
    r.set_original(model.get());
    if (!r.fails(*model, "original", 0, {{"num_nodes", original}})) {
        log_error("The original model passes the check: nothing to reduce");
        report(a, nullptr, r, ref, original);
        return 1;
    }
    const Outcome o = r.run(*model, mode, !a.has("no_reduce_outputs"), !a.has("no_reduce_inputs"));
    save_outcome(a, o, ref, mode, original);
    report(a, o.bad.get(), r, ref, original);
    return 0;
}

}  // namespace

int run_debug_reduce(const std::vector<std::string>& argv) {
    return run_debug_tool(reduce_parser(), argv, "Reduction", reduce_body);
}

}  // namespace pg::cli
