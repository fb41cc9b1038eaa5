// Identity and inference Dropout steps skipped (see fuse.h).
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "ir/topo.h"
#include "runtime/fuse.h"

namespace pg::runtime {

namespace {

// Dropout n gives its input unchanged, as the kernel does (ops/normalization.cc): from opset 12
// only without a training_mode input or with a constant false one; its mask output unused.
bool inference_dropout(const ir::Graph& g, const ir::Node& n, int64_t opset) {
    if (!is_op(&n, "Dropout")) return false;
    for (size_t i = 1; i < n.outputs().size(); ++i) {
        const ir::Value* mask = n.outputs()[i];
        if (mask && (!mask->uses().empty() ||
                     std::find(g.outputs().begin(), g.outputs().end(), mask) != g.outputs().end()))
            return false;
    }
    if (opset < 12 || n.inputs().size() < 3 || !n.inputs()[2]) return true;
    const ir::Value* mode = n.inputs()[2];
    if (!mode->is_initializer()) return false;
    const Tensor& t = mode->initializer()->tensor;
    return t.numel() == 1 && t.element_as_double(0) == 0.0;
}

// Step s's output is its first input: an Identity or an inference Dropout whose output some
// top-level step reads, that is neither a graph output nor read by a subgraph.
bool skippable(const ir::Graph& g, const GraphPlan& p, const NodeStep& s) {
    if (!s.kernel || !s.node || s.concat_slot >= 0 || s.inputs.empty() || s.inputs[0] < 0 ||
        s.outputs.empty() || s.outputs[0] < 0)
        return false;
    if (!is_op(s.node, "Identity") && !inference_dropout(g, *s.node, s.opset)) return false;
    const ir::Value* out = s.node->outputs()[0];
    if (!out || out->uses().empty()) return false;
    for (const ir::Use& u : out->uses())
        if (ir::ancestor_in(g, u.node) != u.node) return false;
    return std::find(p.output_slots.begin(), p.output_slots.end(), s.outputs[0]) ==
           p.output_slots.end();
}

// Follows `to` from slot s to the slot it now stands for.
int resolve(const std::unordered_map<int, int>& to, int s) {
    for (auto it = to.find(s); it != to.end(); it = to.find(s)) s = it->second;
    return s;
}

}  // namespace

std::vector<NodeStep> skip_identities(const ir::Graph& g, const GraphPlan& p,
                                      const std::vector<NodeStep>& steps, int* skipped) {
    *skipped = 0;
    std::unordered_map<int, int> to;  // a skipped output's slot -> its input's
    std::vector<NodeStep> out;
    for (const NodeStep& s : steps) {
        if (skippable(g, p, s)) {
            to[s.outputs[0]] = resolve(to, s.inputs[0]);
            ++*skipped;
            continue;
        }
        out.push_back(s);
        NodeStep& kept = out.back();
        for (int& in : kept.inputs)
            if (in >= 0) in = resolve(to, in);
        if (kept.concat_base >= 0) kept.concat_base = resolve(to, kept.concat_base);
    }
    if (*skipped == 0) return {};
    // The skipped outputs are never written; each input is released at its new last reader
    // (unless a graph output, which is never released).
    std::unordered_set<int> moved;
    for (const auto& [from, slot] : to) {
        moved.insert(from);
        const int target = resolve(to, slot);
        if (std::find(p.output_slots.begin(), p.output_slots.end(), target) == p.output_slots.end())
            moved.insert(target);
    }
    release_at_last_reader(out, moved);
    return out;
}

}  // namespace pg::runtime
