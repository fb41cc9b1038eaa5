// Regions of the blocked (NCHWc16) layout (see fuse.h). A candidate is a step
// ops/nchwc_kernels.h runs blocked: a Conv step (fused chain or plain; 2-D weights initializer,
// one group or depthwise, output channels a multiple of 16, input channels too or else a stem
// reading its input plain, no shuffle, no window wider than 3x3 but a stem's; or, with output
// channels not a multiple of 16, one group, blocked input channels and no residual, a Conv
// reading blocked and writing plain: a classifier's 1000 channels), a 2-D MaxPool /
// AveragePool / global pool or a BatchNormalization chain (fuse_bn.cc: DenseNet's
// pre-activations) after a candidate, or a Concat of channels with an input from a
// candidate whose output only candidates read; their inputs' channel counts must be known (from
// Convs' weights) and multiples of 16. (The pass runs before Concats are planned in place.)
// Candidates joined by a value (one's output, the other's X or residual) form a region; a region
// with two Convs or more and more Convs than reorders (values entering and leaving) runs blocked
// (1x1 and 3x3 Convs run faster blocked, 5x5 ones slower, so those run plain beside the region:
// docs/performance.md, sessions 9, 10 and 13):
// - its steps read and write blocked slots (new slots of the plan);
// - a value entering it (from outside, or a graph input) is reordered once, just before its
//   first reader in the region, into a blocked slot; the plain value is released as soon as
//   no step outside the region needs it;
// - a value leaving it (a reader outside the region, a graph output, a subgraph's outer read)
//   is reordered back right after its producer, into the value's own slot.
// The values are the plain steps' within float32 rounding (the blocked Convs sum a blocked
// input's lanes in another order than gemm_direct, or go through Winograd F(2x2, 3x3):
// ops/nchwc_winograd.h; the pools as the plain ones;
// tests/unit/session_nchwc_test.cc).
#include <algorithm>
#include <atomic>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

#include "ir/topo.h"
#include "ops/attrs.h"
#include "ops/conv_fused.h"
#include "ops/nchwc.h"
#include "ops/nchwc_kernels.h"
#include "runtime/fuse.h"
#include "runtime/session.h"

namespace pg::runtime {

namespace {

std::atomic<bool> g_enabled{true};
std::atomic<bool> g_plain_outputs{true};  // set_nchwc_plain_outputs
std::atomic<bool> g_cached_for_pools{true};  // set_nchwc_cached_for_pools
std::atomic<bool> g_fold_averages{true};     // set_nchwc_fold_global_averages
constexpr int64_t kBlock = ops::kNchwcBlock;

bool is_pool(const ir::Node* n) {
    return is_op(n, "MaxPool") || is_op(n, "AveragePool") || is_op(n, "GlobalAveragePool") ||
           is_op(n, "GlobalMaxPool");
}

// The initializer weights of Conv node n when 4-D; nullptr otherwise.
const Tensor* conv_weights(const ir::Node& n) {
    const ir::Value* w = n.inputs().size() >= 2 ? n.inputs()[1] : nullptr;
    if (!w || !w->is_initializer() || w->initializer()->tensor.rank() != 4) return nullptr;
    return &w->initializer()->tensor;
}

// What a candidate step reads blocked (input indices) and how it runs.
struct Candidate {
    bool conv = false, concat = false, norm = false;
    bool plain_out = false;  // a Conv writing its output plain (channels not in whole blocks)
    ops::ConvChain chain;
    std::vector<size_t> blocked;  // X, then the residual
};

// The step as a Conv candidate.
bool conv_candidate(const NodeStep& s, Candidate& c) {
    if (!is_op(s.node, "Conv") || s.concat_slot >= 0 || s.outputs.size() != 1) return false;
    const Tensor* w = conv_weights(*s.node);
    if (!w || w->dims()[0] == 0 || w->dims()[1] == 0) return false;
    c.chain = s.conv_chain ? *s.conv_chain : ops::ConvChain{};
    if (!s.conv_chain) c.chain.conv = ops::read_conv_attrs(ops::Attrs(*s.node));
    const int64_t group = c.chain.conv.group;  // 1, or depthwise (one channel per group)
    const bool depthwise = group > 1 && group == w->dims()[0] && w->dims()[1] == 1;
    // A stem: input channels not in blocks (3 colours), read plain, written blocked.
    const bool stem = group == 1 && w->dims()[1] % kBlock != 0;
    if ((group != 1 && !depthwise) || c.chain.shuffle || s.inputs.empty() || s.inputs[0] < 0)
        return false;
    // Output channels not in whole blocks: read blocked, written plain (never a stem, a
    // depthwise Conv or a residual, which would be blocked with those channels).
    c.plain_out = w->dims()[0] % kBlock != 0;
    if (c.plain_out && (stem || depthwise || c.chain.residual ||
                        !g_plain_outputs.load(std::memory_order_relaxed)))
        return false;
    // Wider than 3x3 (not a stem): slower blocked, so it runs plain beside any region, which its
    // input leaves and its output enters (Inception-v1's 5x5 branches: 0.896 of the time with
    // the rest of its blocks blocked, docs/performance.md, session 13).
    if (!stem && w->dims()[2] * w->dims()[3] > 9) return false;
    c.conv = true;
    if (!stem) c.blocked = {0};
    if (c.chain.residual) {
        const size_t r =
            3 + (c.chain.batch_norm ? 4 : 0) + (c.chain.scale ? 1 : 0) + (c.chain.shift ? 1 : 0);
        if (r >= s.inputs.size() || s.inputs[r] < 0) return false;
        c.blocked.push_back(r);
    }
    return true;
}

// The step as a pool candidate, its input's channels known (channels of slots).
bool pool_candidate(const NodeStep& s, const std::unordered_map<int, int64_t>& channels,
                    Candidate& c) {
    if (!is_pool(s.node) || s.concat_slot >= 0 || s.inputs.empty() || s.inputs[0] < 0 ||
        !single_output(*s.node) || s.outputs.empty())
        return false;
    if (!is_op(s.node, "GlobalAveragePool") && !is_op(s.node, "GlobalMaxPool") &&
        ops::Attrs(*s.node).get_ints("kernel_shape").size() != 2)
        return false;
    const auto it = channels.find(s.inputs[0]);
    if (it == channels.end() || it->second % kBlock || it->second == 0) return false;
    c.blocked = {0};
    return true;
}

// The step as a BatchNormalization chain (fuse_bn.cc) on values whose channels are known.
bool norm_candidate(const NodeStep& s, const std::unordered_map<int, int64_t>& channels,
                    Candidate& c) {
    if (!s.bn_chain || s.concat_slot >= 0 || s.inputs.empty() || s.inputs[0] < 0 ||
        s.outputs.size() != 1 || s.outputs[0] < 0)
        return false;
    const auto it = channels.find(s.inputs[0]);
    if (it == channels.end() || it->second % kBlock || it->second == 0) return false;
    c.norm = true;
    c.blocked = {0};
    return true;
}

// The step as a Concat of channels (axis 1 of rank-4 values; every input's channel count known
// and a multiple of 16, one input from a candidate); out_channels receives the sum.
bool concat_candidate(const NodeStep& s, const std::unordered_map<int, int64_t>& channels,
                      const std::unordered_map<int, size_t>& producer,
                      const std::unordered_map<size_t, Candidate>& so_far, Candidate& c,
                      int64_t* out_channels) {
    if (!is_op(s.node, "Concat") || s.concat_slot >= 0 || s.inputs.empty() ||
        !single_output(*s.node) || s.outputs.empty() || s.outputs[0] < 0)
        return false;
    const int64_t axis = ops::Attrs(*s.node).get_int("axis", 0);
    if (axis != 1 && axis != -3) return false;  // rank 4: the channels
    int64_t sum = 0;
    bool fed = false;
    for (int in : s.inputs) {
        const auto it = channels.find(in);
        if (in < 0 || it == channels.end() || it->second % kBlock || it->second == 0) return false;
        sum += it->second;
        const auto from = producer.find(in);
        fed = fed || (from != producer.end() && so_far.count(from->second));
    }
    if (!fed) return false;
    c.concat = true;
    c.blocked.resize(s.inputs.size());
    std::iota(c.blocked.begin(), c.blocked.end(), size_t(0));
    *out_channels = sum;
    return true;
}

// Union-find over step indices.
size_t root(std::vector<size_t>& up, size_t i) {
    while (up[i] != i) i = up[i] = up[up[i]];
    return i;
}

// The candidates of `steps` (step index -> Candidate).
std::unordered_map<size_t, Candidate> candidates(const std::vector<NodeStep>& steps) {
    std::unordered_map<int, int64_t> channels;  // slot -> channel count, where known
    std::unordered_map<int, size_t> producer;   // slot -> step, so far
    std::unordered_map<size_t, Candidate> out;
    for (size_t i = 0; i < steps.size(); ++i) {
        const NodeStep& s = steps[i];
        if (!s.kernel || !s.node) continue;
        Candidate c;
        // A pool or a normalization does not start a region (a pool's input would be reordered
        // after it, smaller; a normalization gains nothing by itself).
        const auto from = s.inputs.empty() ? producer.end() : producer.find(s.inputs[0]);
        const bool after_candidate = from != producer.end() && out.count(from->second);
        int64_t joined = 0;
        if (conv_candidate(s, c) || (after_candidate && pool_candidate(s, channels, c)) ||
            (after_candidate && norm_candidate(s, channels, c)) ||
            concat_candidate(s, channels, producer, out, c, &joined))
            out[i] = std::move(c);
        if (joined > 0) channels[s.outputs[0]] = joined;
        for (int o : s.outputs)
            if (o >= 0) producer[o] = i;
        if (is_op(s.node, "Conv") && !s.outputs.empty() && s.outputs[0] >= 0)
            if (const Tensor* w = conv_weights(*s.node)) channels[s.outputs[0]] = w->dims()[0];
        if ((is_pool(s.node) || s.bn_chain) && !s.outputs.empty() && s.outputs[0] >= 0 &&
            !s.inputs.empty()) {
            const auto it = channels.find(s.inputs[0]);
            if (it != channels.end()) channels[s.outputs[0]] = it->second;
        }
    }
    return out;
}

// Who reads each slot: (step, at a position its candidate reads blocked); slots read from
// outside the step list (graph outputs, subgraphs' outer reads) are `external`.
struct Readers {
    std::unordered_map<int, std::vector<std::pair<size_t, bool>>> of;
    std::unordered_set<int> external;
};

Readers readers(const std::vector<NodeStep>& steps,
                const std::unordered_map<size_t, Candidate>& cands,
                const std::unordered_set<int>& external) {
    Readers r;
    r.external = external;
    for (size_t q = 0; q < steps.size(); ++q) {
        const auto c = cands.find(q);
        for (size_t i = 0; i < steps[q].inputs.size(); ++i) {
            const bool blocked = c != cands.end() &&
                                 std::find(c->second.blocked.begin(), c->second.blocked.end(), i) !=
                                     c->second.blocked.end();
            if (steps[q].inputs[i] >= 0) r.of[steps[q].inputs[i]].push_back({q, blocked});
        }
        if (steps[q].concat_base >= 0) r.of[steps[q].concat_base].push_back({q, false});
    }
    return r;
}

// Slot s is read only by steps of `members` at blocked positions.
bool read_only_blocked(const Readers& r, int s, const std::unordered_set<size_t>& members) {
    if (r.external.count(s)) return false;
    const auto it = r.of.find(s);
    if (it == r.of.end()) return true;
    for (const auto& [q, blocked] : it->second)
        if (!blocked || !members.count(q)) return false;
    return true;
}

// Drops Concat candidates whose output would leave the blocked layout (a plain Concat written
// in place by its producers costs less than a blocked copy plus a reorder).
void drop_leaving_concats(const std::vector<NodeStep>& steps,
                          const std::unordered_set<int>& external,
                          std::unordered_map<size_t, Candidate>& cands) {
    for (bool changed = true; changed;) {
        changed = false;
        const Readers r = readers(steps, cands, external);
        std::unordered_set<size_t> all;
        for (const auto& [q, c] : cands) all.insert(q);
        for (auto it = cands.begin(); it != cands.end();)
            if (it->second.concat && !read_only_blocked(r, steps[it->first].outputs[0], all))
                it = cands.erase(it), changed = true;
            else
                ++it;
    }
}

// What a region would cost and gain.
struct RegionStats {
    int convs = 0, reorders = 0;
};

RegionStats stats_of(const std::vector<NodeStep>& steps,
                     const std::unordered_map<size_t, Candidate>& cands,
                     const std::unordered_map<int, size_t>& producer, const Readers& r,
                     const std::unordered_set<size_t>& m) {
    RegionStats st;
    std::unordered_set<int> entering;
    for (size_t q : m) {
        const Candidate& c = cands.at(q);
        st.convs += c.conv ? 1 : 0;
        for (size_t i : c.blocked) {
            const auto it = producer.find(steps[q].inputs[i]);
            if (it == producer.end() || !m.count(it->second)) entering.insert(steps[q].inputs[i]);
        }
        if (!c.plain_out)  // leaving, through a reorder
            st.reorders += read_only_blocked(r, steps[q].outputs[0], m) ? 0 : 1;
    }
    st.reorders += static_cast<int>(entering.size());
    return st;
}

// Two Convs or more and more Convs than reorders. Blocked, 1x1 Convs take 0.6-0.9 of the plain
// time, 3x3 ones 0.87-1.0 (since buffers are cache-line aligned; about 1.0 before; Winograd
// from 13 x 13 maps: 0.53-0.75); a region as long as its reorders loses (DenseNet-121's two-Conv
// regions with two reorders: 1.07-1.15). (5x5 Convs, 1.1-1.3 blocked, are not candidates.)
bool worth_blocking(const RegionStats& st) {
    return st.convs >= 2 && st.convs > st.reorders;
}

// The candidates in regions worth blocking.
std::unordered_set<size_t> regions(const std::vector<NodeStep>& steps,
                                   const std::unordered_map<size_t, Candidate>& cands,
                                   const std::unordered_set<int>& external) {
    std::unordered_map<int, size_t> producer;
    for (size_t i = 0; i < steps.size(); ++i)
        for (int o : steps[i].outputs)
            if (o >= 0) producer[o] = i;
    std::vector<size_t> up(steps.size());
    std::iota(up.begin(), up.end(), size_t(0));
    for (const auto& [q, c] : cands)
        for (size_t i : c.blocked) {
            const auto it = producer.find(steps[q].inputs[i]);
            if (it != producer.end() && cands.count(it->second))
                up[root(up, it->second)] = root(up, q);
        }
    std::unordered_map<size_t, std::unordered_set<size_t>> members;
    for (const auto& [q, c] : cands) members[root(up, q)].insert(q);
    const Readers r = readers(steps, cands, external);
    std::unordered_set<size_t> keep;
    for (const auto& [head, m] : members)
        if (worth_blocking(stats_of(steps, cands, producer, r, m))) keep.insert(m.begin(), m.end());
    return keep;
}

// A reorder step into slot `to` from slot `from`, named after node n.
NodeStep reorder_step(const NodeStep& at, int from, int to, bool to_blocked) {
    NodeStep r;
    r.node = at.node;
    r.named = at.named;
    r.opset = at.opset;
    r.inputs = {from};
    r.outputs = {to};
    r.fused_with = to_blocked ? ", reordering its input to the blocked layout"
                              : ", reordering its output from the blocked layout";
    r.kernel = share_kernel(to_blocked ? ops::make_to_nchwc() : ops::make_from_nchwc());
    r.blocked = true, r.reorder = true;
    return r;
}

// Slots of the values some subgraph of g reads from the outer scope.
std::unordered_set<int> outer_read_slots(const ir::Graph& g, const GraphPlan& p) {
    std::unordered_set<int> out;
    for (const auto& [value, slot] : p.slot)
        for (const ir::Use& u : value->uses())
            if (ir::ancestor_in(g, u.node) != u.node) out.insert(slot);
    return out;
}

// The regions' blocked slots (new slots of p): one per value a region step writes, one per value
// entering a region, with the first region step reading each entering value.
struct BlockedSlots {
    std::unordered_map<int, int> of;           // plain slot -> blocked slot
    std::unordered_map<int, size_t> entry_at;  // entering slot -> first region reader
};

BlockedSlots blocked_slots(const std::vector<NodeStep>& steps,
                           const std::unordered_map<size_t, Candidate>& cands,
                           const std::unordered_set<size_t>& keep, GraphPlan& p) {
    BlockedSlots r;
    std::unordered_set<int> produced;
    for (size_t q : keep)
        if (!cands.at(q).plain_out) produced.insert(steps[q].outputs[0]);
    for (size_t q = 0; q < steps.size(); ++q) {
        if (!keep.count(q)) continue;
        for (size_t i : cands.at(q).blocked) {
            const int s = steps[q].inputs[i];
            if (!produced.count(s) && !r.entry_at.count(s)) r.entry_at[s] = q;
        }
        if (!cands.at(q).plain_out) r.of[steps[q].outputs[0]] = p.num_slots++;
    }
    for (const auto& [s, q] : r.entry_at) r.of[s] = p.num_slots++;
    return r;
}

// Slots read plain: by steps outside the regions, at positions a region step reads plain, as a
// Concat's base, or from outside the step list (`external`). Region outputs among them leave
// through a reorder.
std::unordered_set<int> leaving_slots(const std::vector<NodeStep>& steps,
                                      const std::unordered_map<size_t, Candidate>& cands,
                                      const std::unordered_set<size_t>& keep,
                                      const std::unordered_set<int>& external) {
    std::unordered_set<int> leaving = external;
    for (size_t q = 0; q < steps.size(); ++q) {
        const Candidate* c = keep.count(q) ? &cands.at(q) : nullptr;
        for (size_t i = 0; i < steps[q].inputs.size(); ++i)
            if (!c || std::find(c->blocked.begin(), c->blocked.end(), i) == c->blocked.end())
                leaving.insert(steps[q].inputs[i]);
        leaving.insert(steps[q].concat_base);
    }
    return leaving;
}

// Whether a pool reads slot s: directly, or through the Concats it is an input of. A blocked
// Conv whose output a pool reads keeps it in the caches (ConvChain::keep_cached): streamed
// around them by the Winograd Conv, SqueezeNet's and Inception-v2's max pools read it back from
// memory (kernel_ab wino_stream: those pools 1.65 and 1.92 of their time, the Convs 0.86-0.92).
bool pool_reads(const std::vector<NodeStep>& steps, const Readers& r, int s, int depth = 0) {
    const auto it = r.of.find(s);
    if (it == r.of.end() || depth > 8) return false;
    for (const auto& [q, blocked] : it->second) {
        if (is_pool(steps[q].node)) return true;
        if (is_op(steps[q].node, "Concat") && steps[q].outputs.size() == 1 &&
            steps[q].outputs[0] >= 0 && pool_reads(steps, r, steps[q].outputs[0], depth + 1))
            return true;
    }
    return false;
}

// Region step s rewired to its blocked slots, with its blocked kernel (the plain one inside);
// `cached`: a pool reads its output (pool_reads).
NodeStep blocked_step(const NodeStep& s, const Candidate& c0, const BlockedSlots& slots,
                      bool cached) {
    Candidate c = c0;
    c.chain.keep_cached = cached && c.conv;
    NodeStep b = s;
    for (size_t i : c.blocked) b.inputs[i] = slots.of.at(b.inputs[i]);
    if (!c.plain_out) b.outputs[0] = slots.of.at(s.outputs[0]);
    b.fused_with += ", in the blocked layout";
    b.kernel = share_kernel(
        c.conv     ? ops::make_nchwc_conv(c.chain, c.blocked, *s.kernel)
        : c.concat ? ops::make_nchwc_concat(*s.kernel)
        : c.norm   ? ops::make_nchwc_batch_norm(*s.bn_chain, *s.kernel)
                   : ops::make_nchwc_pool(b.node->op_type, ops::Attrs(*b.node), *s.kernel));
    b.blocked = true;
    return b;
}

// The GlobalAveragePool step that alone reads the output of step q (a Conv writing plain), its
// index; -1 when there is none (another reader, a graph output, the pool's output read by a
// Concat, or the switch off).
int64_t lone_average(const std::vector<NodeStep>& steps, const Readers& r, size_t q) {
    const int s = steps[q].outputs[0];
    if (!g_fold_averages.load(std::memory_order_relaxed) || s < 0 || r.external.count(s))
        return -1;
    const auto it = r.of.find(s);
    if (it == r.of.end() || it->second.size() != 1) return -1;
    const NodeStep& a = steps[it->second[0].first];
    if (!a.kernel || !is_op(a.node, "GlobalAveragePool") || a.inputs.size() != 1 ||
        a.outputs.size() != 1 || a.outputs[0] < 0 || a.concat_slot >= 0)
        return -1;
    // The folded step is still a Conv's to fuse_concat.cc, which must not have it write a
    // Concat in place.
    const auto next = r.of.find(a.outputs[0]);
    if (next != r.of.end())
        for (const auto& [q2, blocked] : next->second)
            if (is_op(steps[q2].node, "Concat")) return -1;
    return static_cast<int64_t>(it->second[0].first);
}

// Blocked Conv step b (made from step conv, candidate c) running `average` too
// (ops::make_nchwc_conv_global_average), into its output.
void fold_average(NodeStep& b, const NodeStep& conv, const Candidate& c, const NodeStep& average) {
    b.outputs[0] = average.outputs[0];
    b.kernel = share_kernel(ops::make_nchwc_conv_global_average(c.chain, c.blocked, *conv.kernel,
                                                                *average.node, *average.kernel));
    b.fused_with += ", fused with '" + average.node->name + "' (GlobalAveragePool)";
}

}  // namespace

bool set_nchwc_fold_global_averages(bool on) {
    return g_fold_averages.exchange(on);
}

bool set_nchwc_layout(bool on) {
    return g_enabled.exchange(on);
}

bool set_nchwc_plain_outputs(bool on) {
    return g_plain_outputs.exchange(on);
}

bool set_nchwc_cached_for_pools(bool on) {
    return g_cached_for_pools.exchange(on);
}

std::vector<NodeStep> fuse_nchwc_regions(const ir::Graph& g, GraphPlan& p,
                                         const std::vector<NodeStep>& steps, int* blocked) {
    *blocked = 0;
    if (!g_enabled.load(std::memory_order_relaxed) || !ops::nchwc_available()) return {};
    std::unordered_map<size_t, Candidate> cands = candidates(steps);
    const std::unordered_set<int> outer = outer_read_slots(g, p);
    std::unordered_set<int> external(outer.begin(), outer.end());
    external.insert(p.output_slots.begin(), p.output_slots.end());
    drop_leaving_concats(steps, external, cands);
    const std::unordered_set<size_t> keep = regions(steps, cands, external);
    if (keep.empty()) return {};
    const BlockedSlots slots = blocked_slots(steps, cands, keep, p);
    const std::unordered_set<int> leaving = leaving_slots(steps, cands, keep, external);
    const Readers read = readers(steps, cands, external);
    const bool cached = g_cached_for_pools.load(std::memory_order_relaxed);
    std::vector<NodeStep> out;
    std::unordered_set<size_t> folded;  // GlobalAveragePool steps run by their Conv's step
    for (size_t q = 0; q < steps.size(); ++q) {
        for (const auto& [s, first] : slots.entry_at)
            if (first == q) out.push_back(reorder_step(steps[q], s, slots.of.at(s), true));
        if (!keep.count(q)) {
            out.push_back(steps[q]);
            if (folded.count(q)) out.back().kernel = nullptr;  // its releases stay
            continue;
        }
        const Candidate& c = cands.at(q);
        out.push_back(blocked_step(steps[q], c, slots,
                                   cached && pool_reads(steps, read, steps[q].outputs[0])));
        const int64_t avg = c.conv && c.plain_out ? lone_average(steps, read, q) : -1;
        if (avg >= 0 && !keep.count(static_cast<size_t>(avg))) {
            fold_average(out.back(), steps[q], c, steps[static_cast<size_t>(avg)]);
            folded.insert(static_cast<size_t>(avg));
        }
        const int out_slot = steps[q].outputs[0];
        if (leaving.count(out_slot) && !cands.at(q).plain_out)
            out.push_back(reorder_step(steps[q], slots.of.at(out_slot), out_slot, false));
        ++*blocked;
    }
    std::unordered_set<int> touched;
    for (const auto& [plain, blk] : slots.of) touched.insert(blk);
    for (const auto& [s, q] :
         slots.entry_at)  // the plain value: free once nothing outside reads it
        if (!outer.count(s) &&
            std::find(p.output_slots.begin(), p.output_slots.end(), s) == p.output_slots.end())
            touched.insert(s);
    release_at_last_reader(out, touched);
    return out;
}

}  // namespace pg::runtime
