// Internal to the runtime: plan-time fusion for runs that no NodeHook observes, bit-identical to
// the plain steps but for the blocked regions. Conv -> BatchNormalization -> per-channel Mul / Add
// -> residual Add / Sum -> Relu / Clip -> channel shuffle (Reshape, Transpose, Reshape; not after
// the residual) chains (any part but the Conv optional) become one step (ops/conv_fused.h): each
// intermediate value has exactly one reader (the next op of the chain, as its first input; either
// input of the Mul / Add / Sum) and is not a graph output, and the later ops' other inputs are
// initializers or graph inputs, or (the residual) an earlier step's output, so they can be read
// at the Conv's place. BatchNormalization -> per-channel Mul / Add -> Relu chains become one step
// at the BatchNormalization (fuse_bn.cc), MatMul -> bias Add pairs one step at the MatMul
// (fuse_matmul.cc), MatMuls with 4-D Transposes of their operands or result one step at the
// MatMul (fuse_matmul_views.cc), element-wise chains one step at their last node's place
// (fuse_eltwise.cc),
// and Concats of Conv outputs are written in place by the Convs (fuse_concat.cc); Identity
// and inference Dropout steps are skipped (fuse_identity.cc). Regions of
// Convs, pools and Concats run in the blocked channel layout (fuse_nchwc.cc, planned before the
// Concats in place; the plain values within float32 rounding, not bit for bit).
// To fuse another pattern, match it here and give ops/ a kernel for it.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <unordered_set>
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

// `steps` with each BatchNormalization followed by a per-channel Mul, then Add, and/or Relu (each
// the previous value's only reader, not a graph output; ChannelOps) run as one step at the
// BatchNormalization's place (ops/norm_fused.h), the absorbed steps (and Unsqueezes making the
// factors) kept only to release slots; bit-identical. Empty when nothing fuses; `fused_nodes`
// receives the number of nodes absorbed (fuse_bn.cc).
std::vector<NodeStep> fuse_bn_relu(const ir::Graph& g, const GraphPlan& p,
                                   const std::vector<NodeStep>& steps, int64_t opset,
                                   int* fused_nodes);

// `steps` with each MatMul by a 2-D initializer whose output's only reader is an Add of a bias
// initializer (one value per output column) run as one step at the MatMul's place
// (ops/matmul_fused.h), the Add kept only to release slots; bit-identical. Empty when nothing
// fuses; `fused_nodes` receives the number of Adds absorbed (fuse_matmul.cc).
std::vector<NodeStep> fuse_matmul_bias(const ir::Graph& g, const std::vector<NodeStep>& steps,
                                       int* fused_nodes);

// `steps` with each MatMul whose operands come from 4-D Transposes read by it alone, or whose
// result only a 4-D Transpose reads, run as one step at the MatMul's place on the untransposed
// tensors (ops/matmul_views.h: strided GEMMs, no transposed copies; the Transposes kept only to
// release slots); bit-identical. Empty when nothing fuses (or set_fuse_matmul_transposes is
// off); `fused_nodes` receives the number of Transposes absorbed (fuse_matmul_views.cc).
std::vector<NodeStep> fuse_matmul_transposes(const ir::Graph& g,
                                             const std::vector<NodeStep>& steps,
                                             int* fused_nodes);

// `steps` with each Concat along axis 1 whose inputs are all outputs of Conv steps (fused or
// not; each read only by the Concat, not a graph output, weights initializers) written in place
// (ops/concat_slice.h): the producers get a shared buffer slot (a new slot of p) and their
// channel ranges, the Concat step copies only what is not in place. Empty when no Concat
// qualifies; `concats` receives their number (fuse_concat.cc).
std::vector<NodeStep> fuse_concat_in_place(const ir::Graph& g, GraphPlan& p,
                                           const std::vector<NodeStep>& steps, int* concats);

// `steps` (the last fusion pass's) with regions of Conv steps and pools kept in the blocked
// (NCHWc16) layout, reordered only where values enter or leave a region (fuse_nchwc.cc, which
// says what a region is); p gets the blocked slots. Empty when no region qualifies (or the CPU
// has no AVX-512, or set_nchwc_layout is off); `blocked` receives the number of blocked steps.
std::vector<NodeStep> fuse_nchwc_regions(const ir::Graph& g, GraphPlan& p,
                                         const std::vector<NodeStep>& steps, int* blocked);

// Helpers shared by the fusion passes (fuse.cc).
// n is the default-domain op `op` (n may be nullptr).
bool is_op(const ir::Node* n, const char* op);
// The single top-level node (a key of step_of) reading v as its first input, v not being a graph
// output; nullptr otherwise.
const ir::Node* sole_reader(const ir::Graph& g, const ir::Value* v,
                            const std::unordered_map<const ir::Node*, size_t>& step_of);
// n has one output (later ones omitted).
bool single_output(const ir::Node& n);
// n carries opset 1-6's broadcast or axis attribute: its B may line up with A other than numpy's
// way (ops/legacy_broadcast.h), so fusions that assume numpy broadcasting leave it alone.
bool legacy_broadcast(const ir::Node& n);
// Moves the release of each slot in `slots` to the last step of `steps` reading it (as an input
// or a Concat's base; the step writing it when none reads it; none when no step does either).
void release_at_last_reader(std::vector<NodeStep>& steps, const std::unordered_set<int>& slots);
// Each step's node -> its index.
std::unordered_map<const ir::Node*, size_t> step_index(const std::vector<NodeStep>& steps);
// Step s, absorbed into an earlier fused step, keeps only its releases (no kernel, no inputs or
// outputs).
void keep_only_releases(NodeStep& s);

// BatchNormalization n runs in inference mode with all five inputs, initializers or graph inputs
// after X, and one output (what the fused kernels need).
bool fusable_batch_norm(const ir::Graph& g, const ir::Node& n, int64_t opset);

// A per-channel factor of a fused Mul / Add: the initializer holding it, the shape the graph
// gives it (the initializer's, or an Unsqueeze's output), and that Unsqueeze, skipped when its
// only reader is the fused node (fuse_channel.cc).
struct ChannelOperand {
    const ir::Node* node = nullptr;  // the Mul / Add; nullptr: none
    const ir::Value* data = nullptr;
    std::vector<int64_t> dims;
    const ir::Node* unsqueeze = nullptr;
    bool drop_unsqueeze = false;
};
// A Mul and then an Add by per-channel constants after a fused value.
struct ChannelOps {
    ChannelOperand mul, add;
};
// Matches ChannelOps after value v (each node v's only reader, at either input; v moves to the
// last matched output). `rank` > 0: the factors must broadcast along axis 1 of a rank-`rank`
// result (checked here); 0: only their element count (`channels`) is checked, the kernel checks
// the broadcast against the run's rank (ops::per_channel_dims).
void match_channel_ops(const ir::Graph& g, int64_t opset, int64_t channels, size_t rank,
                       const std::unordered_map<const ir::Node*, size_t>& step_of,
                       const ir::Value*& v, ChannelOps& out);
// Every factor has a slot in p.
bool channel_slots_known(const GraphPlan& p, const ChannelOps& c);
// The nodes a fused step absorbs: the Mul, the Add and the skippable Unsqueezes.
std::vector<const ir::Node*> channel_nodes(const ChannelOps& c);
// A factor's initializer released by a step before `fused` (an Unsqueeze it fed was its last
// reader) is released by step `fused` instead, which now reads it.
void keep_channel_data(const GraphPlan& p, std::vector<NodeStep>& steps, size_t fused,
                       const ChannelOps& c);
// The single top-level node reading v (at any input index: *index), v not being a graph
// output; nullptr otherwise.
const ir::Node* sole_user(const ir::Graph& g, const ir::Value* v,
                          const std::unordered_map<const ir::Node*, size_t>& step_of,
                          size_t* index);

// `steps` with each Mul or Div by a one-element float32 initializer (a Div's divisor) whose
// output only a Softmax or LogSoftmax reads (as its input, not a graph output), neither fused
// already (the pass runs after the element-wise chains), run as one step at the Mul's place
// (ops/softmax_fused.h: each row scaled, then normalized, in L1), the Softmax kept only to
// release slots; bit-identical. Empty when nothing fuses (or set_fuse_scaled_softmax is off);
// `fused_nodes` receives the number of Softmaxes absorbed (fuse_softmax.cc).
std::vector<NodeStep> fuse_scaled_softmax(const ir::Graph& g, const std::vector<NodeStep>& steps,
                                          int64_t opset, int* fused_nodes);

// `steps` with each chain of element-wise nodes (Add, Sub, Mul, Div, Sum of two, Relu, Erf; numpy
// broadcasting opsets), where every node's output is read only by the next and the chain spans
// at most a few other steps, run as one step at the place of its last node (the chain's inputs
// are released there; ops/eltwise_chain.h); bit-identical to the plain steps. Empty when
// nothing fuses; `fused_nodes` receives the number of nodes absorbed.
std::vector<NodeStep> fuse_eltwise_chains(const ir::Graph& g, const std::vector<NodeStep>& steps,
                                          int64_t opset, int* fused_nodes);

// `steps` without the steps of Identity nodes and of Dropouts in inference (no training_mode
// input but a constant false, the mask unused): both give their input as their output, so
// their readers read the input's slot instead (releases moved to its new last reader), and
// the blocked regions run on through them (planned before the regions). A node
// whose output is a graph output, is read by a subgraph, or is not read at all keeps its step.
// Empty when nothing is skipped; `skipped` receives the number of steps dropped
// (fuse_identity.cc).
std::vector<NodeStep> skip_identities(const ir::Graph& g, const GraphPlan& p,
                                      const std::vector<NodeStep>& steps, int* skipped);

}  // namespace pg::runtime
