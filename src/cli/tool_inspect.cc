// `polygraph inspect`: model summaries (data files come with `run`).
#include <cstdio>

#include "base/error.h"
#include "base/log.h"
#include "cli/common.h"
#include "cli/model_report.h"
#include "cli/tools.h"

namespace pg::cli {

namespace {

ArgParser inspect_model_parser() {
    ArgParser p("polygraph inspect model",
                "Display information about an ONNX model: opsets, inputs and outputs (with symbolic "
                "dims), initializers, nodes. --show adds layers, attributes and weights; --json prints "
                "a machine-readable summary instead.");
    p.positional("model_file", "Path to the ONNX model.");
    p.group("Display");
    p.values({"--show"}, "show", "{layers,attrs,weights}",
             "What to show: 'layers' (each node with its inputs and outputs), 'attrs' (node "
             "attributes; implies layers), 'weights' (initializer values; implies layers).");
    p.value({"--mode", "--layer-info"}, "mode", "{none,basic,attrs,full}",
            "Older spelling of --show: basic = layers, attrs = layers attrs, full = layers attrs weights.",
            {"none", "basic", "attrs", "full"});
    p.flag({"--json"}, "json", "Print a JSON summary to stdout instead of the text report.");
    p.value({"--display-as", "--convert-to"}, "display_as", "{trt}",
            "Show the model as a TensorRT network: needs TensorRT, so the ONNX layers are shown "
            "instead, with a warning.",
            {"trt"});
    add_model_load_args(p);
    add_model_type_arg(p);
    add_logger_args(p);
    return p;
}

ShowOptions show_options(const ParsedArgs& a) {
    ShowOptions s;
    for (const auto& v : a.get_all("show")) {
        if (v == "layers") s.layers = true;
        else if (v == "attrs") s.attrs = true;
        else if (v == "weights") s.weights = true;
        else throw Error(ErrorKind::kUsage, "--show: invalid choice '" + v + "' (choose from layers, attrs, weights)");
    }
    const std::string mode = a.get("mode");
    if (mode == "basic") s.layers = true;
    if (mode == "attrs") s.layers = s.attrs = true;
    if (mode == "full") s.layers = s.attrs = s.weights = true;
    if (s.attrs || s.weights) s.layers = true;
    return s;
}

int inspect_model(const std::vector<std::string>& argv) {
    return run_tool(inspect_model_parser(), argv, [](const ParsedArgs& a) {
        const bool json = a.count("json") > 0;
        if (json && logger().threshold() < Severity::kWarning) logger().set_threshold(Severity::kWarning);
        auto model = load_model_from_args(a);
        if (a.has("display_as"))
            log_warning("--display-as trt: showing a TensorRT network needs TensorRT; these are "
                        "the ONNX model's layers");
        if (json) {
            std::string out = model_json(*model) + "\n";
            std::fwrite(out.data(), 1, out.size(), stdout);
        } else {
            logger().log(Severity::kInfo, "==== ONNX Model ====\n" + model_text(*model, show_options(a)));
        }
        return 0;
    });
}

}  // namespace

// tool_inspect_data.cc
int inspect_data(const std::vector<std::string>& argv);

int run_inspect(const std::vector<std::string>& argv) {
    static const std::vector<ToolEntry> subtools = {
        {"model", "Display information about an ONNX model.", inspect_model},
        {"data", "Display information about inference inputs and outputs.", inspect_data},
    };
    return run_subtool("polygraph inspect", "Display information about models and data files.", subtools, argv);
}

}  // namespace pg::cli
