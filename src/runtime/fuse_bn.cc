// BatchNormalization -> per-channel Mul -> Add -> Relu fusion (see fuse.h).
#include <unordered_map>

#include "ir/model.h"
#include "ops/attrs.h"
#include "ops/norm_fused.h"
#include "runtime/fuse.h"

namespace pg::runtime {

namespace {

// What follows BatchNormalization step b: per-channel Mul / Add (factors of the size of b's
// scale initializer) and a Relu, each the previous value's only reader and not yet fused.
struct BnTail {
    ChannelOps channel;
    const ir::Node* relu = nullptr;
    const ir::Node* last = nullptr;  // the last node absorbed; nullptr: nothing fuses
};

BnTail match_tail(const ir::Graph& g, const NodeStep& b, const std::vector<NodeStep>& steps,
                  int64_t opset, const std::unordered_map<const ir::Node*, size_t>& step_of) {
    BnTail t;
    const ir::Value* v = b.node->outputs()[0];
    const ir::Value* scale = b.node->input(1);
    if (scale && scale->is_initializer()) {
        const int64_t channels = static_cast<int64_t>(scale->initializer()->tensor.numel());
        match_channel_ops(g, opset, channels, 0, step_of, v, t.channel);
        for (const ir::Node* n : channel_nodes(t.channel))
            if (!steps[step_of.at(n)].kernel) return {};  // taken by an earlier fusion
    }
    const ir::Node* r = sole_reader(g, v, step_of);
    if (is_op(r, "Relu") && single_output(*r) && steps[step_of.at(r)].kernel) t.relu = r;
    t.last = t.relu ? t.relu : t.channel.add.node ? t.channel.add.node : t.channel.mul.node;
    return t;
}

// The plain kernels one after another on the fused step's inputs (the factors viewed with the
// shapes the graph gives them).
ops::KernelFn plain_tail(const NodeStep& bn, const BnTail& t, const std::vector<NodeStep>& steps,
                         const std::unordered_map<const ir::Node*, size_t>& step_of) {
    struct Part {
        const ir::Node* node;
        SharedKernel kernel;
        std::vector<int64_t> view;  // the factor's dims; empty for Relu
    };
    std::vector<Part> parts;
    for (const ChannelOperand* o : {&t.channel.mul, &t.channel.add})
        if (o->node) parts.push_back({o->node, steps[step_of.at(o->node)].kernel, o->dims});
    if (t.relu) parts.push_back({t.relu, steps[step_of.at(t.relu)].kernel, {}});
    return [bn_node = bn.node, bn_kernel = bn.kernel, parts](ops::KernelContext& ctx) {
        std::vector<const ops::RtValue*> in;
        for (size_t i = 0; i < 5; ++i) in.push_back(ctx.value(i));
        ops::KernelContext first(*bn_node, in, 1, ctx.pool(), nullptr);
        (*bn_kernel)(first);
        ops::RtValue y = std::move(first.outputs()[0]), view;
        size_t next = 5;
        for (const Part& p : parts) {
            std::vector<const ops::RtValue*> args{&y};
            if (!p.view.empty()) {
                view = ops::RtValue::of(ctx.input(next++).reshaped(p.view));
                args.push_back(&view);
            }
            ops::KernelContext sub(*p.node, args, 1, ctx.pool(), nullptr);
            (*p.kernel)(sub);
            y = std::move(sub.outputs()[0]);
        }
        ctx.set_output(0, std::move(y));
    };
}

}  // namespace

std::vector<NodeStep> fuse_bn_relu(const ir::Graph& g, const GraphPlan& p,
                                   const std::vector<NodeStep>& steps, int64_t opset,
                                   int* fused_nodes) {
    *fused_nodes = 0;
    const auto step_of = step_index(steps);
    std::vector<NodeStep> out = steps;
    for (size_t i = 0; i < steps.size(); ++i) {
        const NodeStep& b = steps[i];
        if (!b.kernel || !is_op(b.node, "BatchNormalization") ||
            !fusable_batch_norm(g, *b.node, opset))
            continue;
        const BnTail t = match_tail(g, b, out, opset, step_of);
        if (!t.last || !channel_slots_known(p, t.channel)) continue;
        ops::BatchNormChain spec;
        spec.epsilon = ops::Attrs(*b.node).get_float("epsilon", 1e-5f);
        spec.mul_dims = t.channel.mul.dims, spec.add_dims = t.channel.add.dims;
        spec.relu = t.relu != nullptr;
        NodeStep fused = b;
        for (const ChannelOperand* o : {&t.channel.mul, &t.channel.add}) {
            if (!o->node) continue;
            fused.inputs.push_back(p.slot.at(o->data));
            if (!fused.outer.empty()) fused.outer.push_back(nullptr);
        }
        fused.outputs = out[step_of.at(t.last)].outputs;
        std::vector<const ir::Node*> absorbed = channel_nodes(t.channel);
        if (t.relu) absorbed.push_back(t.relu);
        for (const ir::Node* n : absorbed)
            if (is_op(n, "Mul") || is_op(n, "Add") || is_op(n, "Relu"))
                fused.fused_with += ", fused with '" + n->name + "' (" + n->op_type + ")";
        fused.kernel =
            share_kernel(ops::make_batch_norm_chain(spec, plain_tail(b, t, out, step_of)));
        fused.bn_chain = std::make_shared<const ops::BatchNormChain>(spec);
        out[i] = std::move(fused);
        for (const ir::Node* n : absorbed) {
            keep_only_releases(out[step_of.at(n)]);
            ++*fused_nodes;
        }
        keep_channel_data(p, out, i, t.channel);
    }
    if (*fused_nodes == 0) out.clear();
    return out;
}

}  // namespace pg::runtime
