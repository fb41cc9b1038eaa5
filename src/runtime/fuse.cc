// Conv chain fusion (see fuse.h).
#include "runtime/fuse.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <unordered_map>
#include <unordered_set>

#include "ir/model.h"
#include "ops/attrs.h"
#include "ops/conv_fused.h"
#include "runtime/session.h"

namespace pg::runtime {

namespace {

bool contains(const std::vector<ir::Value*>& vs, const ir::Value* v) {
    return std::find(vs.begin(), vs.end(), v) != vs.end();
}

// Inputs [first, end) of n are omitted, initializers or graph inputs (ready before any step).
bool inputs_ready(const ir::Graph& g, const ir::Node& n, size_t first) {
    for (size_t i = first; i < n.inputs().size(); ++i) {
        const ir::Value* v = n.inputs()[i];
        if (v && !v->is_initializer() && !contains(g.inputs(), v)) return false;
    }
    return true;
}

// n has one output (later ones omitted).

struct Chain {
    size_t conv = 0;  // step indices
    const ir::Node* bn = nullptr;
    ChannelOps channel;             // per-channel Mul, then Add
    const ir::Node* add = nullptr;  // residual Add / Sum
    size_t add_other = 0;           // the input of `add` that is not the chain's value
    const ir::Node* act = nullptr;
    const ir::Node* shuffle[3] = {};  // Reshape, Transpose, Reshape
    ops::ConvChain spec;
};

// n is a two-input Add / Sum of v and a value ready before step `conv` (an initializer, a graph
// input, or an earlier step's output), so the fused step can read it at the Conv's place.
bool fusable_residual(const ir::Graph& g, const ir::Node* n, size_t v_index, size_t conv,
                      const std::unordered_map<const ir::Node*, size_t>& step_of) {
    if (!(is_op(n, "Add") || is_op(n, "Sum")) || n->inputs().size() != 2 || !single_output(*n) ||
        legacy_broadcast(*n))
        return false;
    const ir::Value* other = n->inputs()[1 - v_index];
    if (!other || other == n->inputs()[v_index]) return false;
    if (other->is_initializer() || contains(g.inputs(), other)) return true;
    const ir::Node* producer = other->producer();
    auto it = producer ? step_of.find(producer) : step_of.end();
    return it != step_of.end() && it->second < conv;
}

// After BatchNormalization (or the Conv): a per-channel Mul, then Add (the Conv's weights give
// the channel count and the rank). `v` is the chain's value so far; it moves on.
void match_conv_channel_ops(const ir::Graph& g, const ir::Node& conv, int64_t opset,
                            const std::unordered_map<const ir::Node*, size_t>& step_of,
                            const ir::Value*& v, Chain& c) {
    const ir::Value* w = conv.input(1);
    if (!w || !w->is_initializer() || w->initializer()->tensor.rank() < 3) return;
    const Tensor& wt = w->initializer()->tensor;
    match_channel_ops(g, opset, wt.dims()[0], static_cast<size_t>(wt.rank()), step_of, v,
                      c.channel);
    c.spec.scale = c.channel.mul.node != nullptr;
    c.spec.shift = c.channel.add.node != nullptr;
}

std::atomic<bool> g_fuse_shuffle{true};

// n is a Reshape by an initializer shape (opset >= 5) with one output.
bool constant_reshape(const ir::Node* n, int64_t opset) {
    return is_op(n, "Reshape") && opset >= 5 && n->inputs().size() == 2 && n->inputs()[1] &&
           n->inputs()[1]->is_initializer() && single_output(*n);
}

// After the chain's value v: Reshape -> Transpose (0, 2, 1, 3, ...) -> Reshape, each the
// previous value's only reader (ShuffleNet's channel shuffle; the kernel checks the shapes at
// run time). Not after a residual (the fused Add reads its addend where the output is written)
// nor a Conv with one output channel per group (the depthwise kernel has no shuffle).
void match_shuffle(const ir::Graph& g, const ir::Node& conv, int64_t opset,
                   const std::unordered_map<const ir::Node*, size_t>& step_of, const ir::Value* v,
                   Chain& c) {
    const ir::Value* w = conv.input(1);
    if (!g_fuse_shuffle.load(std::memory_order_relaxed) || c.add || !w || !w->is_initializer() ||
        w->initializer()->tensor.rank() < 3 ||
        w->initializer()->tensor.dims()[0] <= c.spec.conv.group)
        return;
    const ir::Node* r1 = sole_reader(g, v, step_of);
    if (!constant_reshape(r1, opset)) return;
    const ir::Node* t = sole_reader(g, r1->outputs()[0], step_of);
    if (!is_op(t, "Transpose") || !single_output(*t)) return;
    const std::vector<int64_t> perm = ops::Attrs(*t).get_ints("perm");
    if (perm.size() != static_cast<size_t>(w->initializer()->tensor.rank()) + 1) return;
    for (size_t i = 0; i < perm.size(); ++i)
        if (perm[i] != static_cast<int64_t>(i == 1 ? 2 : i == 2 ? 1 : i)) return;
    const ir::Node* r2 = sole_reader(g, t->outputs()[0], step_of);
    if (!constant_reshape(r2, opset)) return;
    c.shuffle[0] = r1, c.shuffle[1] = t, c.shuffle[2] = r2;
    c.spec.shuffle = true;
    for (int i = 0; i < 2; ++i)
        c.spec.shuffle_allowzero[i] =
            opset >= 14 && ops::Attrs(*c.shuffle[2 * i]).get_flag("allowzero", false);
}

// The chain starting at Conv step i, if BatchNormalization, an activation or a channel shuffle
// follows it.
bool match_chain(const ir::Graph& g, const GraphPlan& p, size_t i, int64_t opset,
                 const std::unordered_map<const ir::Node*, size_t>& step_of, Chain& c) {
    const ir::Node& conv = *p.steps[i].node;
    if (!is_op(&conv, "Conv") || !single_output(conv) || conv.inputs().size() < 2) return false;
    c.conv = i;
    c.spec.conv = ops::read_conv_attrs(ops::Attrs(conv));
    const ir::Node* next = sole_reader(g, conv.outputs()[0], step_of);
    if (is_op(next, "BatchNormalization") && fusable_batch_norm(g, *next, opset)) {
        c.bn = next;
        c.spec.batch_norm = true;
        c.spec.epsilon = ops::Attrs(*next).get_float("epsilon", 1e-5f);
    }
    const ir::Value* v = (c.bn ? c.bn : &conv)->outputs()[0];
    match_conv_channel_ops(g, conv, opset, step_of, v, c);
    next = sole_reader(g, v, step_of);
    size_t index = 0;
    const ir::Node* user = sole_user(g, v, step_of, &index);
    if (fusable_residual(g, user, index, i, step_of)) {
        c.add = user, c.add_other = 1 - index;
        c.spec.residual = true;
        next = sole_reader(g, user->outputs()[0], step_of);
    }
    if (c.add) v = c.add->outputs()[0];
    if (is_op(next, "Relu") && single_output(*next)) {
        c.act = next, c.spec.act = ops::ConvChain::Act::kRelu;
    } else if (is_op(next, "Clip") && single_output(*next) && next->inputs().size() <= 3 &&
               inputs_ready(g, *next, 1)) {
        c.act = next, c.spec.act = ops::ConvChain::Act::kClip;
        c.spec.clip_from_attrs = opset < 11;
        const ops::Attrs a(*next);
        c.spec.clip_min = a.get_float("min", std::numeric_limits<float>::lowest());
        c.spec.clip_max = a.get_float("max", std::numeric_limits<float>::max());
    }
    if (c.act) v = c.act->outputs()[0];
    match_shuffle(g, conv, opset, step_of, v, c);
    return c.bn || c.spec.scale || c.spec.shift || c.add || c.act || c.spec.shuffle;
}

// Slot of input i of step s (-1 when omitted or absent).
int slot_or_none(const NodeStep& s, size_t i) {
    return i < s.inputs.size() ? s.inputs[i] : -1;
}

// Runs the chain's plain kernels one after another on the fused step's inputs (a per-channel
// factor, read from its initializer, viewed with the shape the graph gave it).
ops::KernelFn plain_chain(const NodeStep& conv, const NodeStep* bn, const NodeStep* mul,
                          const NodeStep* add_c, const Chain& c, const NodeStep* add,
                          const NodeStep* act, const std::vector<const NodeStep*>& shuffle) {
    struct Part {
        const ir::Node* node;
        SharedKernel kernel;
        size_t first, count;        // the part's inputs after the chained one, in the fused inputs
        std::vector<int64_t> view;  // non-empty: the (single) input's dims
    };
    std::vector<Part> parts{{conv.node, conv.kernel, 0, conv.node->inputs().size(), {}}};
    size_t next = 3;
    if (bn) parts.push_back({bn->node, bn->kernel, next, 4, {}}), next += 4;
    if (mul) parts.push_back({mul->node, mul->kernel, next, 1, c.channel.mul.dims}), next += 1;
    if (add_c)
        parts.push_back({add_c->node, add_c->kernel, next, 1, c.channel.add.dims}), next += 1;
    if (add) parts.push_back({add->node, add->kernel, next, 1, {}}), next += 1;  // (value, other)
    if (act)
        parts.push_back({act->node, act->kernel, next, act->node->inputs().size() - 1, {}}),
            next += act->node->inputs().size() - 1;
    for (const NodeStep* t : shuffle)  // Reshape (its shape), Transpose, Reshape (its shape)
        parts.push_back({t->node, t->kernel, next, t->node->inputs().size() - 1, {}}),
            next += t->node->inputs().size() - 1;
    return [parts](ops::KernelContext& ctx) {
        ops::RtValue y, view;
        for (size_t k = 0; k < parts.size(); ++k) {
            const Part& part = parts[k];
            std::vector<const ops::RtValue*> in;
            if (k > 0) in.push_back(&y);
            for (size_t i = 0; i < part.count; ++i) in.push_back(ctx.value(part.first + i));
            if (!part.view.empty()) {
                view = ops::RtValue::of(ctx.input(part.first).reshaped(part.view));
                in.back() = &view;
            }
            ops::KernelContext sub(*part.node, in, 1, ctx.pool(), nullptr);
            (*part.kernel)(sub);
            y = std::move(sub.outputs()[0]);
        }
        ctx.set_output(0, std::move(y));
    };
}

// The fused step replacing the chain's Conv step.
NodeStep fused_step(const GraphPlan& p, const Chain& c,
                    const std::unordered_map<const ir::Node*, size_t>& step_of) {
    const NodeStep& conv = p.steps[c.conv];
    const NodeStep* bn = c.bn ? &p.steps[step_of.at(c.bn)] : nullptr;
    const ir::Node *mul_node = c.channel.mul.node, *add_node = c.channel.add.node;
    const NodeStep* mul = mul_node ? &p.steps[step_of.at(mul_node)] : nullptr;
    const NodeStep* add_c = add_node ? &p.steps[step_of.at(add_node)] : nullptr;
    const NodeStep* add = c.add ? &p.steps[step_of.at(c.add)] : nullptr;
    const NodeStep* act = c.act ? &p.steps[step_of.at(c.act)] : nullptr;
    std::vector<const NodeStep*> shuffle;
    if (c.spec.shuffle)
        for (const ir::Node* n : c.shuffle) shuffle.push_back(&p.steps[step_of.at(n)]);
    NodeStep s;
    s.node = conv.node;
    for (size_t i = 0; i < 3; ++i) s.inputs.push_back(slot_or_none(conv, i));
    if (bn)
        for (size_t i = 1; i < 5; ++i) s.inputs.push_back(slot_or_none(*bn, i));
    for (const ChannelOperand* o : {&c.channel.mul, &c.channel.add})
        if (o->node) s.inputs.push_back(p.slot.at(o->data));
    if (add) s.inputs.push_back(slot_or_none(*add, c.add_other));
    if (act)
        for (size_t i = 1; i < act->node->inputs().size(); ++i)
            s.inputs.push_back(slot_or_none(*act, i));
    for (const NodeStep* t : shuffle)
        if (t->node->inputs().size() == 2) s.inputs.push_back(slot_or_none(*t, 1));
    s.outputs = !shuffle.empty() ? shuffle.back()->outputs
                                 : (act     ? act
                                    : add   ? add
                                    : add_c ? add_c
                                    : mul   ? mul
                                            : bn)
                                       ->outputs;
    s.release = conv.release;
    s.opset = conv.opset;
    std::vector<const NodeStep*> fused{bn, mul, add_c, add, act};
    fused.insert(fused.end(), shuffle.begin(), shuffle.end());
    for (const NodeStep* t : fused)
        if (t) s.fused_with += ", fused with '" + t->node->name + "' (" + t->node->op_type + ")";
    s.kernel = share_kernel(
        ops::make_conv_chain(c.spec, plain_chain(conv, bn, mul, add_c, c, add, act, shuffle)));
    s.conv_chain = std::make_shared<const ops::ConvChain>(c.spec);
    return s;
}

}  // namespace

bool set_fuse_channel_shuffle(bool on) {
    return g_fuse_shuffle.exchange(on);
}

bool is_op(const ir::Node* n, const char* op) {
    return n && ir::is_default_domain(n->domain) && n->op_type == op;
}

const ir::Node* sole_reader(const ir::Graph& g, const ir::Value* v,
                            const std::unordered_map<const ir::Node*, size_t>& step_of) {
    if (!v || v->uses().size() != 1 || contains(g.outputs(), v)) return nullptr;
    const ir::Use& u = v->uses()[0];
    return u.index == 0 && step_of.count(u.node) ? u.node : nullptr;
}

const ir::Node* sole_user(const ir::Graph& g, const ir::Value* v,
                          const std::unordered_map<const ir::Node*, size_t>& step_of,
                          size_t* index) {
    if (!v || v->uses().size() != 1 || contains(g.outputs(), v)) return nullptr;
    const ir::Use& u = v->uses()[0];
    *index = u.index;
    return step_of.count(u.node) ? u.node : nullptr;
}

bool legacy_broadcast(const ir::Node& n) {
    return n.find_attribute("broadcast") || n.find_attribute("axis");
}

bool single_output(const ir::Node& n) {
    if (n.outputs().empty() || !n.outputs()[0]) return false;
    for (size_t i = 1; i < n.outputs().size(); ++i)
        if (n.outputs()[i]) return false;
    return true;
}

void release_at_last_reader(std::vector<NodeStep>& steps, const std::unordered_set<int>& slots) {
    for (NodeStep& s : steps)
        s.release.erase(std::remove_if(s.release.begin(), s.release.end(),
                                       [&](int r) { return slots.count(r) > 0; }),
                        s.release.end());
    std::unordered_map<int, size_t> last;
    for (size_t i = 0; i < steps.size(); ++i) {
        for (int o : steps[i].outputs)
            if (slots.count(o) && !last.count(o)) last[o] = i;
        for (int in : steps[i].inputs)
            if (slots.count(in)) last[in] = i;
        if (slots.count(steps[i].concat_base)) last[steps[i].concat_base] = i;
    }
    for (const auto& [slot, i] : last) steps[i].release.push_back(slot);
}

std::unordered_map<const ir::Node*, size_t> step_index(const std::vector<NodeStep>& steps) {
    std::unordered_map<const ir::Node*, size_t> step_of;
    for (size_t i = 0; i < steps.size(); ++i)
        if (steps[i].node) step_of[steps[i].node] = i;
    return step_of;
}

void keep_only_releases(NodeStep& s) {
    s.kernel = nullptr;
    s.inputs.clear();
    s.outer.clear();
    s.outputs.clear();
}

bool fusable_batch_norm(const ir::Graph& g, const ir::Node& n, int64_t opset) {
    const ops::Attrs a(n);
    if (opset >= 14 && a.get_flag("training_mode", false)) return false;
    if (opset < 9 && !a.get_flag("spatial", true)) return false;
    if (n.inputs().size() != 5) return false;
    for (size_t i = 1; i < 5; ++i)
        if (!n.inputs()[i]) return false;
    return single_output(n) && inputs_ready(g, n, 1);
}

std::vector<NodeStep> fuse_conv_chains(const ir::Graph& g, const GraphPlan& p, int64_t opset,
                                       int* fused_nodes) {
    *fused_nodes = 0;
    const auto step_of = step_index(p.steps);
    std::vector<NodeStep> out = p.steps;
    for (size_t i = 0; i < p.steps.size(); ++i) {
        Chain c;
        if (!p.steps[i].kernel || !match_chain(g, p, i, opset, step_of, c)) continue;
        if (!channel_slots_known(p, c.channel)) continue;
        out[i] = fused_step(p, c, step_of);
        std::vector<const ir::Node*> dropped = channel_nodes(c.channel);
        for (const ir::Node* n : {c.bn, c.add, c.act, c.shuffle[0], c.shuffle[1], c.shuffle[2]})
            dropped.push_back(n);
        for (const ir::Node* n : dropped) {
            if (!n) continue;
            keep_only_releases(out[step_of.at(n)]);
            ++*fused_nodes;
        }
        keep_channel_data(p, out, i, c.channel);
    }
    if (*fused_nodes == 0) out.clear();
    return out;
}

}  // namespace pg::runtime
