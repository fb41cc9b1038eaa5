// Internal to `run`: the layer-wise mode (--onnx-outputs): every selected tensor of consecutive
// runner pairs is compared as both produce it, a table lists them in topological order, and the
// first divergent node is named.
#pragma once

#include <memory>
#include <vector>

#include <nlohmann/json.hpp>
#include "cli/args.h"

#include "compare/compare_options.h"
#include "ir/model.h"
#include "runners/runner.h"

namespace pg::cli {

struct LayerwiseOutcome {
    bool passed = true;
    nlohmann::ordered_json json;  // per pair: tensors with statistics, first divergent node
};

LayerwiseOutcome run_layerwise(const ParsedArgs& a, const ir::Model& model,
                               std::vector<std::unique_ptr<runners::Runner>>& runners,
                               const std::vector<runners::NamedTensors>& feeds,
                               const compare::CompareOptions& opts);

}  // namespace pg::cli
