// `polygraph surgeon extract`: keep the subgraph between the given tensors (polygraphy-spec.md
// §3.5, §8.1).
#include "base/error.h"
#include "base/log.h"
#include "cli/common.h"
#include "cli/tool_surgeon.h"
#include "passes/extract.h"

namespace pg::cli {

namespace {

ArgParser extract_parser() {
    ArgParser p("polygraph surgeon extract",
                "Extract a subgraph from an ONNX model based on the specified inputs and outputs. "
                "Types marked `auto` are taken from what the model records (graph inputs and "
                "outputs, value_info, initializers); shape inference is not available yet.");
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
             "--model-inputs x:[1,3,224,224]. Fallback inference needs the reference "
             "interpreter (not built yet); the shapes are checked and otherwise unused.");
    add_model_load_args(p);
    add_model_save_args(p);
    add_logger_args(p);
    return p;
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
