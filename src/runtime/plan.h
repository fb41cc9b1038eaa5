// Internal to the runtime: the execution plan of one graph. A plan lives as long as its session,
// so it is kept small: kernels are shared between the plain and the fused step lists, and the
// error context of a step is built only when its kernel throws (step_context).
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/compact_string.h"
#include "ir/graph.h"
#include "ops/kernel.h"
#include "ops/rt_value.h"

namespace pg::ops {
struct ConvChain;       // ops/conv_fused.h
struct BatchNormChain;  // ops/norm_fused.h
}  // namespace pg::ops

namespace pg::runtime {

// A kernel shared by the plain and fused step lists (copying a KernelFn copies its closure).
using SharedKernel = std::shared_ptr<const ops::KernelFn>;

// `k` on the heap, shared (nullptr for an empty k).
inline SharedKernel share_kernel(ops::KernelFn k) {
    return k ? std::make_shared<const ops::KernelFn>(std::move(k)) : nullptr;
}

struct NodeStep {
    const ir::Node* node = nullptr;
    SharedKernel kernel;      // null: the step only releases (a node fused into an earlier step)
    std::vector<int> inputs;  // local slot, or -1 (omitted / outer value)
    // Per input: the outer-scope value when inputs[i] == -1; empty when no input is one.
    std::vector<const ir::Value*> outer;
    std::vector<int> outputs;         // local slot, or -1 (omitted)
    std::vector<int> release;         // slots whose last use is this step
    int64_t opset = 0;                // the opset of the node's domain (for step_context)
    const ir::Node* named = nullptr;  // the node errors name when it is not `node` (fused steps)
    CompactString fused_with;         // fused steps: ", fused with 'x' (Op)" per absorbed node
    // A producer of a Concat written in place (ops/concat_slice.h, runtime/fuse_concat.cc): the
    // shared buffer's slot (-1: none), this step's channels [offset, ...) of total, both after
    // the channels of the base (the slot of the chain's first input, -1: none).
    int concat_slot = -1, concat_base = -1;
    int64_t concat_offset = 0, concat_total = 0;
    // A fused Conv chain's step: what it fuses (runtime/fuse_nchwc.cc runs it blocked).
    std::shared_ptr<const ops::ConvChain> conv_chain;
    // A fused BatchNormalization chain's step (runtime/fuse_bn.cc), likewise.
    std::shared_ptr<const ops::BatchNormChain> bn_chain;
    bool blocked = false;  // reads or writes the blocked layout (runtime/fuse_nchwc.cc)
    bool reorder = false;  // only converts a value between the layouts
};

// "while running node 'x' (Op, opset N)" (x: s.named or s.node) plus s.fused_with: the context
// of s's errors.
std::string step_context(const NodeStep& s);

struct GraphPlan {
    const ir::Graph* graph = nullptr;
    // Value -> local slot while planning; emptied at its end, when `slots` takes over.
    std::unordered_map<const ir::Value*, int> slot;
    // Value -> local slot, sorted by value (lookups of outer values at run time): half the
    // size of the map, which a plan would otherwise keep for the session's life.
    std::vector<std::pair<const ir::Value*, int>> slots;
    int num_slots = 0;
    std::vector<int> input_slots;
    std::vector<int> output_slots;
    // The initializers' values, built once: constant_of[slot] indexes `constants` (-1: the slot
    // is the frame's). A run reads them in place instead of copying each into its frame (a feed
    // for an initializer that is also a graph input takes its frame slot instead).
    std::vector<ops::RtValue> constants;
    std::vector<int> constant_of;
    std::vector<NodeStep> steps;
    // The steps with Conv chains fused (runtime/fuse.h), for runs without a NodeHook; empty
    // when nothing fuses. fused_nodes: nodes absorbed into Conv steps.
    std::vector<NodeStep> fused;
    int fused_nodes = 0;
    int blocked_steps = 0;  // fused steps running in the blocked layout
};

}  // namespace pg::runtime
