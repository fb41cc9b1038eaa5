// Internal to the runtime: the execution plan of one graph.
#pragma once

#include <unordered_map>
#include <vector>

#include "ir/graph.h"
#include "ops/kernel.h"

namespace pg::runtime {

struct NodeStep {
    const ir::Node* node = nullptr;
    ops::KernelFn kernel;     // empty: the step only releases (a node fused into an earlier step)
    std::vector<int> inputs;  // local slot, or -1 (omitted / outer value)
    std::vector<const ir::Value*> outer;  // per input: the outer-scope value when inputs[i] == -1
    std::vector<int> outputs;             // local slot, or -1 (omitted)
    std::vector<int> release;             // slots whose last use is this step
    std::string context;                  // "while running node 'x' (Op, opset N)"
};

struct GraphPlan {
    const ir::Graph* graph = nullptr;
    std::unordered_map<const ir::Value*, int> slot;
    int num_slots = 0;
    std::vector<int> input_slots;
    std::vector<int> output_slots;
    std::vector<std::pair<int, const ir::Value*>> initializer_slots;
    std::vector<NodeStep> steps;
    // The steps with Conv chains fused (runtime/fuse.h), for runs without a NodeHook; empty
    // when nothing fuses. fused_nodes: nodes absorbed into Conv steps.
    std::vector<NodeStep> fused;
    int fused_nodes = 0;
};

}  // namespace pg::runtime
