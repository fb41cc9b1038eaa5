// Argument groups of `run` besides the runners: data loading, inference, comparison and
// layer-wise options, and their conversion into the data and compare layers' option structs.
#pragma once

#include <string>
#include <vector>

#include "cli/args.h"
#include "compare/compare_options.h"
#include "data/data_loader.h"

namespace pg::cli {

// --seed, --val-range, --int-min/--int-max, --float-min/--float-max, --iterations,
// --input-shapes, --load-inputs, --save-inputs.
void add_data_loader_args(ArgParser& p);
data::DataLoaderOptions data_loader_options(const ParsedArgs& a);

// --warm-up, --duration, --save-outputs, --load-outputs, --save-results, --validate, --fail-fast,
// --compare, --atol, --rtol, --check-error-stat, --error-quantile, --index-tolerance,
// --infinities-compare-equal, --no-shape-check, --channel-axis.
void add_comparator_args(ArgParser& p);
compare::CompareArgs compare_args(const ParsedArgs& a);

// --onnx-outputs/--trt-outputs (names, regexes or `mark all`), --memory-budget, --attribute-error.
void add_layerwise_args(ArgParser& p);

// A flag's seconds in [0, 1e6] (0 when absent); kUsage naming the flag otherwise.
double seconds_arg(const ParsedArgs& a, const std::string& dest, const std::string& flag);
// A non-negative integer flag value; kUsage naming the flag otherwise.
int64_t int_arg(const ParsedArgs& a, const std::string& dest, const std::string& flag,
                int64_t fallback);

}  // namespace pg::cli
