// `polygraph surgeon extract`: keep the subgraph between the given tensors (polygraphy-spec.md
// §3.5, §8.1). Metadata given as `auto` comes from the model; when the model does not record it
// (or with --force-fallback-shape-inference), from running a copy of the model with the reference
// interpreter (runtime/infer_shapes.h).
#include <map>

#include "base/error.h"
#include "base/log.h"
#include "cli/common.h"
#include "cli/tool_surgeon.h"
#include "ir/clone.h"
#include "passes/extract.h"
#include "runtime/infer_shapes.h"

namespace pg::cli {

namespace {

ArgParser extract_parser() {
    ArgParser p("polygraph surgeon extract",
                "Extract a subgraph from an ONNX model based on the specified inputs and outputs. "
                "Types marked `auto` are taken from what the model records (graph inputs and "
                "outputs, value_info, initializers), else from running the model once with the "
                "reference interpreter.");
    p.positional("model_file", "Path to the ONNX model.");
    p.group("Options");
    p.values({"--inputs"}, "inputs", "NAME:SHAPE:DTYPE",
             "Input metadata for the subgraph (names, shapes and data types), e.g. "
             "--inputs input0:[1,3,224,224]:float32 input1:auto:auto. Use `auto` to take a field "
             "from the model. If omitted, the current model inputs are kept.");
    p.values({"--outputs"}, "outputs", "NAME:DTYPE",
             "Output metadata for the subgraph (names and data types), e.g. --outputs "
             "output0:float32 output1:auto. If omitted, the current model outputs are kept.");
    p.group("Model");
    p.values({"--model-input-shapes", "--model-inputs"}, "model_input_shapes", "NAME:SHAPE",
             "Input shapes of the original model for fallback shape inference, e.g. "
             "--model-inputs x:[1,3,224,224]. Dynamic dims not given here are set to 1.");
    p.group("ONNX Shape Inference");
    p.flag({"--force-fallback-shape-inference"}, "force_fallback_shape_inference",
           "Always take `auto` metadata from running the model with the reference interpreter "
           "(shapes become static), even when the model records it.");
    add_model_load_args(p);
    add_model_save_args(p);
    add_logger_args(p);
    return p;
}

// Static shapes from --model-input-shapes; dynamic ones are ignored with a warning.
std::map<std::string, std::vector<int64_t>> model_input_shapes(const ParsedArgs& a) {
    std::map<std::string, std::vector<int64_t>> out;
    for (const auto& s :
         parse_meta(a.get_all("model_input_shapes"), true, false, "--model-input-shapes")) {
        if (!s.shape) continue;
        std::vector<int64_t> dims;
        for (const ir::Dim& d : *s.shape)
            if (d.value && *d.value >= 0) dims.push_back(*d.value);
        if (dims.size() == s.shape->size())
            out[s.name] = dims;
        else
            log_warning("Input tensor: {} | Provided shape {} is dynamic; using the default.",
                        s.name, ir::shape_to_string(*s.shape));
    }
    return out;
}

// True when the model does not record everything `auto` asks for.
bool needs_fallback(const ir::Graph& g, const passes::ExtractOptions& o) {
    for (const auto& s : o.inputs) {
        const passes::TensorSpec r = passes::resolve_spec(g, s, true, false);
        if (!r.dtype || (!r.shape && !g.find_value(s.name)->is_initializer())) return true;
    }
    for (const auto& s : o.outputs)
        if (!passes::resolve_spec(g, s, false, false).dtype) return true;
    return false;
}

// What running the model says about tensor `name`: its recorded type, or the fed shape.
passes::TensorSpec inferred_spec(const ir::Graph& g, const std::string& name,
                                 const runtime::InferShapesReport& r) {
    passes::TensorSpec out = passes::resolve_spec(g, {name, {}, {}}, false, false);
    if (auto it = r.input_shapes.find(name); it != r.input_shapes.end())
        out.shape = ir::make_shape(it->second);
    return out;
}

// Every graph input of g (initializers apart) has a type with a fully known shape.
bool static_inputs(const ir::Graph& g) {
    for (const ir::Value* v : g.inputs()) {
        if (v->is_initializer()) continue;
        const auto& shape = v->type().shape;
        if (!shape) return false;
        for (const ir::Dim& d : *shape)
            if (!d.is_known()) return false;
    }
    return true;
}

// user || model || fallback (user || fallback when forced). Output shapes come from the fallback
// when forced, or when every graph input is static and no --model-input-shapes changed them:
// Polygraphy runs ONNX shape inference before its fallback, which then gives the same static
// shapes (SPEC-DEVIATION: a data-dependent output, NonZero's, gets the run's size where ONNX
// would leave it symbolic).
passes::TensorSpec choose(const ir::Graph& g, const passes::TensorSpec& user,
                          const passes::TensorSpec& fallback, bool is_input, bool forced,
                          bool static_run) {
    passes::TensorSpec out = forced ? user : passes::resolve_spec(g, user, is_input, false);
    if (!out.dtype) out.dtype = fallback.dtype;
    if (!out.shape && (is_input || forced || static_run)) out.shape = fallback.shape;
    return out;
}

// Fills `auto` metadata by running a copy of the model (Polygraphy's fallback shape inference).
void fill_by_running(const ir::Model& m, const ParsedArgs& a, passes::ExtractOptions& o,
                     bool forced) {
    log_info(
        "Running inference with the reference interpreter to determine metadata for "
        "intermediate tensors.\nThis will cause intermediate models to have static shapes.");
    auto copy = ir::clone_model(m);
    const runtime::InferShapesReport r =
        runtime::infer_shapes_by_running(*copy, model_input_shapes(a));
    const bool static_run = static_inputs(*m.graph) && !a.has("model_input_shapes");
    for (auto& s : o.inputs)
        s = choose(*m.graph, s, inferred_spec(*copy->graph, s.name, r), true, forced, static_run);
    for (auto& s : o.outputs)
        s = choose(*m.graph, s, inferred_spec(*copy->graph, s.name, r), false, forced, static_run);
}

int run_extract(const ParsedArgs& a) {
    const std::string out_path = required_output(a);
    passes::ExtractOptions options;
    options.inputs = parse_meta(a.get_all("inputs"), true, true, "--inputs");
    options.outputs = parse_meta(a.get_all("outputs"), false, true, "--outputs");
    parse_meta(a.get_all("model_input_shapes"), true, false, "--model-input-shapes");
    if (a.has("inputs") && options.inputs.empty())
        throw Error(ErrorKind::kUsage, "--inputs expects at least one value");
    auto model = load_model_from_args(a);
    log_model_summary("Original Model", *model);
    const bool forced = a.count("force_fallback_shape_inference") > 0;
    if (forced || needs_fallback(*model->graph, options))
        fill_by_running(*model, a, options, forced);
    passes::ExtractReport r = with_context("while extracting a subgraph",
                                           [&] { return passes::extract(*model->graph, options); });
    if (!r.unbound.empty()) {
        std::string names;
        for (const auto& n : r.unbound) names += (names.empty() ? "" : ", ") + n;
        throw Error(
            ErrorKind::kInvalidInput,
            "the extracted subgraph reads tensors that are neither graph inputs nor produced "
            "by a node: " +
                names + "; add them to --inputs");
    }
    log_verbose("Removed {} node(s) and {} unused value(s)", r.nodes_removed, r.values_removed);
    save_model_from_args(*model, a, out_path);
    log_model_summary("New Model", *model);
    return 0;
}

}  // namespace

int surgeon_extract(const std::vector<std::string>& argv) {
    return run_tool(extract_parser(), argv, run_extract);
}

}  // namespace pg::cli
