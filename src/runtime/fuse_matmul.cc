// MatMul -> bias Add fusion (see fuse.h).
#include <unordered_map>

#include "ir/model.h"
#include "ops/matmul_fused.h"
#include "runtime/fuse.h"

namespace pg::runtime {

namespace {

// The Add reading MatMul step m's output as its only use, whose other operand is an initializer
// holding one value per column of a 2-D initializer B (*other: that operand's index in the Add).
const ir::Node* bias_add_after(const ir::Graph& g, const NodeStep& m,
                               const std::unordered_map<const ir::Node*, size_t>& step_of,
                               size_t* other) {
    const ir::Value* b = m.node->input(1);
    if (!b || !b->is_initializer() || b->initializer()->tensor.rank() != 2) return nullptr;
    size_t index = 0;
    const ir::Node* add = sole_user(g, m.node->outputs()[0], step_of, &index);
    if (!is_op(add, "Add") || add->inputs().size() != 2 || !single_output(*add) ||
        legacy_broadcast(*add))
        return nullptr;
    const ir::Value* bias = add->inputs()[1 - index];
    if (!bias || !bias->is_initializer()) return nullptr;
    const auto& d = bias->initializer()->tensor.dims();
    if (d.empty() || d.back() != b->initializer()->tensor.dims()[1]) return nullptr;
    for (size_t i = 0; i + 1 < d.size(); ++i)
        if (d[i] != 1) return nullptr;
    *other = 1 - index;
    return add;
}

// MatMul then Add (in the graph's operand order) on the fused step's inputs (A, B, bias).
ops::KernelFn plain_pair(const NodeStep& m, const NodeStep& add, size_t other) {
    return [mm = m.node, mm_kernel = m.kernel, add_node = add.node, add_kernel = add.kernel,
            other](ops::KernelContext& ctx) {
        ops::KernelContext first(*mm, {ctx.value(0), ctx.value(1)}, 1, ctx.pool(), nullptr);
        (*mm_kernel)(first);
        ops::RtValue y = std::move(first.outputs()[0]);
        std::vector<const ops::RtValue*> in{&y, ctx.value(2)};
        if (other == 0) std::swap(in[0], in[1]);
        ops::KernelContext second(*add_node, in, 1, ctx.pool(), nullptr);
        (*add_kernel)(second);
        ctx.set_output(0, std::move(second.outputs()[0]));
    };
}

}  // namespace

std::vector<NodeStep> fuse_matmul_bias(const ir::Graph& g, const std::vector<NodeStep>& steps,
                                       int* fused_nodes) {
    *fused_nodes = 0;
    const auto step_of = step_index(steps);
    std::vector<NodeStep> out = steps;
    for (size_t i = 0; i < steps.size(); ++i) {
        const NodeStep& m = steps[i];
        if (!m.kernel || !is_op(m.node, "MatMul") || m.node->inputs().size() != 2 ||
            !single_output(*m.node) || m.inputs.size() != 2)
            continue;
        size_t other = 0;
        const ir::Node* add = bias_add_after(g, m, step_of, &other);
        if (!add || !out[step_of.at(add)].kernel) continue;
        const NodeStep& a = steps[step_of.at(add)];
        NodeStep fused = m;
        fused.inputs.push_back(a.inputs[other]);
        if (!fused.outer.empty()) fused.outer.push_back(nullptr);
        fused.outputs = a.outputs;
        fused.fused_with += ", fused with '" + add->name + "' (Add)";
        fused.kernel = share_kernel(ops::make_matmul_bias(plain_pair(m, a, other)));
        out[i] = std::move(fused);
        keep_only_releases(out[step_of.at(add)]);
        ++*fused_nodes;
    }
    if (*fused_nodes == 0) out.clear();
    return out;
}

}  // namespace pg::runtime
