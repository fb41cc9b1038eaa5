// The rest of the attention family (registered by register_attention_ops in attention.cc):
// LinearAttention (recurrent linear / gated / delta / gated-delta state updates),
// ai.onnx.preview::FlexAttention (scores and probabilities rewritten by subgraphs),
// RotaryEmbedding, RMSNormalization and CausalConvWithState.
#include <cmath>

#include "ir/graph.h"
#include "ops/broadcast.h"
#include "ops/dispatch.h"
#include "ops/half.h"
#include "ops/op_table.h"
#include "ops/tensor_util.h"

namespace pg::ops {

namespace attn {  // defined in attention.cc
using Vec = std::vector<double>;
Vec to_doubles(const Tensor& t);
Tensor from_doubles(const Vec& v, DataType dt, Dims dims, const char* op);
void require_float(const Tensor& t, const char* op);
double round_to(double x, int64_t prec);
void softmax_row(double* x, int64_t n);
}  // namespace attn

namespace {

using namespace attn;

// `v` stored as `dt`; float16 / bfloat16 rounded from float32.
Tensor store(const Vec& v, DataType dt, Dims dims) {
    if (!is_half(dt)) return from_doubles(v, dt, std::move(dims), "attention");
    return narrow_half(from_doubles(v, DataType::kFloat32, std::move(dims), "attention"), dt);
}

// ---- LinearAttention ----------------------------------------------------------------------

struct LinConfig {
    int64_t q_heads = 0, kv_heads = 0;
    double scale = 0;
    bool gated = false, delta = false;
};

// Inputs as [B, T, H * D] buffers (decay, beta and erase_gate empty when absent).
struct LinInputs {
    int64_t b = 0, t = 0, dk = 0, dv = 0;
    Vec q, k, v, decay, beta, erase;
    int64_t decay_last = 0, beta_last = 0;
};

// The columns of a per-step input, which must be [B, T, columns] (read at (b * T + t) * columns).
int64_t step_columns(const Tensor& t, const LinInputs& in, const char* name) {
    if (t.rank() != 3 || t.dims()[0] != in.b || t.dims()[1] != in.t)
        fail(std::string("LinearAttention: ") + name + " must be [" + std::to_string(in.b) + ", " +
             std::to_string(in.t) + ", columns], got " + dims_text(t.dims()));
    return t.dims()[2];
}

LinInputs read_linear_inputs(KernelContext& ctx, const LinConfig& c) {
    LinInputs in;
    for (size_t i = 0; i < 3; ++i)
        if (ctx.input(i).rank() != 3) fail("LinearAttention: query, key and value must be 3-D");
    const Dims &qd = ctx.input(0).dims(), &kd = ctx.input(1).dims(), &vd = ctx.input(2).dims();
    in.b = qd[0];
    in.t = qd[1];
    in.dk = qd[2] / c.q_heads;
    in.dv = vd[2] / c.kv_heads;
    if (qd[2] % c.q_heads || vd[2] % c.kv_heads || kd[2] != c.kv_heads * in.dk || kd[0] != in.b ||
        vd[0] != in.b || kd[1] != in.t || vd[1] != in.t)
        fail("LinearAttention: query, key and value shapes do not match the head counts");
    in.q = to_doubles(ctx.input(0));
    in.k = to_doubles(ctx.input(1));
    in.v = to_doubles(ctx.input(2));
    if (c.gated != ctx.has_input(4))
        fail("LinearAttention: decay is required exactly by gated rules");
    if (c.delta != ctx.has_input(5))
        fail("LinearAttention: beta is required exactly by delta rules");
    if (ctx.has_input(6) && !c.delta) fail("LinearAttention: erase_gate needs a delta rule");
    if (c.gated) {
        in.decay_last = step_columns(ctx.input(4), in, "decay");
        if (in.decay_last != c.kv_heads && in.decay_last != c.kv_heads * in.dk)
            fail("LinearAttention: decay must have kv_num_heads or kv_num_heads * d_k columns");
        in.decay = to_doubles(ctx.input(4));
    }
    if (c.delta) {
        in.beta_last = step_columns(ctx.input(5), in, "beta");
        if (in.beta_last != c.kv_heads && in.beta_last != 1)
            fail("LinearAttention: beta must have kv_num_heads or 1 columns");
        in.beta = to_doubles(ctx.input(5));
    }
    if (ctx.has_input(6)) {
        if (step_columns(ctx.input(6), in, "erase_gate") != c.kv_heads * in.dk)
            fail("LinearAttention: erase_gate must have kv_num_heads * d_k columns");
        in.erase = to_doubles(ctx.input(6));
    }
    return in;
}

// One time step of one (batch, kv head): decay, delta correction, then state += k v^T.
void linear_update(const LinConfig& c, const LinInputs& in, int64_t b, int64_t t, int64_t h,
                   double* S) {
    const int64_t dk = in.dk, dv = in.dv, bt = b * in.t + t;
    const double* k = in.k.data() + (bt * c.kv_heads + h) * dk;
    Vec v(in.v.begin() + (bt * c.kv_heads + h) * dv, in.v.begin() + (bt * c.kv_heads + h + 1) * dv);
    if (c.gated)
        for (int64_t d = 0; d < dk; ++d) {
            const int64_t g =
                in.decay_last == c.kv_heads ? bt * c.kv_heads + h : (bt * c.kv_heads + h) * dk + d;
            const double f = std::exp(in.decay[static_cast<size_t>(g)]);
            for (int64_t m = 0; m < dv; ++m) S[d * dv + m] *= f;
        }
    if (c.delta) {
        const double beta =
            in.beta[static_cast<size_t>(bt * in.beta_last + (in.beta_last == 1 ? 0 : h))];
        for (int64_t m = 0; m < dv; ++m) {
            double r = 0;
            for (int64_t d = 0; d < dk; ++d) {
                const double e =
                    in.erase.empty()
                        ? 1.0
                        : in.erase[static_cast<size_t>((bt * c.kv_heads + h) * dk + d)];
                r += S[d * dv + m] * e * k[d];
            }
            v[static_cast<size_t>(m)] = beta * (v[static_cast<size_t>(m)] - r);
        }
    }
    for (int64_t d = 0; d < dk; ++d)
        for (int64_t m = 0; m < dv; ++m) S[d * dv + m] += k[d] * v[static_cast<size_t>(m)];
}

void run_linear_attention(KernelContext& ctx, const LinConfig& c) {
    const DataType qt = ctx.input(0).dtype();
    if (!is_half(qt)) require_float(ctx.input(0), "LinearAttention");
    const LinInputs in = read_linear_inputs(ctx, c);
    const int64_t B = in.b, T = in.t, dk = in.dk, dv = in.dv, Hq = c.q_heads, Hk = c.kv_heads;
    const Dims state_dims{B, Hk, dk, dv};
    Vec S(static_cast<size_t>(B * Hk * dk * dv), 0.0);
    DataType state_type = ctx.input(0).dtype();
    if (ctx.has_input(3)) {
        if (ctx.input(3).dims() != state_dims)
            fail("LinearAttention: past_state has the wrong shape");
        S = to_doubles(ctx.input(3));
        state_type = ctx.input(3).dtype();
    }
    const double scale = c.scale != 0 ? c.scale : 1.0 / std::sqrt(static_cast<double>(dk));
    Vec out(static_cast<size_t>(B * T * Hq * dv), 0.0);
    for (int64_t b = 0; b < B; ++b)
        for (int64_t t = 0; t < T; ++t) {
            for (int64_t h = 0; h < Hk; ++h)
                linear_update(c, in, b, t, h, S.data() + (b * Hk + h) * dk * dv);
            for (int64_t h = 0; h < Hq; ++h) {
                const double* q = in.q.data() + ((b * T + t) * Hq + h) * dk;
                const double* s = S.data() + (b * Hk + h / (Hq / Hk)) * dk * dv;
                double* o = out.data() + ((b * T + t) * Hq + h) * dv;
                for (int64_t d = 0; d < dk; ++d)
                    for (int64_t m = 0; m < dv; ++m) o[m] += scale * q[d] * s[d * dv + m];
            }
        }
    ctx.set_output(0, store(out, qt, {B, T, Hq * dv}));
    ctx.set_output(1, store(S, state_type, state_dims));
}

KernelFn make_linear_attention(const Attrs& a, int64_t) {
    LinConfig c;
    c.q_heads = a.require_int("q_num_heads");
    c.kv_heads = a.require_int("kv_num_heads");
    c.scale = a.get_float("scale", 0);
    const std::string rule = a.get_string("update_rule", "gated_delta");
    if (rule != "linear" && rule != "gated" && rule != "delta" && rule != "gated_delta")
        fail("LinearAttention: unknown update_rule '" + rule + "'");
    if (c.q_heads <= 0 || c.kv_heads <= 0 || c.q_heads % c.kv_heads != 0)
        fail("LinearAttention: q_num_heads must be a positive multiple of kv_num_heads");
    c.gated = rule == "gated" || rule == "gated_delta";
    c.delta = rule == "delta" || rule == "gated_delta";
    // Not half_via_float: present_state keeps past_state's type, which may differ from query's.
    return [c](KernelContext& ctx) { run_linear_attention(ctx, c); };
}

// ---- FlexAttention (ai.onnx.preview) ----------------------------------------------------

struct FlexConfig {
    std::optional<double> scale;
    const ir::Graph* score_mod = nullptr;
    const ir::Graph* prob_mod = nullptr;
    int64_t softmax_precision = 0;
};

// The type scores and probabilities are computed in: softmax_precision, else float32 for
// 16-bit inputs, else the input type.
DataType flex_compute_type(DataType in, int64_t prec) {
    if (prec != 0) {
        const auto p = static_cast<DataType>(prec);
        if (p != DataType::kFloat32 && p != DataType::kFloat16 && p != DataType::kFloat64)
            fail("FlexAttention: unsupported softmax_precision");
        return p;
    }
    return is_half(in) ? DataType::kFloat32 : in;
}

// Runs a one-input, one-output mod graph on `x` (held in type `dt`) and reads the result back.
Vec apply_mod(KernelContext& ctx, const ir::Graph& g, const Vec& x, DataType dt, const Dims& dims) {
    auto outs = ctx.subgraphs().run(g, {RtValue::of(store(x, dt, dims))});
    if (outs.size() != 1 || !outs[0].is_tensor())
        fail("FlexAttention: a mod graph must return one tensor");
    if (outs[0].tensor().numel() != x.size()) fail("FlexAttention: a mod graph changed the shape");
    return to_doubles(outs[0].tensor());
}

Vec flex_scores(const Tensor& qt, const Tensor& kt, double scale, DataType ct) {
    const Dims &qd = qt.dims(), &kd = kt.dims();
    const int64_t B = qd[0], Hq = qd[1], L = qd[2], E = qd[3], Hk = kd[1], S = kd[2];
    const Vec q = to_doubles(qt), k = to_doubles(kt);
    Vec s(static_cast<size_t>(B * Hq * L * S));
    for (int64_t b = 0; b < B; ++b)
        for (int64_t h = 0; h < Hq; ++h)
            for (int64_t i = 0; i < L; ++i)
                for (int64_t j = 0; j < S; ++j) {
                    const double* qr = q.data() + ((b * Hq + h) * L + i) * E;
                    const double* kr = k.data() + ((b * Hk + h / (Hq / Hk)) * S + j) * E;
                    double acc = 0;
                    for (int64_t e = 0; e < E; ++e) acc += qr[e] * kr[e];
                    s[static_cast<size_t>(((b * Hq + h) * L + i) * S + j)] =
                        round_to(acc * scale, static_cast<int64_t>(ct));
                }
    return s;
}

void check_flex_shapes(const Tensor& q, const Tensor& k, const Tensor& v) {
    if (q.rank() != 4 || k.rank() != 4 || v.rank() != 4) fail("FlexAttention: Q, K, V must be 4-D");
    const Dims &qd = q.dims(), &kd = k.dims(), &vd = v.dims();
    if (kd[0] != qd[0] || vd[0] != qd[0] || kd[1] != vd[1] || kd[2] != vd[2] || kd[3] != qd[3])
        fail("FlexAttention: Q, K and V shapes are not compatible");
    if (kd[1] <= 0 || qd[1] % kd[1] != 0)
        fail("FlexAttention: query heads must be a multiple of kv heads");
}

void run_flex_attention(KernelContext& ctx, const FlexConfig& c) {
    const Tensor &qt = ctx.input(0), &kt = ctx.input(1), &vt = ctx.input(2);
    check_flex_shapes(qt, kt, vt);
    const DataType ct = flex_compute_type(qt.dtype(), c.softmax_precision);
    const Dims &qd = qt.dims(), &vd = vt.dims();
    const int64_t B = qd[0], Hq = qd[1], L = qd[2], S = vd[2], Dv = vd[3], Hk = vd[1];
    const Dims sdims{B, Hq, L, S};
    Vec p =
        flex_scores(qt, kt, c.scale ? *c.scale : 1.0 / std::sqrt(static_cast<double>(qd[3])), ct);
    if (c.score_mod) p = apply_mod(ctx, *c.score_mod, p, ct, sdims);
    for (size_t r = 0; S > 0 && r < p.size(); r += static_cast<size_t>(S))
        softmax_row(p.data() + r, S);
    if (c.prob_mod) p = apply_mod(ctx, *c.prob_mod, p, ct, sdims);
    const Vec v = to_doubles(vt);
    Vec y(static_cast<size_t>(B * Hq * L * Dv), 0.0);
    for (int64_t b = 0; b < B; ++b)
        for (int64_t h = 0; h < Hq; ++h)
            for (int64_t i = 0; i < L; ++i)
                for (int64_t j = 0; j < S; ++j) {
                    const double pj = p[static_cast<size_t>(((b * Hq + h) * L + i) * S + j)];
                    const double* vr = v.data() + ((b * Hk + h / (Hq / Hk)) * S + j) * Dv;
                    double* yr = y.data() + ((b * Hq + h) * L + i) * Dv;
                    for (int64_t d = 0; d < Dv; ++d) yr[d] += pj * vr[d];
                }
    ctx.set_output(0, store(y, vt.dtype(), {B, Hq, L, Dv}));
}

KernelFn make_flex_attention(const Attrs& a, int64_t) {
    FlexConfig c;
    if (a.has("scale")) c.scale = a.get_float("scale", 0);
    c.score_mod = a.get_graph("score_mod");
    c.prob_mod = a.get_graph("prob_mod");
    c.softmax_precision = a.get_int("softmax_precision", 0);
    return [c](KernelContext& ctx) {
        const DataType dt = ctx.input(0).dtype();
        if (!is_half(dt) && dt != DataType::kFloat32 && dt != DataType::kFloat64)
            unsupported_type("FlexAttention", dt);
        run_flex_attention(ctx, c);
    };
}

}  // namespace

void register_attention_extra_ops(OpTable& t);
void register_attention_norm_ops(OpTable& t);  // attention_norm.cc

void register_attention_extra_ops(OpTable& t) {
    using C = NumericContract;
    t.add("LinearAttention", 27, C::kApproximate, make_linear_attention);
    t.add(OpDef{"ai.onnx.preview", "FlexAttention", 1, C::kApproximate, make_flex_attention});
    register_attention_norm_ops(t);
}

}  // namespace pg::ops
