// The outputs of runners as compare/ sees them: per runner, per iteration, named tensors in the
// runner's output order (the same type as runners::NamedTensors). Duplicate runner names are
// allowed, as in Polygraphy's RunResults.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "tensor/tensor.h"

namespace pg::compare {

using Outputs = std::vector<std::pair<std::string, Tensor>>;

struct RunResult {
    std::string runner;
    std::vector<Outputs> iterations;
};

}  // namespace pg::compare
