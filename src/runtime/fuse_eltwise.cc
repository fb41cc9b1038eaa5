// Element-wise chain fusion (see fuse.h): Add / Sub / Mul / Div / Sum / Relu / Erf nodes where each
// one's output is read only by the next, run as one step (ops/eltwise_chain.h) at the place of
// the last node, where every operand of the chain is ready.
#include <algorithm>
#include <unordered_map>

#include "ir/model.h"
#include "ops/eltwise_chain.h"
#include "runtime/fuse.h"

namespace pg::runtime {

namespace {

// Non-chain steps allowed between a chain's first and last node: the chain's inputs are
// released at its last node, so values they hold stay alive a few steps longer.
constexpr size_t kMaxBetween = 4;

// The link n can be, if it is a one-output element-wise op with numpy broadcasting.
bool link_of(const ir::Node& n, int64_t opset, ops::EltwiseLink* l) {
    if (!ir::is_default_domain(n.domain) || !n.subgraphs().empty()) return false;
    if (n.outputs().size() != 1 || !n.outputs()[0]) return false;
    for (const ir::Value* v : n.inputs())
        if (!v) return false;
    // Numpy broadcasting from opset 7 (Sum 8); unary Relu and Erf at any opset that has them.
    const bool unary = n.op_type == "Relu" || n.op_type == "Erf";
    if (!unary && opset < (n.op_type == "Sum" ? 8 : 7)) return false;
    return ops::eltwise_link_of(n.op_type, n.inputs().size(), l);
}

// The top-level node reading v as its only use (v is not a graph output), with the input index.
const ir::Node* only_reader(const ir::Graph& g, const ir::Value* v, size_t* index) {
    if (v->uses().size() != 1) return nullptr;
    if (std::find(g.outputs().begin(), g.outputs().end(), v) != g.outputs().end()) return nullptr;
    *index = v->uses()[0].index;
    return v->uses()[0].node;
}

struct Link {
    size_t step;
    ops::EltwiseLink link;
};

// The chain starting at step i: at least two links, each later one reading the previous output,
// none of them in a chain already.
std::vector<Link> match(const ir::Graph& g, const std::vector<NodeStep>& steps,
                        const std::vector<bool>& taken, size_t i, int64_t opset,
                        const std::unordered_map<const ir::Node*, size_t>& step_of) {
    std::vector<Link> chain;
    ops::EltwiseLink l;
    if (!steps[i].kernel || !link_of(*steps[i].node, opset, &l)) return chain;
    chain.push_back({i, l});
    while (true) {
        size_t index = 0;
        const ir::Node* next = only_reader(g, steps[chain.back().step].node->outputs()[0], &index);
        auto it = next ? step_of.find(next) : step_of.end();
        if (it == step_of.end() || taken[it->second] || !steps[it->second].kernel ||
            !link_of(*next, opset, &l))
            break;
        if (next->inputs().size() == 2 && next->inputs()[0] == next->inputs()[1]) break;
        l.value_second = index == 1;
        chain.push_back({it->second, l});
    }
    if (chain.size() < 2) return {};
    const size_t between = chain.back().step - chain.front().step + 1 - chain.size();
    if (between > kMaxBetween) return {};
    return chain;
}

// Runs the chain's plain kernels one after another on the fused step's inputs.
ops::KernelFn plain_chain(const std::vector<NodeStep>& steps, const std::vector<Link>& chain) {
    struct Part {
        const ir::Node* node;
        SharedKernel kernel;
        bool value_second;
    };
    std::vector<Part> parts;
    for (const Link& l : chain)
        parts.push_back({steps[l.step].node, steps[l.step].kernel, l.link.value_second});
    return [parts](ops::KernelContext& ctx) {
        ops::RtValue y;
        size_t next = 0;
        for (size_t k = 0; k < parts.size(); ++k) {
            const Part& part = parts[k];
            std::vector<const ops::RtValue*> in;
            if (k == 0) {
                for (size_t i = 0; i < part.node->inputs().size(); ++i)
                    in.push_back(ctx.value(next++));
            } else if (part.node->inputs().size() == 1) {
                in.push_back(&y);
            } else {
                const ops::RtValue* other = ctx.value(next++);
                const ops::RtValue* value = &y;
                in = part.value_second ? std::vector{other, value} : std::vector{value, other};
            }
            ops::KernelContext sub(*part.node, in, 1, ctx.pool(), nullptr);
            (*part.kernel)(sub);
            y = std::move(sub.outputs()[0]);
        }
        ctx.set_output(0, std::move(y));
    };
}

// The fused step at the place of the chain's last node: the first node's inputs, then the other
// input of each later binary node; the releases of every node of the chain.
NodeStep fused_step(const std::vector<NodeStep>& steps, const std::vector<Link>& chain) {
    const NodeStep& first = steps[chain.front().step];
    const NodeStep& last = steps[chain.back().step];
    NodeStep s;
    s.node = last.node;
    for (size_t k = 0; k < chain.size(); ++k) {
        const NodeStep& st = steps[chain[k].step];
        if (k == 0)
            s.inputs = st.inputs;
        else if (st.inputs.size() == 2)
            s.inputs.push_back(st.inputs[chain[k].link.value_second ? 0 : 1]);
        s.release.insert(s.release.end(), st.release.begin(), st.release.end());
    }
    s.outputs = last.outputs;
    s.opset = first.opset;
    s.named = first.named ? first.named : first.node;
    for (size_t k = 1; k < chain.size(); ++k) {
        const ir::Node* n = steps[chain[k].step].node;
        s.fused_with += ", fused with '" + n->name + "' (" + n->op_type + ")";
    }
    std::vector<ops::EltwiseLink> links;
    for (const Link& l : chain) links.push_back(l.link);
    s.kernel = share_kernel(ops::make_eltwise_chain(std::move(links), plain_chain(steps, chain)));
    return s;
}

}  // namespace

std::vector<NodeStep> fuse_eltwise_chains(const ir::Graph& g, const std::vector<NodeStep>& steps,
                                          int64_t opset, int* fused_nodes) {
    *fused_nodes = 0;
    std::unordered_map<const ir::Node*, size_t> step_of;
    for (size_t i = 0; i < steps.size(); ++i)
        if (steps[i].node) step_of[steps[i].node] = i;
    std::vector<NodeStep> out = steps;
    std::vector<bool> taken(steps.size(), false);  // part of a chain already
    for (size_t i = 0; i < steps.size(); ++i) {
        if (!out[i].kernel || taken[i]) continue;
        const std::vector<Link> chain = match(g, out, taken, i, opset, step_of);
        if (chain.empty()) continue;
        NodeStep fused = fused_step(out, chain);
        for (const Link& l : chain) {
            taken[l.step] = true;
            NodeStep& s = out[l.step];  // nothing left to do: the fused step releases
            s.kernel = nullptr, s.inputs.clear(), s.outer.clear(), s.outputs.clear();
            s.release.clear();
        }
        // A value the chain reads whose last reader ran between its first and last node is now
        // released after the fused step instead.
        for (size_t j = chain.front().step + 1; j < chain.back().step; ++j) {
            std::vector<int>& rel = out[j].release;
            for (auto it = rel.begin(); it != rel.end();) {
                if (std::find(fused.inputs.begin(), fused.inputs.end(), *it) ==
                    fused.inputs.end()) {
                    ++it;
                    continue;
                }
                fused.release.push_back(*it);
                it = rel.erase(it);
            }
        }
        out[chain.back().step] = std::move(fused);
        *fused_nodes += static_cast<int>(chain.size()) - 1;
    }
    if (*fused_nodes == 0) out.clear();
    return out;
}

}  // namespace pg::runtime
