// Per-channel Mul / Add operands of the fusion passes (see fuse.h).
#include <algorithm>

#include "ir/model.h"
#include "ops/attrs.h"
#include "ops/norm_fused.h"
#include "runtime/fuse.h"

namespace pg::runtime {

namespace {

// The dims Unsqueeze n gives its initializer input (axes from the attribute before opset 13,
// else from an initializer input); false when n is not such an Unsqueeze.
bool unsqueezed_dims(const ir::Node& n, int64_t opset, std::vector<int64_t>& dims) {
    const ir::Value* x = n.input(0);
    if (!is_op(&n, "Unsqueeze") || !single_output(n) || !x || !x->is_initializer()) return false;
    std::vector<int64_t> axes;
    if (opset >= 13) {
        const ir::Value* a = n.input(1);
        if (!a || !a->is_initializer()) return false;
        const Tensor& t = a->initializer()->tensor;
        if (t.dtype() != DataType::kInt64 || t.rank() > 1) return false;
        for (uint64_t i = 0; i < t.numel(); ++i) axes.push_back(t.data<int64_t>()[i]);
    } else {
        axes = ops::Attrs(n).get_ints("axes", {});
    }
    const std::vector<int64_t>& in = x->initializer()->tensor.dims();
    const int64_t rank = static_cast<int64_t>(in.size() + axes.size());
    std::vector<bool> inserted(static_cast<size_t>(rank), false);
    for (int64_t a : axes) {
        if (a < 0) a += rank;
        if (a < 0 || a >= rank || inserted[static_cast<size_t>(a)]) return false;
        inserted[static_cast<size_t>(a)] = true;
    }
    dims.clear();
    size_t next = 0;
    for (int64_t i = 0; i < rank; ++i)
        dims.push_back(inserted[static_cast<size_t>(i)] ? 1 : in[next++]);
    return true;
}

// Mul / Add n reads the chain's value at v_index and, at the other input, `channels` values: an
// initializer or an Unsqueeze of one, broadcasting along axis 1 when rank > 0.
bool channel_operand(const ir::Graph& g, const ir::Node* n, size_t v_index, int64_t opset,
                     size_t rank, int64_t channels, ChannelOperand& out) {
    if (!n || n->inputs().size() != 2 || !single_output(*n) || legacy_broadcast(*n)) return false;
    const ir::Value* other = n->inputs()[1 - v_index];
    if (!other || other == n->inputs()[v_index]) return false;
    ChannelOperand c;
    c.node = n;
    if (other->is_initializer()) {
        c.data = other, c.dims = other->initializer()->tensor.dims();
    } else if (const ir::Node* u = other->producer(); u && unsqueezed_dims(*u, opset, c.dims)) {
        c.data = u->input(0), c.unsqueeze = u;
        const auto& outs = g.outputs();
        c.drop_unsqueeze =
            other->uses().size() == 1 && std::find(outs.begin(), outs.end(), other) == outs.end();
    } else {
        return false;
    }
    int64_t count = 1;
    for (int64_t d : c.dims) count *= d;
    if (count != channels || c.dims.empty()) return false;
    if (rank > 0 && !ops::per_channel_dims(c.dims, rank, channels)) return false;
    out = std::move(c);
    return true;
}

}  // namespace

void match_channel_ops(const ir::Graph& g, int64_t opset, int64_t channels, size_t rank,
                       const std::unordered_map<const ir::Node*, size_t>& step_of,
                       const ir::Value*& v, ChannelOps& out) {
    size_t index = 0;
    const ir::Node* user = sole_user(g, v, step_of, &index);
    if (is_op(user, "Mul") && channel_operand(g, user, index, opset, rank, channels, out.mul)) {
        v = user->outputs()[0];
        user = sole_user(g, v, step_of, &index);
    }
    if (is_op(user, "Add") && channel_operand(g, user, index, opset, rank, channels, out.add))
        v = user->outputs()[0];
}

bool channel_slots_known(const GraphPlan& p, const ChannelOps& c) {
    for (const ChannelOperand* o : {&c.mul, &c.add})
        if (o->node && !p.slot.count(o->data)) return false;
    return true;
}

std::vector<const ir::Node*> channel_nodes(const ChannelOps& c) {
    std::vector<const ir::Node*> out;
    for (const ChannelOperand* o : {&c.mul, &c.add}) {
        if (!o->node) continue;
        out.push_back(o->node);
        if (o->drop_unsqueeze) out.push_back(o->unsqueeze);
    }
    return out;
}

void keep_channel_data(const GraphPlan& p, std::vector<NodeStep>& steps, size_t fused,
                       const ChannelOps& c) {
    for (const ChannelOperand* o : {&c.mul, &c.add}) {
        if (!o->node) continue;
        const int slot = p.slot.at(o->data);
        for (size_t j = 0; j < fused; ++j) {
            auto& r = steps[j].release;
            const auto it = std::find(r.begin(), r.end(), slot);
            if (it == r.end()) continue;
            r.erase(it);
            steps[fused].release.push_back(slot);
        }
    }
}

}  // namespace pg::runtime
