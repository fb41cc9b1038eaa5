// 2:4 structured sparsity (`surgeon prune`, polygraphy-spec.md §8.3): in every group of four
// consecutive weights along the pruning axis, the two smallest magnitudes become zero. Weights
// are the initializers feeding Conv (input 1), MatMul (inputs 0 and 1) and Gemm (A and B),
// traced back through Cast, Q/DQ and Transpose. float32, float16 and bfloat16 are pruned.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace pg::ir {
class Graph;
}

namespace pg::passes {

// An initializer that could be pruned, with the axis its groups of four run along.
struct PruneCandidate {
    std::string name;
    int64_t axis = 0;
};

struct PruneReport {
    std::vector<PruneCandidate> eligible;     // candidates of a prunable dtype and dim % 4 == 0
    std::vector<std::string> pruned;          // tensors that were not 2:4 sparse and now are
    std::vector<std::string> already_sparse;  // tensors left unchanged
    std::vector<std::string> warnings;        // tracing stopped at an unexpected producer, etc.
};

// Weights feeding MatMul / Gemm / Conv in node order (first axis wins for a shared weight).
//   [MatMul(a, Transpose(w, perm=[1, 0]))] -> {w, axis 1}
std::vector<PruneCandidate> find_prune_candidates(const ir::Graph& g,
                                                  std::vector<std::string>* warnings = nullptr);

// True when every group of four along `axis` has at least two zeros.
//   [1, 0, 0, 2] along axis 0 -> true;  [1, 0, 3, 2] -> false
bool is_2_4_sparse(const Tensor& t, int64_t axis);

// Zeroes the two smallest magnitudes of every group of four along `axis` (first wins ties).
//   [4, -1, 3, 2] along axis 0 -> [4, 0, 3, 0]
Tensor prune_2_4(const Tensor& t, int64_t axis);

// Prunes every eligible weight of g that is not already 2:4 sparse.
PruneReport prune(ir::Graph& g);

}  // namespace pg::passes
