// Internal to the runtime: plan-time fusion of Conv -> BatchNormalization -> residual Add / Sum
// -> Relu / Clip chains (any part but the Conv optional) into one step (ops/conv_fused.h), for
// runs that no NodeHook observes. A chain is fused when each intermediate value has exactly one
// reader (the next op of the chain, as its first input; either input of the Add / Sum) and is
// not a graph output, and the later ops' other inputs are initializers or graph inputs, or (the
// residual) an earlier step's output, so they can be read at the Conv's place. The result is
// bit-identical to the plain steps. To fuse another pattern, match it here and give ops/ a
// kernel for it.
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

}  // namespace pg::runtime
