// `polygraph surgeon sanitize`: change outputs and input shapes, clean up, sort and constant-fold
// a model (polygraphy-spec.md §3.5, §8.2). Folding and fallback shape inference use the reference
// interpreter (passes/fold_constants.h, runtime/infer_shapes.h).
#include <cstdlib>

#include "base/error.h"
#include "base/log.h"
#include "cli/common.h"
#include "cli/tool_surgeon.h"
#include "ir/graph.h"
#include "passes/cleanup.h"
#include "passes/fold_constants.h"
#include "passes/outputs.h"
#include "passes/override_input_shapes.h"
#include "passes/toposort.h"
#include "runtime/infer_shapes.h"

namespace pg::cli {

namespace {

ArgParser sanitize_parser() {
    ArgParser p("polygraph surgeon sanitize",
                "Clean up, topologically sort, and change the inputs or outputs of an ONNX model.");
    p.positional("model_file", "Path to the ONNX model.");
    p.group("Options");
    p.flag({"--cleanup"}, "cleanup",
           "Remove nodes and tensors that do not contribute to the graph outputs.");
    p.flag({"--toposort"}, "toposort", "Topologically sort the nodes of the model.");
    p.group("Model");
    p.values({"--override-input-shapes", "--override-inputs"}, "override_input_shapes",
             "NAME:SHAPE",
             "Override input shapes, e.g. --override-input-shapes x:['batch',3,224,224] y:[1]. "
             "Strings are symbolic dims. The recorded shapes of all other tensors are cleared.");
    p.group("ONNX Shape Inference");
    p.flag({"--no-shape-inference"}, "no_shape_inference",
           "Accepted for compatibility: Polygraph has no symbolic shape inference, so this "
           "changes nothing.");
    p.flag({"--force-fallback-shape-inference"}, "force_fallback_shape_inference",
           "Run the model once with the reference interpreter on synthetic inputs (dynamic dims "
           "set to 1) and record the shape and data type of every tensor. Shapes become static.");
    add_model_load_args(p);
    p.values({"--outputs"}, "outputs", "NAME",
             "Names of tensors to mark as outputs, replacing the current ones. The special value "
             "'mark all' marks every non-Constant node output.");
    p.values({"--exclude-outputs"}, "exclude_outputs", "NAME",
             "Names of outputs to unmark (applied after --outputs).");
    add_model_save_args(p);
    p.group("Constant Folding");
    p.flag({"--fold-constants"}, "fold_constants",
           "Fold constants: evaluate, with the reference interpreter, every node whose inputs are "
           "all constant and replace its outputs by initializers.");
    p.value({"--num-passes", "--num-const-fold-passes"}, "num_passes", "NUM",
            "Number of constant folding passes (only with --fold-constants).");
    p.value({"--partitioning"}, "partitioning", "{basic,recursive}",
            "Accepted for compatibility: nodes are always evaluated one by one, so a failure "
            "only keeps the failing node (only with --fold-constants).",
            {"basic", "recursive"});
    p.flag({"--no-fold-shapes"}, "no_fold_shapes",
           "Do not fold Shape nodes (only with --fold-constants).");
    p.flag({"--no-per-pass-shape-inference"}, "no_per_pass_shape_inference",
           "Accepted for compatibility: no shape inference runs between folding passes (only "
           "with --fold-constants).");
    p.value({"--fold-size-threshold"}, "fold_size_threshold", "BYTES",
            "Do not fold nodes whose outputs exceed this size; K, M, G suffixes allowed (only "
            "with --fold-constants).");
    add_logger_args(p);
    return p;
}

// The value of --num-passes; kUsage unless a non-negative integer.
size_t parse_num_passes(const std::string& v) {
    char* end = nullptr;
    const long n = std::strtol(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || n < 0)
        throw Error(ErrorKind::kUsage,
                    "--num-passes: expected a non-negative integer, got '" + v + "'");
    return static_cast<size_t>(n);
}

// Validates the folding flags; warns about the ones ignored without --fold-constants.
void check_fold_args(const ParsedArgs& a) {
    if (a.has("num_passes")) parse_num_passes(a.get("num_passes"));
    if (a.has("fold_size_threshold")) parse_num_bytes(a.get("fold_size_threshold"));
    if (a.count("fold_constants")) {
        if (a.has("partitioning"))
            log_info("Note: --partitioning is implied: each node is folded on its own.");
        return;
    }
    const std::pair<const char*, const char*> ignored[] = {
        {"num_passes", "--num-passes"},
        {"partitioning", "--partitioning"},
        {"no_fold_shapes", "--no-fold-shapes"},
        {"no_per_pass_shape_inference", "--no-per-pass-shape-inference"},
        {"fold_size_threshold", "--fold-size-threshold"}};
    for (const auto& [dest, flag] : ignored)
        if (a.has(dest) || a.count(dest))
            log_warning("Argument: '{}' will be ignored since constant folding is not enabled.",
                        flag);
}

passes::FoldOptions fold_options(const ParsedArgs& a) {
    passes::FoldOptions o;
    if (a.has("fold_size_threshold"))
        o.size_threshold = parse_num_bytes(a.get("fold_size_threshold"));
    if (a.has("num_passes")) o.num_passes = parse_num_passes(a.get("num_passes"));
    o.fold_shapes = !a.count("no_fold_shapes");
    return o;
}

// One folding pass with Polygraphy's log lines; false when it failed or changed nothing.
bool fold_pass(ir::Model& m, const passes::FoldOptions& o, size_t index,
               passes::FoldReport& total) {
    const size_t before = passes::count_nodes(*m.graph);
    logger().log(Severity::kStart, fmt::format("Folding Constants | Pass {}", index + 1));
    try {
        passes::FoldReport r = passes::fold_constants_pass(m, o);
        for (const auto& f : r.failures)
            log_warning("Inference failed for node: {}. Note: Error was:\n{}", f.node, f.reason);
        total.nodes_folded += r.nodes_folded;
        total.bytes_folded += r.bytes_folded;
    } catch (const Error& e) {
        log_warning(
            "Constant folding pass failed. Skipping subsequent passes.\nNote: Error was:\n{}",
            e.what());
        return false;
    }
    const size_t after = passes::count_nodes(*m.graph);
    logger().log(Severity::kFinish,
                 fmt::format("    Total Nodes | Original: {:5}, After Folding: {:5} | {:5} Nodes "
                             "Folded",
                             before, after, static_cast<long>(before) - static_cast<long>(after)));
    return after != before;
}

// Repeats folding passes until the node count stops changing or --num-passes is reached.
void fold_model(ir::Model& m, const passes::FoldOptions& o) {
    passes::FoldReport total;
    for (size_t index = 0; !o.num_passes || index < *o.num_passes; ++index)
        if (!fold_pass(m, o, index, total)) break;
    log_verbose("Folded {} node(s) into {} byte(s) of initializers", total.nodes_folded,
                total.bytes_folded);
}

void run_fallback_inference(ir::Model& m) {
    log_info(
        "Running inference with the reference interpreter to determine metadata for "
        "intermediate tensors.\nThis will cause intermediate models to have static shapes.");
    runtime::InferShapesReport r = runtime::infer_shapes_by_running(m);
    log_verbose("Recorded the types of {} tensor(s)", r.values_typed);
}

void apply_outputs(ir::Graph& g, const ParsedArgs& a) {
    const std::vector<std::string> outs = a.get_all("outputs");
    if (outs == std::vector<std::string>{"mark", "all"})
        passes::mark_all_outputs(g);
    else if (!outs.empty())
        passes::set_outputs(g, outs);
    if (a.has("exclude_outputs")) passes::exclude_outputs(g, a.get_all("exclude_outputs"));
}

void apply_override(ir::Graph& g, const std::vector<passes::TensorSpec>& specs) {
    std::vector<std::pair<std::string, ir::Shape>> shapes;
    for (const auto& s : specs) {
        if (!s.shape)
            throw Error(ErrorKind::kUsage,
                        "--override-input-shapes: '" + s.name + "' needs a shape");
        shapes.emplace_back(s.name, *s.shape);
    }
    passes::override_input_shapes(g, shapes);
    std::string meta;
    for (ir::Value* in : g.inputs()) {
        const ir::TypeInfo& t = in->type();
        meta += (meta.empty() ? "{" : ",\n ") + in->name() + " [dtype=" + dtype_name(t.elem_type) +
                ", shape=" + (t.shape ? ir::shape_to_string(*t.shape) : std::string("None")) + "]";
    }
    log_info("Overriding input shapes to:\n{}}}", meta.empty() ? "{" : meta);
    log_warning(
        "Shapes of other tensors were cleared; use --force-fallback-shape-inference to "
        "re-derive them by running the model.");
}

int run_sanitize(const ParsedArgs& a) {
    const std::string out_path = required_output(a);
    check_fold_args(a);
    const auto overrides =
        parse_meta(a.get_all("override_input_shapes"), true, false, "--override-input-shapes");
    auto model = load_model_from_args(a);
    log_model_summary("Original Model", *model);
    ir::Graph& g = *model->graph;
    apply_outputs(g, a);
    if (!overrides.empty()) apply_override(g, overrides);
    if (a.count("force_fallback_shape_inference")) run_fallback_inference(*model);
    if (a.count("cleanup")) {
        log_info("Cleaning up graph");
        passes::CleanupReport r = passes::cleanup(g);
        log_verbose("Removed {} node(s) and {} unused value(s)", r.nodes_removed, r.values_removed);
    }
    if (a.count("toposort")) {
        log_info("Topologically sorting graph");
        passes::ToposortReport r = passes::toposort(g);
        log_verbose("Moved {} node(s)", r.nodes_moved);
    }
    if (a.count("fold_constants")) fold_model(*model, fold_options(a));
    save_model_from_args(*model, a, out_path);
    log_model_summary("New Model", *model);
    return 0;
}

}  // namespace

int surgeon_sanitize(const std::vector<std::string>& argv) {
    return run_tool(sanitize_parser(), argv, run_sanitize);
}

}  // namespace pg::cli
