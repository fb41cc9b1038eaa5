// BatchNormalization -> Relu fusion (see fuse.h).
#include <unordered_map>

#include "ir/model.h"
#include "ops/attrs.h"
#include "ops/norm_fused.h"
#include "runtime/fuse.h"

namespace pg::runtime {

namespace {

// The Relu step reading BatchNormalization step b's output, if it is the value's only use.
const NodeStep* relu_after(const ir::Graph& g, const NodeStep& b,
                           const std::vector<NodeStep>& steps,
                           const std::unordered_map<const ir::Node*, size_t>& step_of) {
    const ir::Node* r = sole_reader(g, b.node->outputs()[0], step_of);
    if (!is_op(r, "Relu") || !single_output(*r)) return nullptr;
    const NodeStep& s = steps[step_of.at(r)];
    return s.kernel ? &s : nullptr;
}

// The two plain kernels one after another on the fused step's inputs.
ops::KernelFn plain_pair(const NodeStep& bn, const NodeStep& relu) {
    return [bn_node = bn.node, bn_kernel = bn.kernel, relu_node = relu.node,
            relu_kernel = relu.kernel](ops::KernelContext& ctx) {
        std::vector<const ops::RtValue*> in;
        for (size_t i = 0; i < 5; ++i) in.push_back(ctx.value(i));
        ops::KernelContext first(*bn_node, in, 1, ctx.pool(), nullptr);
        (*bn_kernel)(first);
        ops::RtValue y = std::move(first.outputs()[0]);
        ops::KernelContext second(*relu_node, {&y}, 1, ctx.pool(), nullptr);
        (*relu_kernel)(second);
        ctx.set_output(0, std::move(second.outputs()[0]));
    };
}

}  // namespace

std::vector<NodeStep> fuse_bn_relu(const ir::Graph& g, const std::vector<NodeStep>& steps,
                                   int64_t opset, int* fused_nodes) {
    *fused_nodes = 0;
    const auto step_of = step_index(steps);
    std::vector<NodeStep> out = steps;
    for (size_t i = 0; i < steps.size(); ++i) {
        const NodeStep& b = steps[i];
        if (!b.kernel || !is_op(b.node, "BatchNormalization") ||
            !fusable_batch_norm(g, *b.node, opset))
            continue;
        const NodeStep* r = relu_after(g, b, steps, step_of);
        if (!r || !out[step_of.at(r->node)].kernel) continue;
        NodeStep fused = b;
        fused.outputs = r->outputs;
        fused.fused_with += ", fused with '" + r->node->name + "' (Relu)";
        fused.kernel = share_kernel(ops::make_batch_norm_relu(
            ops::Attrs(*b.node).get_float("epsilon", 1e-5f), plain_pair(b, *r)));
        out[i] = std::move(fused);
        NodeStep& later = out[step_of.at(r->node)];  // keeps only its releases
        later.kernel = nullptr, later.inputs.clear(), later.outer.clear(), later.outputs.clear();
        ++*fused_nodes;
    }
    if (*fused_nodes == 0) out.clear();
    return out;
}

}  // namespace pg::runtime
