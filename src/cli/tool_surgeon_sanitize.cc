// `polygraph surgeon sanitize`: change outputs and input shapes, clean up and sort a model
// (polygraphy-spec.md §3.5, §8.2). Constant folding needs the reference interpreter and is
// refused until it exists.
#include "base/error.h"
#include "base/log.h"
#include "cli/common.h"
#include "cli/tool_surgeon.h"
#include "ir/graph.h"
#include "passes/cleanup.h"
#include "passes/outputs.h"
#include "passes/override_input_shapes.h"
#include "passes/toposort.h"

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
           "Accepted for compatibility: Polygraph does not run shape inference yet (it comes "
           "with the reference interpreter), so this changes nothing.");
    add_model_load_args(p);
    p.values({"--outputs"}, "outputs", "NAME",
             "Names of tensors to mark as outputs, replacing the current ones. The special value "
             "'mark all' marks every non-Constant node output.");
    p.values({"--exclude-outputs"}, "exclude_outputs", "NAME",
             "Names of outputs to unmark (applied after --outputs).");
    add_model_save_args(p);
    p.group("Constant Folding");
    p.flag(
        {"--fold-constants"}, "fold_constants",
        "Fold constants. Not available yet: it needs the reference interpreter (exit status 4).");
    p.value({"--num-passes", "--num-const-fold-passes"}, "num_passes", "NUM",
            "Number of constant folding passes (only with --fold-constants).");
    p.value({"--partitioning"}, "partitioning", "{basic,recursive}",
            "Partitioning of folding failures (only with --fold-constants).",
            {"basic", "recursive"});
    p.flag({"--no-fold-shapes"}, "no_fold_shapes",
           "Do not fold Shape nodes (only with --fold-constants).");
    p.flag({"--no-per-pass-shape-inference"}, "no_per_pass_shape_inference",
           "Skip shape inference between folding passes (only with --fold-constants).");
    p.value({"--fold-size-threshold"}, "fold_size_threshold", "BYTES",
            "Do not fold nodes whose outputs exceed this size; K, M, G suffixes allowed (only "
            "with --fold-constants).");
    add_logger_args(p);
    return p;
}

// Validates the folding flags; refuses --fold-constants, warns about ignored options otherwise.
void check_fold_args(const ParsedArgs& a) {
    if (a.has("num_passes")) {
        char* end = nullptr;
        const std::string v = a.get("num_passes");
        const long n = std::strtol(v.c_str(), &end, 10);
        if (v.empty() || *end != '\0' || n < 0)
            throw Error(ErrorKind::kUsage,
                        "--num-passes: expected a non-negative integer, got '" + v + "'");
    }
    if (a.has("fold_size_threshold")) parse_num_bytes(a.get("fold_size_threshold"));
    if (a.count("fold_constants"))
        throw Error(ErrorKind::kUnsupported,
                    "--fold-constants: constant folding needs the reference interpreter, which is "
                    "not built yet");
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
        "Shapes of other tensors were cleared; shape inference is not available yet to "
        "re-derive them.");
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
    save_model_from_args(*model, a, out_path);
    log_model_summary("New Model", *model);
    return 0;
}

}  // namespace

int surgeon_sanitize(const std::vector<std::string>& argv) {
    return run_tool(sanitize_parser(), argv, run_sanitize);
}

}  // namespace pg::cli
