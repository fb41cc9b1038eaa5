// Internal to the runtime: plan-time fusion for runs that no NodeHook observes, bit-identical to
// the plain steps. Conv -> BatchNormalization -> residual Add / Sum -> Relu / Clip chains (any
// part but the Conv optional) become one step (ops/conv_fused.h): each intermediate value has
// exactly one reader (the next op of the chain, as its first input; either input of the Add /
// Sum) and is not a graph output, and the later ops' other inputs are initializers or graph
// inputs, or (the residual) an earlier step's output, so they can be read at the Conv's place.
// BatchNormalization -> Relu pairs become one step at the BatchNormalization (fuse_bn.cc);
// element-wise chains one step at their last node's place (fuse_eltwise.cc). To fuse
// another pattern, match it here and give ops/ a kernel for it.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "ir/graph.h"
#include "runtime/plan.h"

namespace pg::runtime {

// The fused step list of `p`: p.steps with each chain's Conv step running the whole chain and
// the chain's later steps kept only to release slots at their place. Empty when nothing fuses.
// `opset` is the graph's default-domain opset; `fused_nodes` receives the number of nodes
// absorbed into Conv steps.
std::vector<NodeStep> fuse_conv_chains(const ir::Graph& g, const GraphPlan& p, int64_t opset,
                                       int* fused_nodes);

// `steps` with each BatchNormalization whose only reader is Relu (first input, not a graph
// output) run as one step at the BatchNormalization's place (ops/norm_fused.h), the Relu step
// kept only to release slots; bit-identical. Empty when nothing fuses; `fused_nodes` receives
// the number of Relu nodes absorbed (fuse_bn.cc).
std::vector<NodeStep> fuse_bn_relu(const ir::Graph& g, const std::vector<NodeStep>& steps,
                                   int64_t opset, int* fused_nodes);

// Helpers shared by the fusion passes (fuse.cc).
// n is the default-domain op `op` (n may be nullptr).
bool is_op(const ir::Node* n, const char* op);
// The single top-level node (a key of step_of) reading v as its first input, v not being a graph
// output; nullptr otherwise.
const ir::Node* sole_reader(const ir::Graph& g, const ir::Value* v,
                            const std::unordered_map<const ir::Node*, size_t>& step_of);
// n has one output (later ones omitted).
bool single_output(const ir::Node& n);
// Each step's node -> its index.
std::unordered_map<const ir::Node*, size_t> step_index(const std::vector<NodeStep>& steps);

// BatchNormalization n runs in inference mode with all five inputs, initializers or graph inputs
// after X, and one output (what the fused kernels need).
bool fusable_batch_norm(const ir::Graph& g, const ir::Node& n, int64_t opset);

// `steps` with each chain of element-wise nodes (Add, Sub, Mul, Div, Sum of two, Relu; numpy
// broadcasting opsets), where every node's output is read only by the next and the chain spans
// at most a few other steps, run as one step at the place of its last node (the chain's inputs
// are released there; ops/eltwise_chain.h); bit-identical to the plain steps. Empty when
// nothing fuses; `fused_nodes` receives the number of nodes absorbed.
std::vector<NodeStep> fuse_eltwise_chains(const ir::Graph& g, const std::vector<NodeStep>& steps,
                                          int64_t opset, int* fused_nodes);

}  // namespace pg::runtime
