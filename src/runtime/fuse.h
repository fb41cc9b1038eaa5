// Internal to the runtime: plan-time fusion of Conv -> BatchNormalization -> Relu / Clip chains
// into one step (ops/conv_fused.h), and of element-wise chains (fuse_eltwise.cc), for runs that
// no NodeHook observes. A chain is fused when
// each intermediate value has exactly one reader (the next op of the chain, as its first input)
// and is not a graph output, and the later ops' other inputs are initializers or graph inputs
// (so they can run at the Conv's place). The result is bit-identical to the plain steps.
// To fuse another pattern, match it here and give ops/ a kernel for it.
#pragma once

#include <cstdint>
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

// `steps` with each chain of element-wise nodes (Add, Sub, Mul, Div, Sum of two, Relu; numpy
// broadcasting opsets), where every node's output is read only by the next and the chain spans
// at most a few other steps, run as one step at the place of its last node (the chain's inputs
// are released there; ops/eltwise_chain.h); bit-identical to the plain steps. Empty when
// nothing fuses; `fused_nodes` receives the number of nodes absorbed.
std::vector<NodeStep> fuse_eltwise_chains(const ir::Graph& g, const std::vector<NodeStep>& steps,
                                          int64_t opset, int* fused_nodes);

}  // namespace pg::runtime
