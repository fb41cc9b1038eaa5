// Constant folding with onnx-graphsurgeon's `fold_constants` semantics (polygraphy-spec.md §8.2),
// evaluated by the reference kernels instead of ONNX-Runtime: every node whose inputs are all
// constant is run once and its outputs become initializers of the same name; dead nodes are then
// removed by cleanup(). Failures are tolerated: a node whose kernel throws stays in the graph and
// is reported. To add a folding rule (like Shape on static shapes): add it to fold_constants.cc
// next to try_fold_static_shape().
//
// Differences from GraphSurgeon, by design:
//  * Each node is evaluated on its own, so failures are always isolated per node (GraphSurgeon's
//    `partitioning` is implied).
//  * Nodes with subgraphs (If, Loop, Scan) are not evaluated, and constant-condition If nodes are
//    not flattened; their subgraphs are folded.
//  * The Cast(int->float) -> op -> Cast(back) elision and the partial Shape->Gather/Slice folding
//    of dynamic shapes are not done; Shape and Size fold when the input's shape is fully static.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pg::ir {
class Graph;
struct Model;
}  // namespace pg::ir

namespace pg::passes {

struct FoldOptions {
    // Outputs larger than this many bytes stay computed at run time (nullopt = no limit).
    std::optional<uint64_t> size_threshold;
    // Fold Shape and Size nodes whose input has a fully static shape, even if the input is not
    // constant.
    bool fold_shapes = true;
    // Maximum number of passes for fold_constants (nullopt = until the node count stops
    // changing).
    std::optional<size_t> num_passes;
};

// A node whose evaluation threw: it is kept as it is.
struct FoldFailure {
    std::string node;    // "'name' (Op)"
    std::string reason;  // the error message
};

struct FoldReport {
    size_t passes = 0;
    size_t nodes_folded = 0;            // nodes whose every output became a constant
    size_t outputs_folded = 0;          // node outputs replaced by initializers
    uint64_t bytes_folded = 0;          // bytes of the new initializers that remain after cleanup
    size_t nodes_removed = 0;           // nodes removed by the cleanup after folding
    std::vector<FoldFailure> failures;  // over all passes, one entry per node
};

// Nodes of g and of every nested subgraph (the count Polygraphy compares between passes).
size_t count_nodes(const ir::Graph& g);

// One folding pass over the main graph and its subgraphs, followed by cleanup().
//   before: [Add(a, b) -> c, Add(c, d) -> e, Add(x, e) -> y]   (a, b, d initializers)
//   after:  [Add(x, e) -> y]                                    (e an initializer)
FoldReport fold_constants_pass(ir::Model& m, const FoldOptions& options = {});

// Repeats fold_constants_pass until the node count stops changing or options.num_passes passes
// have run.
FoldReport fold_constants(ir::Model& m, const FoldOptions& options = {});

}  // namespace pg::passes
