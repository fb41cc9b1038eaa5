// Control flow: If, Loop and Scan run their body graphs through the runtime's SubgraphRunner.
#include "ir/graph.h"
#include "ops/op_table.h"
#include "ops/tensor_util.h"

namespace pg::ops {

namespace {

const ir::Graph& require_graph(const Attrs& a, const char* name) {
    const ir::Graph* g = a.get_graph(name);
    if (!g) fail(std::string("missing graph attribute '") + name + "'");
    return *g;
}

KernelFn make_if(const Attrs& a, int64_t) {
    const ir::Graph* then_g = &require_graph(a, "then_branch");
    const ir::Graph* else_g = &require_graph(a, "else_branch");
    return [then_g, else_g](KernelContext& ctx) {
        const bool cond = scalar_value(ctx.input(0), "If condition") != 0;
        auto outs = ctx.subgraphs().run(cond ? *then_g : *else_g, {});
        for (size_t i = 0; i < outs.size(); ++i) ctx.set_output(i, std::move(outs[i]));
    };
}

// Stacks per-iteration scan outputs along axis 0. With no iteration the result has shape
// [0, dims...] and the dtype the body declares for that output.
RtValue stack_scan(std::vector<Tensor>& items, const ir::Value* decl) {
    if (!items.empty()) return RtValue::of(stack_tensors(items, 0));
    DataType dt = DataType::kFloat32;
    std::vector<int64_t> dims{0};
    if (decl && decl->type().is_tensor()) {
        if (decl->type().elem_type != DataType::kUndefined) dt = decl->type().elem_type;
        if (decl->type().shape)
            for (const auto& d : *decl->type().shape) dims.push_back(d.value.value_or(0));
    }
    return RtValue::of(Tensor::zeros(dt, dims));
}

struct LoopState {
    int64_t max_trip = INT64_MAX;
    bool cond = true;
    std::vector<RtValue> carried;
    std::vector<std::vector<Tensor>> scans;
};

LoopState loop_start(KernelContext& ctx, size_t num_scans) {
    LoopState s;
    if (ctx.has_input(0)) s.max_trip = scalar_int64(ctx.input(0), "Loop M");
    if (ctx.has_input(1)) s.cond = scalar_value(ctx.input(1), "Loop cond") != 0;
    for (size_t i = 2; i < ctx.num_inputs(); ++i)
        s.carried.push_back(ctx.value(i) ? *ctx.value(i) : RtValue());
    s.scans.resize(num_scans);
    return s;
}

KernelFn make_loop(const Attrs& a, int64_t) {
    const ir::Graph* body = &require_graph(a, "body");
    return [body](KernelContext& ctx) {
        const size_t num_carried = ctx.num_inputs() >= 2 ? ctx.num_inputs() - 2 : 0;
        if (body->outputs().size() < 1 + num_carried) fail("Loop body has too few outputs");
        LoopState s = loop_start(ctx, body->outputs().size() - 1 - num_carried);
        for (int64_t it = 0; it < s.max_trip && s.cond; ++it) {
            std::vector<RtValue> in{RtValue::of(make_scalar_int64(it)),
                                    RtValue::of(make_scalar_bool(s.cond))};
            in.insert(in.end(), s.carried.begin(), s.carried.end());
            auto out = ctx.subgraphs().run(*body, std::move(in));
            s.cond = out[0].is_tensor() ? scalar_value(out[0].tensor(), "Loop body condition") != 0
                                        : s.cond;
            for (size_t k = 0; k < num_carried; ++k) s.carried[k] = std::move(out[1 + k]);
            for (size_t k = 0; k < s.scans.size(); ++k) {
                if (!out[1 + num_carried + k].is_tensor())
                    fail("Loop scan outputs must be tensors");
                s.scans[k].push_back(out[1 + num_carried + k].tensor());
            }
        }
        for (size_t k = 0; k < num_carried; ++k) ctx.set_output(k, std::move(s.carried[k]));
        for (size_t k = 0; k < s.scans.size(); ++k)
            ctx.set_output(num_carried + k,
                           stack_scan(s.scans[k], body->outputs()[1 + num_carried + k]));
    };
}

struct ScanConfig {
    const ir::Graph* body;
    int64_t num_scan_inputs;
    std::vector<int64_t> in_axes, in_dirs, out_axes, out_dirs;
};

int64_t scan_length(KernelContext& ctx, const ScanConfig& c, size_t num_state) {
    int64_t len = -1;
    for (int64_t k = 0; k < c.num_scan_inputs; ++k) {
        const Tensor& t = ctx.input(num_state + static_cast<size_t>(k));
        const int64_t axis = normalize_axis(
            c.in_axes.empty() ? 0 : c.in_axes[static_cast<size_t>(k)], t.rank(), "Scan");
        if (len >= 0 && t.dims()[static_cast<size_t>(axis)] != len)
            fail("Scan inputs have different sequence lengths");
        len = t.dims()[static_cast<size_t>(axis)];
    }
    return len;
}

// Refuses a per-scan attribute list of another length than `want` (empty: the default).
void check_scan_list(const std::vector<int64_t>& v, size_t want, const char* name) {
    if (!v.empty() && v.size() != want)
        fail(std::string("Scan: ") + name + " has " + std::to_string(v.size()) + " values for " +
             std::to_string(want) + " scans");
}

// The scan outputs of a Scan body with `outputs` outputs after `num_state` states (kInvalidInput
// when it has fewer outputs than states).
size_t scan_outputs(const ir::Graph& body, size_t num_state) {
    if (body.outputs().size() < num_state)
        fail("Scan: the body has " + std::to_string(body.outputs().size()) + " outputs for " +
             std::to_string(num_state) + " states");
    return body.outputs().size() - num_state;
}

// Scan-9's state count; refuses a num_scan_inputs outside [1, inputs] and per-scan lists of
// another length than their scans, before any is indexed.
size_t scan_states(const KernelContext& ctx, const ScanConfig& c) {
    if (c.num_scan_inputs < 1 || static_cast<uint64_t>(c.num_scan_inputs) > ctx.num_inputs())
        fail("Scan: num_scan_inputs " + std::to_string(c.num_scan_inputs) + " does not fit its " +
             std::to_string(ctx.num_inputs()) + " inputs");
    const size_t scans = static_cast<size_t>(c.num_scan_inputs);
    const size_t num_state = ctx.num_inputs() - scans, outs = scan_outputs(*c.body, num_state);
    check_scan_list(c.in_axes, scans, "scan_input_axes");
    check_scan_list(c.in_dirs, scans, "scan_input_directions");
    check_scan_list(c.out_axes, outs, "scan_output_axes");
    check_scan_list(c.out_dirs, outs, "scan_output_directions");
    return num_state;
}

void scan_emit(KernelContext& ctx, const ScanConfig& c, size_t num_state,
               std::vector<std::vector<Tensor>>& scans) {
    for (size_t k = 0; k < scans.size(); ++k) {
        if (!c.out_dirs.empty() && c.out_dirs[k]) std::reverse(scans[k].begin(), scans[k].end());
        if (scans[k].empty()) fail("Scan with zero iterations cannot produce scan outputs");
        const int64_t rank = scans[k][0].rank() + 1;
        const int64_t axis = normalize_axis(c.out_axes.empty() ? 0 : c.out_axes[k], rank, "Scan");
        ctx.set_output(num_state + k, stack_tensors(scans[k], axis));
    }
}

KernelFn make_scan(const Attrs& a, int64_t) {
    ScanConfig c{&require_graph(a, "body"),      a.require_int("num_scan_inputs"),
                 a.get_ints("scan_input_axes"),  a.get_ints("scan_input_directions"),
                 a.get_ints("scan_output_axes"), a.get_ints("scan_output_directions")};
    return [c](KernelContext& ctx) {
        const size_t num_state = scan_states(ctx, c);
        const int64_t len = scan_length(ctx, c, num_state);
        std::vector<RtValue> state;
        for (size_t i = 0; i < num_state; ++i) state.push_back(*ctx.value(i));
        std::vector<std::vector<Tensor>> scans(c.body->outputs().size() - num_state);
        for (int64_t it = 0; it < len; ++it) {
            std::vector<RtValue> in = state;
            for (int64_t k = 0; k < c.num_scan_inputs; ++k) {
                const Tensor& t = ctx.input(num_state + static_cast<size_t>(k));
                const int64_t axis = normalize_axis(
                    c.in_axes.empty() ? 0 : c.in_axes[static_cast<size_t>(k)], t.rank(), "Scan");
                const bool rev = !c.in_dirs.empty() && c.in_dirs[static_cast<size_t>(k)];
                in.push_back(RtValue::of(select_along(t, axis, rev ? len - 1 - it : it)));
            }
            auto out = ctx.subgraphs().run(*c.body, std::move(in));
            for (size_t i = 0; i < num_state; ++i) state[i] = std::move(out[i]);
            for (size_t k = 0; k < scans.size(); ++k)
                scans[k].push_back(out[num_state + k].tensor());
        }
        for (size_t i = 0; i < num_state; ++i) ctx.set_output(i, std::move(state[i]));
        scan_emit(ctx, c, num_state, scans);
    };
}

// Scan-8's state count; refuses inputs that are not (sequence_lens, states..., scans...) with
// every state of (batch, ...) and every scan input of (batch, length, ...), of one batch and
// length, a body of fewer outputs than states and `directions` of another length than the scans,
// before any is indexed.
size_t scan8_states(const KernelContext& ctx, const ir::Graph& body, int64_t num_scans,
                    const std::vector<int64_t>& dirs) {
    if (num_scans < 1 || static_cast<size_t>(num_scans) + 1 > ctx.num_inputs())
        fail("Scan: num_scan_inputs " + std::to_string(num_scans) + " does not fit its " +
             std::to_string(ctx.num_inputs()) + " inputs");
    const size_t num_state = ctx.num_inputs() - 1 - static_cast<size_t>(num_scans);
    scan_outputs(body, num_state);
    check_scan_list(dirs, static_cast<size_t>(num_scans), "directions");
    int64_t batch = -1, len = -1;
    for (size_t i = 1; i < ctx.num_inputs(); ++i) {
        const Tensor& t = ctx.input(i);
        const bool scan = i > num_state;
        if (t.rank() < (scan ? 2 : 1))
            fail("Scan: input " + std::to_string(i) + " needs " +
                 (scan ? "(batch, sequence" : "(batch") + ", ...) dims, got " +
                 dims_text(t.dims()));
        if (batch >= 0 && t.dims()[0] != batch) fail("Scan: inputs have different batch sizes");
        if (scan && len >= 0 && t.dims()[1] != len)
            fail("Scan inputs have different sequence lengths");
        batch = t.dims()[0];
        if (scan) len = t.dims()[1];
    }
    return num_state;
}

// Scan-8: inputs (sequence_lens, states..., scans...) with a leading batch axis; the body runs
// per batch entry over axis 1 (or its reverse per scan_input_directions / `directions`).
KernelFn make_scan8(const Attrs& a, int64_t) {
    const ir::Graph* body = &require_graph(a, "body");
    const int64_t num_scans = a.require_int("num_scan_inputs");
    const std::vector<int64_t> dirs = a.get_ints("directions");
    return [=](KernelContext& ctx) {
        const size_t num_state = scan8_states(ctx, *body, num_scans, dirs);
        const int64_t batch = ctx.input(1).dims()[0];
        std::vector<std::vector<Tensor>> states(num_state),
            scans(body->outputs().size() - num_state);
        for (int64_t b = 0; b < batch; ++b) {
            std::vector<RtValue> st;
            for (size_t i = 0; i < num_state; ++i)
                st.push_back(RtValue::of(select_along(ctx.input(1 + i), 0, b)));
            const int64_t len = ctx.input(1 + num_state).dims()[1];
            const int64_t n =
                ctx.has_input(0)
                    ? element_int64(ctx.input(0), static_cast<uint64_t>(b), "Scan sequence_lens")
                    : len;
            if (n < 0 || n > len)
                fail("Scan sequence_lens: " + std::to_string(n) + " is outside [0, " +
                     std::to_string(len) + "]");
            std::vector<std::vector<Tensor>> per_batch(scans.size());
            for (int64_t it = 0; it < n; ++it) {
                std::vector<RtValue> in = st;
                for (int64_t k = 0; k < num_scans; ++k) {
                    const Tensor xb =
                        select_along(ctx.input(1 + num_state + static_cast<size_t>(k)), 0, b);
                    const bool rev = !dirs.empty() && dirs[static_cast<size_t>(k)];
                    in.push_back(RtValue::of(select_along(xb, 0, rev ? n - 1 - it : it)));
                }
                auto out = ctx.subgraphs().run(*body, std::move(in));
                for (size_t i = 0; i < num_state; ++i) st[i] = std::move(out[i]);
                for (size_t k = 0; k < scans.size(); ++k)
                    per_batch[k].push_back(out[num_state + k].tensor());
            }
            for (size_t i = 0; i < num_state; ++i) states[i].push_back(st[i].tensor());
            for (size_t k = 0; k < scans.size(); ++k)
                scans[k].push_back(stack_tensors(per_batch[k], 0));
        }
        for (size_t i = 0; i < num_state; ++i) ctx.set_output(i, stack_tensors(states[i], 0));
        for (size_t k = 0; k < scans.size(); ++k)
            ctx.set_output(num_state + k, stack_tensors(scans[k], 0));
    };
}

}  // namespace

void register_control_flow_ops(OpTable& t) {
    t.add("Scan", 8, NumericContract::kExact, make_scan8);
    using C = NumericContract;
    t.add("If", 1, C::kExact, make_if);
    t.add("Loop", 1, C::kExact, make_loop);
    t.add("Scan", 9, C::kExact, make_scan);
}

}  // namespace pg::ops
