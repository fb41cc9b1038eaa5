// Internal to `run --attribute-error`: separates a divergent node's own (local) error from the
// error it inherits. Each node is re-run alone on the second runner with the FIRST runner's
// input tensors; the difference to the first runner's output is the node's local error.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "compare/compare_options.h"
#include "ir/model.h"
#include "runners/runner.h"

namespace pg::cli {

struct Attribution {
    std::string node, op, tensor;
    bool computed = false;  // false: see note
    bool local_passed = false;
    double local_max_abs = 0, local_max_rel = 0;
    std::string note;
};

// Attributes the error of `nodes` (at most a few; their inputs are captured in memory).
std::vector<Attribution> attribute_errors(runners::Runner& a, runners::Runner& b,
                                          const ir::Model& m,
                                          const std::vector<const ir::Node*>& nodes,
                                          const std::map<std::string, Tensor>& feed,
                                          const compare::CompareOptions& opts);

}  // namespace pg::cli
