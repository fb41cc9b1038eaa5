// Mul / Div by a constant -> Softmax / LogSoftmax fusion (see fuse.h).
#include <atomic>
#include <unordered_map>

#include "ops/attrs.h"
#include "ops/softmax_fused.h"
#include "runtime/fuse.h"
#include "runtime/session.h"

namespace pg::runtime {

namespace {

std::atomic<bool> g_enabled{true};

// The index of the operand of Mul / Div step m that is an initializer of one element (a Div's
// divisor only), or -1.
int constant_operand(const NodeStep& m) {
    const bool div = is_op(m.node, "Div");
    if ((!div && !is_op(m.node, "Mul")) || m.node->inputs().size() != 2 || m.inputs.size() != 2 ||
        !single_output(*m.node) || legacy_broadcast(*m.node) || m.inputs[0] < 0 || m.inputs[1] < 0)
        return -1;
    for (int k = div ? 1 : 0; k < 2; ++k) {
        const ir::Value* v = m.node->input(static_cast<size_t>(k));
        if (v && v->is_initializer() && v->initializer()->tensor.has_data() &&
            v->initializer()->tensor.numel() == 1)
            return k;
    }
    return -1;
}

// Mul / Div, then the Softmax, on the fused step's inputs (x, the constant) in the graph's
// operand order.
ops::KernelFn plain_pair(const NodeStep& m, const NodeStep& sm, int k) {
    return [m_node = m.node, m_kernel = m.kernel, sm_node = sm.node, sm_kernel = sm.kernel,
            k](ops::KernelContext& ctx) {
        std::vector<const ops::RtValue*> in{ctx.value(0), ctx.value(1)};
        if (k == 0) std::swap(in[0], in[1]);
        ops::KernelContext first(*m_node, in, 1, ctx.pool(), nullptr);
        (*m_kernel)(first);
        ops::RtValue scaled = std::move(first.outputs()[0]);
        ops::KernelContext second(*sm_node, {&scaled}, 1, ctx.pool(), nullptr);
        (*sm_kernel)(second);
        ctx.set_output(0, std::move(second.outputs()[0]));
    };
}

}  // namespace

bool set_fuse_scaled_softmax(bool on) {
    return g_enabled.exchange(on);
}

std::vector<NodeStep> fuse_scaled_softmax(const ir::Graph& g, const std::vector<NodeStep>& steps,
                                          int64_t opset, int* fused_nodes) {
    *fused_nodes = 0;
    if (!g_enabled.load()) return {};
    const auto step_of = step_index(steps);
    std::vector<NodeStep> out = steps;
    for (size_t i = 0; i < steps.size(); ++i) {
        const NodeStep& m = steps[i];
        if (!m.kernel || !m.outer.empty() || !m.fused_with.empty()) continue;
        const int k = constant_operand(m);
        if (k < 0) continue;
        size_t index = 0;
        const ir::Node* sm = sole_user(g, m.node->outputs()[0], step_of, &index);
        const bool log = is_op(sm, "LogSoftmax");
        if ((!log && !is_op(sm, "Softmax")) || index != 0 || !single_output(*sm) ||
            !out[step_of.at(sm)].kernel || !out[step_of.at(sm)].outer.empty() ||
            !out[step_of.at(sm)].fused_with.empty())
            continue;
        const NodeStep& s = steps[step_of.at(sm)];
        ops::ScaledSoftmax spec;
        spec.opset = opset;
        spec.axis = ops::Attrs(*sm).get_int("axis", opset < 13 ? 1 : -1);
        spec.log = log;
        spec.divide = is_op(m.node, "Div");
        NodeStep fused = m;
        fused.inputs = {m.inputs[static_cast<size_t>(1 - k)], m.inputs[static_cast<size_t>(k)]};
        fused.outputs = s.outputs;
        fused.fused_with += ", fused with '" + sm->name + "' (" + sm->op_type + ")";
        fused.kernel = share_kernel(ops::make_scaled_softmax(spec, plain_pair(m, s, k)));
        out[i] = std::move(fused);
        keep_only_releases(out[step_of.at(sm)]);
        ++*fused_nodes;
    }
    if (*fused_nodes == 0) out.clear();
    return out;
}

}  // namespace pg::runtime
