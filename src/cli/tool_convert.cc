// `polygraph convert`: ONNX -> ONNX conversion to float16 or bfloat16 (polygraphy-spec.md §3.2,
// §8.4; the pass is passes/convert_fp16.h). Polygraphy's TensorRT targets (engines) are not
// available: the output must be an ONNX file.
//
// Defaults follow Polygraphy: graph inputs and outputs stay float32 (its loader always passes
// keep_io_types=True), and the op block list is onnxconverter-common's default list. Our
// additions: --fp-to-bf16, --no-keep-io-types, --op-block-list (replaces the default list; give
// it without names to block nothing) and --node-block-list.
#include <filesystem>

#include "base/error.h"
#include "base/log.h"
#include "cli/common.h"
#include "cli/tools.h"
#include "passes/convert_fp16.h"

namespace pg::cli {

namespace {

ArgParser convert_parser() {
    ArgParser p("polygraph convert", "Convert ONNX models to float16 or bfloat16.");
    p.positional("model_file", "Path to the ONNX model.");
    p.group("Options");
    p.value({"-o", "--output"}, "output", "OUTPUT", "Path to save the converted ONNX model to.");
    p.value({"--convert-to"}, "convert_to", "{onnx}",
            "The format to convert to. Only 'onnx' is available (no TensorRT engines).", {"onnx"});
    p.value({"--model-type"}, "model_type", "{onnx}", "The type of the input model.", {"onnx"});
    p.group("FP16 Conversion");
    p.flag({"--fp-to-fp16"}, "fp_to_fp16",
           "Convert float32 tensors, initializers and constants to float16. Initializers beyond "
           "+-65504 are clamped to +-65504.");
    p.flag({"--fp-to-bf16"}, "fp_to_bf16", "Convert float32 tensors to bfloat16 instead.");
    p.flag({"--keep-io-types"}, "keep_io_types",
           "Keep graph inputs and outputs in float32, with Cast nodes after the inputs and "
           "before the outputs (output names are kept). This is the default, as in Polygraphy.");
    p.flag({"--no-keep-io-types"}, "no_keep_io_types",
           "Convert graph inputs and outputs to the 16-bit type too.");
    p.values({"--op-block-list"}, "op_block_list", "OP",
             "Op types to keep in float32, replacing the default list (onnxconverter-common's: "
             "Resize, TopK, Range, CumSum, Min, Max, NonMaxSuppression, ML ops, ...). Without "
             "names, no op type is blocked.",
             Nargs::kZeroOrMore);
    p.values({"--node-block-list"}, "node_block_list", "NAME",
             "Names of nodes to keep in float32.");
    add_model_load_args(p);
    add_model_save_args(p, false);
    add_logger_args(p);
    return p;
}

// The path extensions Polygraphy maps to non-ONNX model types.
void check_paths(const ParsedArgs& a, const std::string& out) {
    const std::string ext = std::filesystem::path(out).extension().string();
    if (ext == ".engine" || ext == ".plan")
        throw Error(ErrorKind::kUnsupported,
                    "Cannot convert to model type: engine (" + out +
                        "): TensorRT engines are not available in Polygraph; use an .onnx output");
    if (ext != ".onnx" && a.get("convert_to") != "onnx")
        throw Error(ErrorKind::kUsage,
                    "Could not automatically determine model type based on output path: " + out +
                        "\nPlease specify the desired output format with --convert-to");
    const std::string in_ext = std::filesystem::path(a.get("model_file")).extension().string();
    if (in_ext != ".onnx" && a.get("model_type") != "onnx")
        throw Error(ErrorKind::kUnsupported,
                    "Only ONNX models can be converted: '" + a.get("model_file") +
                        "' is not an .onnx file (use --model-type onnx if it is one)");
}

passes::ConvertFp16Options convert_options(const ParsedArgs& a) {
    const bool fp16 = a.count("fp_to_fp16") > 0, bf16 = a.count("fp_to_bf16") > 0;
    if (fp16 == bf16)
        throw Error(ErrorKind::kUsage,
                    fp16 ? "--fp-to-fp16 and --fp-to-bf16 cannot be combined"
                         : "Nothing to convert: give --fp-to-fp16 or --fp-to-bf16");
    if (a.count("keep_io_types") && a.count("no_keep_io_types"))
        throw Error(ErrorKind::kUsage, "--keep-io-types and --no-keep-io-types cannot be combined");
    passes::ConvertFp16Options o;
    o.target = fp16 ? DataType::kFloat16 : DataType::kBFloat16;
    o.keep_io_types = !a.count("no_keep_io_types");
    if (a.has("op_block_list") || a.count("op_block_list"))
        o.op_block_list = a.get_all("op_block_list");
    o.node_block_list = a.get_all("node_block_list");
    return o;
}

void log_report(const passes::ConvertFp16Report& r, DataType target) {
    const std::string fmt_name = dtype_name(target);
    if (r.clamped)
        log_warning(
            "{} initializer value(s) were beyond the range of {} and were clamped to "
            "+-{}",
            r.clamped, fmt_name, target == DataType::kFloat16 ? "65504" : "3.39e+38");
    if (r.flushed)
        log_warning("{} nonzero initializer value(s) are too small for {} and became 0", r.flushed,
                    fmt_name);
    for (const auto& n : r.unknown_node_names)
        log_warning("--node-block-list: no node named '{}'", n);
    for (const auto& v : r.untyped_fixed_inputs)
        log_warning(
            "Tensor '{}' has an unknown type and feeds a float32-only input; if it is "
            "float16 the model will be invalid",
            v);
    log_verbose(
        "Converted {} value type(s), {} initializer(s), {} attribute(s); kept {} node(s) "
        "in float32; inserted {} Cast node(s)",
        r.values, r.initializers, r.attributes, r.nodes_blocked, r.casts_inserted);
}

int run_convert_tool(const ParsedArgs& a) {
    if (!a.has("output"))
        throw Error(ErrorKind::kUsage,
                    "polygraph convert: error: the following arguments are required: -o/--output");
    const std::string out = a.get("output");
    check_paths(a, out);
    const passes::ConvertFp16Options o = convert_options(a);
    auto model = load_model_from_args(a);
    log_info("Converting float tensors to {}", dtype_name(o.target));
    const passes::ConvertFp16Report r = passes::convert_float_to_fp16(*model, o);
    log_report(r, o.target);
    save_model_from_args(*model, a, out);
    return 0;
}

}  // namespace

int run_convert(const std::vector<std::string>& argv) {
    return run_tool(convert_parser(), argv, run_convert_tool);
}

}  // namespace pg::cli
