// Concats written in place by the Convs producing their inputs (see fuse.h).
#include <algorithm>
#include <atomic>
#include <unordered_map>

#include "ir/model.h"
#include "ops/attrs.h"
#include "ops/concat_slice.h"
#include "runtime/fuse.h"
#include "runtime/session.h"

namespace pg::runtime {

namespace {

std::atomic<bool> g_enabled{true};

// A Concat input: the step producing it and its channel count.
struct Part {
    size_t step = 0;
    int64_t channels = 0;
};

// Output channels and rank of the Conv step `s` (its weights an initializer), or false.
bool conv_output(const NodeStep& s, int64_t* channels, int64_t* rank) {
    if (!s.kernel || !is_op(s.node, "Conv") || s.node->inputs().size() < 2) return false;
    const ir::Value* w = s.node->inputs()[1];
    if (!w || !w->is_initializer() || w->initializer()->tensor.rank() < 3) return false;
    *channels = w->initializer()->tensor.dims()[0];
    *rank = w->initializer()->tensor.rank();
    return true;
}

// The parts of Concat step c when every input qualifies (see fuse.h); empty otherwise.
std::vector<Part> concat_parts(const ir::Graph& g, const std::vector<NodeStep>& steps,
                               const NodeStep& c,
                               const std::unordered_map<int, size_t>& producer) {
    const ir::Node& n = *c.node;
    std::vector<Part> parts;
    if (n.inputs().empty() || c.inputs.size() != n.inputs().size() || !single_output(n))
        return {};
    int64_t rank = 0;
    for (size_t i = 0; i < n.inputs().size(); ++i) {
        const ir::Value* v = n.inputs()[i];
        if (!v || v->uses().size() != 1 || c.inputs[i] < 0 ||
            std::count(g.outputs().begin(), g.outputs().end(), v))
            return {};
        auto it = producer.find(c.inputs[i]);
        if (it == producer.end()) return {};
        const NodeStep& s = steps[it->second];
        Part part{it->second, 0};
        int64_t r = 0;
        if (s.outputs.empty() || s.outputs[0] != c.inputs[i] || s.concat_slot >= 0 ||
            !conv_output(s, &part.channels, &r) || (rank && r != rank))
            return {};
        rank = r;
        parts.push_back(part);
    }
    const int64_t axis = ops::Attrs(n).get_int("axis", 1);
    if (axis != 1 && axis != 1 - rank) return {};
    return parts;
}

}  // namespace

bool set_fuse_concat_in_place(bool on) {
    return g_enabled.exchange(on);
}

std::vector<NodeStep> fuse_concat_in_place(const ir::Graph& g, GraphPlan& p,
                                           const std::vector<NodeStep>& steps, int* concats) {
    *concats = 0;
    if (!g_enabled.load(std::memory_order_relaxed)) return {};
    std::vector<NodeStep> out = steps;
    std::unordered_map<int, size_t> producer;  // slot -> the step writing it
    for (size_t i = 0; i < out.size(); ++i)
        for (int slot : out[i].outputs)
            if (slot >= 0) producer[slot] = i;
    for (NodeStep& c : out) {
        if (!c.kernel || !is_op(c.node, "Concat")) continue;
        const std::vector<Part> parts = concat_parts(g, out, c, producer);
        if (parts.empty()) continue;
        const int buffer = p.num_slots++;
        int64_t offset = 0, total = 0;
        for (const Part& part : parts) total += part.channels;
        for (const Part& part : parts) {
            NodeStep& s = out[part.step];
            s.concat_slot = buffer, s.concat_offset = offset, s.concat_total = total;
            offset += part.channels;
        }
        c.inputs.push_back(buffer);
        c.release.push_back(buffer);
        c.kernel = share_kernel(ops::make_concat_in_place(*c.kernel));
        ++*concats;
    }
    if (*concats == 0) out.clear();
    return out;
}

}  // namespace pg::runtime
