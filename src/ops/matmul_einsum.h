// Einsum's reference kernel: parses the equation (ellipsis, repeated labels = diagonals,
// implicit output) and evaluates it with plain loops over every label combination.
#pragma once

#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace pg::ops {

// Which input axes each label indexes, and the output's labels.
struct EinsumPlan {
    std::vector<std::vector<int>> input_labels;  // per input, a label id per axis
    std::vector<int> output_labels;
    std::vector<int64_t> label_size;  // by label id
};

// Parses `equation` for inputs of the given shapes; kInvalidInput when they do not fit.
EinsumPlan plan_einsum(const std::string& equation, const std::vector<std::vector<int64_t>>& dims);

// Evaluates the equation on same-typed inputs of element type T (float, double, integers).
template <typename T>
Tensor einsum_reference(const std::string& equation, const std::vector<Tensor>& inputs);

}  // namespace pg::ops
