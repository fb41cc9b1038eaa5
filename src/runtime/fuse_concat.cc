// Concats written in place by the Convs producing their inputs (see fuse.h). A Concat whose first
// input is the output of the previous Concat of a chain (DenseNet's blocks: each Concat extends
// the last by one Conv's channels) joins that chain: the chain's Concats share one buffer, each
// an ever longer prefix of it, and the chain's first input (the base, when not a Conv output
// itself) is copied in once, by the first Concat. A blocked Concat (runtime/fuse_nchwc.cc) is
// written in place by blocked Convs the same way, its channel blocks taking the channels' place
// (n, c / 16, h, w, 16 is a Concat along axis 1 too).
#include <algorithm>
#include <atomic>
#include <unordered_map>
#include <unordered_set>

#include "ir/model.h"
#include "ops/attrs.h"
#include "ops/concat_slice.h"
#include "ops/nchwc.h"
#include "runtime/fuse.h"
#include "runtime/session.h"

namespace pg::runtime {

namespace {

std::atomic<bool> g_enabled{true};

// A Conv step writing a part of a chain's buffer, channels from `offset` after the base's.
struct Part {
    size_t step = 0;
    int64_t offset = 0;
};

// Concats sharing one buffer.
struct Chain {
    int base = -1;                // slot of the first Concat's first input when not a Conv part
    int64_t channels = 0;         // Conv channels so far (all of them once planned)
    int64_t rank = 0;             // the Conv outputs' rank
    std::vector<Part> parts;      // the producers
    std::vector<size_t> concats;  // member Concat steps, in order
};

// Output channels and rank of Conv step `s` (its weights an initializer), or false; for a
// blocked step (runtime/fuse_nchwc.cc), its blocks and the blocked rank.
bool conv_output(const NodeStep& s, int64_t* channels, int64_t* rank) {
    if (!s.kernel || !is_op(s.node, "Conv") || s.node->inputs().size() < 2) return false;
    const ir::Value* w = s.node->inputs()[1];
    if (!w || !w->is_initializer() || w->initializer()->tensor.rank() < 3) return false;
    *channels = w->initializer()->tensor.dims()[0];
    *rank = w->initializer()->tensor.rank();
    if (s.blocked) *channels /= ops::kNchwcBlock, *rank += 1;  // (n, c / 16, h, w, 16)
    return true;
}

struct Planner {
    const ir::Graph& g;
    std::vector<NodeStep>& steps;
    std::unordered_map<int, size_t> producer;  // slot -> the step writing it
    std::unordered_map<int, size_t> tip;       // a chain's last Concat output slot -> chain
    std::unordered_set<size_t> claimed;        // Conv steps already a chain's part
    std::vector<Chain> chains;

    // Input i of Concat step c as a Conv part: its channels and rank, or false.
    bool conv_part(const NodeStep& c, size_t i, size_t* step, int64_t* channels, int64_t* rank) {
        const ir::Value* v = c.node->inputs()[i];
        if (!v || v->uses().size() != 1 || c.inputs[i] < 0 ||
            std::count(g.outputs().begin(), g.outputs().end(), v))
            return false;
        auto it = producer.find(c.inputs[i]);
        if (it == producer.end()) return false;
        const NodeStep& s = steps[it->second];
        *step = it->second;
        return !s.outputs.empty() && s.outputs[0] == c.inputs[i] && !claimed.count(it->second) &&
               s.blocked == c.blocked && conv_output(s, channels, rank);
    }

    // Adds Concat step ci to a chain (a new one, or the one whose last output it extends).
    bool add(size_t ci) {
        const NodeStep& c = steps[ci];
        const ir::Node& n = *c.node;
        if (n.inputs().empty() || c.inputs.size() != n.inputs().size() || !single_output(n) ||
            c.outputs.empty() || c.outputs[0] < 0)
            return false;
        std::vector<std::pair<size_t, int64_t>> convs;  // (step, channels) of inputs 1...
        int64_t rank = 0;
        for (size_t i = 1; i < n.inputs().size(); ++i) {
            size_t s = 0;
            int64_t ch = 0, r = 0;
            if (!conv_part(c, i, &s, &ch, &r) || (rank && r != rank)) return false;
            rank = r, convs.emplace_back(s, ch);
        }
        size_t s0 = 0;
        int64_t ch0 = 0, r0 = 0;
        const bool first_conv = conv_part(c, 0, &s0, &ch0, &r0);
        const auto extends = tip.find(c.inputs[0]);
        if (first_conv) {
            if (rank && r0 != rank) return false;
            rank = r0;
        }
        if (rank == 0) return false;  // no Conv part: nothing to write in place
        const int64_t axis = ops::Attrs(n).get_int("axis", 1);
        const int64_t onnx_rank = c.blocked ? rank - 1 : rank;  // blocked: the values' rank
        if (axis != 1 && axis != 1 - onnx_rank) return false;
        size_t k = chains.size();
        if (!first_conv && extends != tip.end() && chains[extends->second].rank == rank) {
            k = extends->second;
            tip.erase(extends);
        } else {
            chains.push_back({});
            chains.back().rank = rank;
            if (first_conv)
                convs.insert(convs.begin(), {s0, ch0});
            else
                chains.back().base = c.inputs[0];
        }
        Chain& chain = chains[k];
        for (const auto& [s, ch] : convs) {
            chain.parts.push_back({s, chain.channels});
            chain.channels += ch;
            claimed.insert(s);
        }
        chain.concats.push_back(ci);
        tip[c.outputs[0]] = k;
        return true;
    }

    // Gives each chain its buffer slot and the producers and Concats their parts.
    void finish(GraphPlan& p) {
        for (Chain& chain : chains) {
            const int buffer = p.num_slots++;
            for (const Part& part : chain.parts) {
                NodeStep& s = steps[part.step];
                s.concat_slot = buffer, s.concat_offset = part.offset;
                s.concat_total = chain.channels, s.concat_base = chain.base;
            }
            for (size_t ci : chain.concats) {
                NodeStep& c = steps[ci];
                c.inputs.push_back(buffer);
                c.kernel = share_kernel(ops::make_concat_in_place(*c.kernel));
            }
            steps[chain.concats.back()].release.push_back(buffer);
        }
    }
};

}  // namespace

bool set_fuse_concat_in_place(bool on) {
    return g_enabled.exchange(on);
}

std::vector<NodeStep> fuse_concat_in_place(const ir::Graph& g, GraphPlan& p,
                                           const std::vector<NodeStep>& steps, int* concats) {
    *concats = 0;
    if (!g_enabled.load(std::memory_order_relaxed)) return {};
    std::vector<NodeStep> out = steps;
    Planner plan{g, out, {}, {}, {}, {}};
    for (size_t i = 0; i < out.size(); ++i)
        for (int slot : out[i].outputs)
            if (slot >= 0) plan.producer[slot] = i;
    for (size_t i = 0; i < out.size(); ++i)
        if (out[i].kernel && is_op(out[i].node, "Concat") && plan.add(i)) ++*concats;
    plan.finish(p);
    if (*concats == 0) out.clear();
    return out;
}

}  // namespace pg::runtime
