// MatMul with its operands' and its result's Transposes folded in (see fuse.h): attention's
// Q / K / V head splits and the merge of the heads after it, which each copied a [S, H * D]
// activation (0.02 ms a Transpose at two threads on the zoo transformer, eight per run).
#include <atomic>
#include <unordered_set>

#include "ops/attrs.h"
#include "ops/matmul_views.h"
#include "runtime/fuse.h"

namespace pg::runtime {

namespace {

std::atomic<bool> g_enabled{true};

// The permutation of a 4-D Transpose (its attribute, or the reversal when it has none); empty
// when n is not a one-output Transpose with a kernel whose perm has 4 axes.
std::vector<int64_t> perm_of(const ir::Node* n, const NodeStep& s) {
    if (!is_op(n, "Transpose") || !single_output(*n) || !s.kernel || s.inputs.size() != 1 ||
        s.inputs[0] < 0)
        return {};
    const ops::Attrs a(*n);
    std::vector<int64_t> perm = a.get_ints("perm", {3, 2, 1, 0});
    return perm.size() == 4 ? perm : std::vector<int64_t>{};
}

// The Transpose step producing MatMul input v, read by the MatMul only; its perm in *perm.
const NodeStep* input_transpose(const ir::Graph& g, const ir::Value* v,
                                const std::vector<NodeStep>& steps,
                                const std::unordered_map<const ir::Node*, size_t>& step_of,
                                std::vector<int64_t>* perm) {
    size_t index = 0;
    if (!v || !v->producer() || !sole_user(g, v, step_of, &index)) return nullptr;
    auto it = step_of.find(v->producer());
    if (it == step_of.end()) return nullptr;
    *perm = perm_of(v->producer(), steps[it->second]);
    return perm->empty() ? nullptr : &steps[it->second];
}

// Transposes, then the MatMul, then the output Transpose, each its own kernel, on the fused
// step's inputs (the Transposes' inputs where they are folded).
ops::KernelFn plain_views(const NodeStep& mm, const NodeStep* ta, const NodeStep* tb,
                          const NodeStep* ty) {
    auto run = [](const NodeStep* s, const ops::RtValue* in, ops::KernelContext& ctx) {
        ops::KernelContext sub(*s->node, {in}, 1, ctx.pool(), nullptr);
        (*s->kernel)(sub);
        return std::move(sub.outputs()[0]);
    };
    return [mm = mm, ta = ta ? *ta : NodeStep{}, tb = tb ? *tb : NodeStep{},
            ty = ty ? *ty : NodeStep{}, run](ops::KernelContext& ctx) {
        ops::RtValue a, b;
        const ops::RtValue* in_a = ctx.value(0);
        const ops::RtValue* in_b = ctx.value(1);
        if (ta.node) a = run(&ta, in_a, ctx), in_a = &a;
        if (tb.node) b = run(&tb, in_b, ctx), in_b = &b;
        ops::KernelContext product(*mm.node, {in_a, in_b}, 1, ctx.pool(), nullptr);
        (*mm.kernel)(product);
        ops::RtValue y = std::move(product.outputs()[0]);
        ctx.set_output(0, ty.node ? run(&ty, &y, ctx) : std::move(y));
    };
}

}  // namespace

bool set_fuse_matmul_transposes(bool on) {
    return g_enabled.exchange(on);
}

std::vector<NodeStep> fuse_matmul_transposes(const ir::Graph& g,
                                             const std::vector<NodeStep>& steps,
                                             int* fused_nodes) {
    *fused_nodes = 0;
    if (!g_enabled.load()) return {};
    const auto step_of = step_index(steps);
    std::vector<NodeStep> out = steps;
    std::unordered_set<int> moved;  // folded Transposes' inputs, now read by the MatMul
    for (size_t i = 0; i < steps.size(); ++i) {
        const NodeStep& m = steps[i];
        if (!m.kernel || !is_op(m.node, "MatMul") || m.node->inputs().size() != 2 ||
            !single_output(*m.node) || m.inputs.size() != 2 || !m.outer.empty())
            continue;
        ops::MatMulViews views;
        // Looked up in `out`: a Transpose folded already (its kernel gone) is not taken twice.
        const NodeStep* ta = input_transpose(g, m.node->input(0), out, step_of, &views.perm_a);
        const NodeStep* tb = input_transpose(g, m.node->input(1), out, step_of, &views.perm_b);
        size_t index = 0;
        const ir::Node* reader = sole_user(g, m.node->outputs()[0], step_of, &index);
        const NodeStep* ty = reader ? &out[step_of.at(reader)] : nullptr;
        if (ty) views.perm_y = perm_of(reader, *ty);
        if (views.perm_y.empty()) ty = nullptr;
        if (!ta && !tb && !ty) continue;
        const NodeStep* folded[3] = {ta, tb, ty};
        NodeStep fused = m;
        for (const NodeStep* t : {ta, tb}) {
            if (!t) continue;
            const size_t k = t == ta ? 0 : 1;
            fused.inputs[k] = t->inputs[0];
            moved.insert(t->inputs[0]);
            fused.fused_with += ", fused with '" + t->node->name + "' (Transpose)";
        }
        if (ty) {
            fused.outputs = ty->outputs;
            fused.fused_with += ", fused with '" + ty->node->name + "' (Transpose)";
        }
        fused.kernel = share_kernel(ops::make_matmul_views(views, plain_views(m, ta, tb, ty)));
        out[i] = std::move(fused);
        for (const NodeStep* t : folded) {
            if (!t) continue;
            keep_only_releases(out[step_of.at(t->node)]);
            ++*fused_nodes;
        }
    }
    if (*fused_nodes == 0) return {};
    release_at_last_reader(out, moved);
    return out;
}

}  // namespace pg::runtime
