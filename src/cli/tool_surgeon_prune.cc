// `polygraph surgeon prune`: prune weights to 2:4 structured sparsity (polygraphy-spec.md §3.5,
// §8.3).
#include "base/error.h"
#include "base/log.h"
#include "cli/common.h"
#include "cli/tool_surgeon.h"
#include "passes/prune.h"

namespace pg::cli {

namespace {

ArgParser prune_parser() {
    ArgParser p("polygraph surgeon prune",
                "[EXPERIMENTAL] Prune the weights of a model to follow a 2:4 structured sparsity "
                "pattern without regard for accuracy: in every group of four weights along the "
                "pruning axis, the two smallest magnitudes become zero. Weights feeding Conv, "
                "MatMul and Gemm (float32, float16, bfloat16) are pruned.");
    p.positional("model_file", "Path to the ONNX model.");
    add_model_load_args(p);
    add_model_save_args(p);
    add_logger_args(p);
    return p;
}

int run_prune(const ParsedArgs& a) {
    const std::string out_path = required_output(a);
    auto model = load_model_from_args(a);
    log_model_summary("Original Model", *model);
    passes::PruneReport r = passes::prune(*model->graph);
    for (const auto& w : r.warnings) log_warning("{}", w);
    log_info("Found: {} weight tensor(s) eligible for pruning.", r.eligible.size());
    for (const auto& name : r.already_sparse) log_info("Found sparse tensor: {}", name);
    for (const auto& name : r.pruned) log_info("Pruned weight tensor: {}", name);
    log_info("Replacing weights to build new model object...");
    save_model_from_args(*model, a, out_path);
    log_model_summary("New Model", *model);
    return 0;
}

}  // namespace

int surgeon_prune(const std::vector<std::string>& argv) {
    return run_tool(prune_parser(), argv, run_prune);
}

}  // namespace pg::cli
