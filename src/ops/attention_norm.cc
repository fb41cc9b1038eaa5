// Per-token transforms of the attention family (registered through attention_extra.cc):
// RotaryEmbedding (opset 23), RMSNormalization (23) and CausalConvWithState (27).
// Computed in double; float16/bfloat16 through half_via_float.
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
}  // namespace attn

namespace {

using namespace attn;

// ---- RotaryEmbedding ----------------------------------------------------------------------

struct RopeConfig {
    bool interleaved = false;
    int64_t rotary_dim = 0, num_heads = 0;
};

struct RopeShape {
    int64_t b = 0, s = 0, h = 0, d = 0;
    bool four_d = false;
    // Offset of element (b, s, h, 0) in the input (and output).
    int64_t offset(int64_t bi, int64_t si, int64_t hi) const {
        return four_d ? ((bi * h + hi) * s + si) * d : ((bi * s + si) * h + hi) * d;
    }
};

RopeShape rope_shape(const Tensor& x, int64_t num_heads) {
    const Dims& dm = x.dims();
    if (x.rank() == 4) return {dm[0], dm[2], dm[1], dm[3], true};
    if (x.rank() != 3) fail("RotaryEmbedding: input must be 3-D or 4-D");
    if (num_heads <= 0 || dm[2] % num_heads != 0)
        fail("RotaryEmbedding: 3-D input needs num_heads dividing the hidden size");
    return {dm[0], dm[1], num_heads, dm[2] / num_heads, false};
}

// Rotates one head vector x (length d) in place with cos/sin rows of length `half`.
void rotate(double* x, const double* cs, const double* sn, int64_t half, bool interleaved) {
    for (int64_t j = 0; j < half; ++j) {
        const int64_t i1 = interleaved ? 2 * j : j, i2 = interleaved ? 2 * j + 1 : j + half;
        const double x1 = x[i1], x2 = x[i2];
        x[i1] = cs[j] * x1 - sn[j] * x2;
        x[i2] = sn[j] * x1 + cs[j] * x2;
    }
}

void run_rotary(KernelContext& ctx, const RopeConfig& c) {
    const Tensor& x = ctx.input(0);
    require_float(x, "RotaryEmbedding");
    const RopeShape sh = rope_shape(x, c.num_heads);
    const int64_t rot = c.rotary_dim > 0 ? c.rotary_dim : sh.d, half = rot / 2;
    if (rot % 2 != 0 || rot > sh.d) fail("RotaryEmbedding: bad rotary_embedding_dim");
    if (x.numel() == 0) {  // no head has a value (and half may be 0)
        ctx.set_output(0, x);
        return;
    }
    const Vec cs = to_doubles(ctx.input(1)), sn = to_doubles(ctx.input(2));
    if (ctx.input(1).rank() < 1 || ctx.input(1).dims().back() != half ||
        ctx.input(2).dims() != ctx.input(1).dims())
        fail("RotaryEmbedding: cos/sin caches must have rotary_dim / 2 columns");
    std::vector<int64_t> pos;
    if (ctx.has_input(3)) pos = to_int64_vector(ctx.input(3), "RotaryEmbedding position_ids");
    const auto rows = static_cast<int64_t>(cs.size()) / half;
    if (pos.empty() ? rows != sh.b * sh.s : static_cast<int64_t>(pos.size()) != sh.b * sh.s)
        fail("RotaryEmbedding: caches / position_ids do not match batch and sequence");
    Vec y = to_doubles(x);
    for (int64_t b = 0; b < sh.b; ++b)
        for (int64_t s = 0; s < sh.s; ++s) {
            const int64_t r = pos.empty() ? b * sh.s + s : pos[static_cast<size_t>(b * sh.s + s)];
            if (r < 0 || r >= rows) fail("RotaryEmbedding: position id out of range");
            for (int64_t h = 0; h < sh.h; ++h)
                rotate(y.data() + sh.offset(b, s, h), cs.data() + r * half, sn.data() + r * half,
                       half, c.interleaved);
        }
    ctx.set_output(0, from_doubles(y, x.dtype(), x.dims(), "RotaryEmbedding"));
}

KernelFn make_rotary(const Attrs& a, int64_t) {
    RopeConfig c;
    c.interleaved = a.get_flag("interleaved", false);
    c.rotary_dim = a.get_int("rotary_embedding_dim", 0);
    c.num_heads = a.get_int("num_heads", 0);
    return half_via_float([c](KernelContext& ctx) { run_rotary(ctx, c); });
}

// ---- RMSNormalization ---------------------------------------------------------------------

// Y = X / sqrt(mean(X^2 over axes >= axis) + epsilon) * scale (scale broadcast to X).
KernelFn make_rms_norm(const Attrs& a, int64_t) {
    const int64_t axis_attr = a.get_int("axis", -1);
    const double eps = a.get_float("epsilon", 1e-5f);
    if (a.get_int("stash_type", 1) != 1) unsupported("RMSNormalization: stash_type other than 1");
    return half_via_float([=](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        const Tensor& w = ctx.input(1);
        require_float(x, "RMSNormalization");
        const auto axis =
            static_cast<size_t>(normalize_axis(axis_attr, x.rank(), "RMSNormalization"));
        if (broadcast_shape(x.dims(), w.dims()) != x.dims())
            fail("RMSNormalization: scale does not broadcast to X");
        int64_t inner = 1;
        for (size_t i = axis; i < x.dims().size(); ++i) inner *= x.dims()[i];
        const Vec xv = to_doubles(x), wv = to_doubles(w);
        Vec inv(inner ? xv.size() / static_cast<size_t>(inner) : 0);
        for (size_t r = 0; r < inv.size(); ++r) {
            double s = 0;
            for (int64_t i = 0; i < inner; ++i) s += xv[r * inner + i] * xv[r * inner + i];
            inv[r] = 1.0 / std::sqrt(s / static_cast<double>(inner) + eps);
        }
        Vec y(xv.size());
        for_each_broadcast2(
            x.dims(), broadcast_strides(x.dims(), x.dims()), broadcast_strides(w.dims(), x.dims()),
            [&](int64_t o, int64_t ia, int64_t ib) { y[o] = xv[ia] * inv[o / inner] * wv[ib]; });
        ctx.set_output(0, from_doubles(y, x.dtype(), x.dims(), "RMSNormalization"));
    });
}

// ---- CausalConvWithState ------------------------------------------------------------------

// Depthwise causal conv over [past_state | input]; present_state keeps the last k - 1 columns.
void run_causal_conv(KernelContext& ctx, bool silu) {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    require_float(x, "CausalConvWithState");
    if (x.rank() != 3 || w.rank() != 3) fail("CausalConvWithState: input and weight must be 3-D");
    const int64_t B = x.dims()[0], C = x.dims()[1], L = x.dims()[2], K = w.dims()[2];
    if (w.dims()[0] != C || w.dims()[1] != 1 || K < 1)
        fail("CausalConvWithState: weight must be (C, 1, k)");
    const Vec xv = to_doubles(x), wv = to_doubles(w);
    const Vec bias = ctx.has_input(2) ? to_doubles(ctx.input(2)) : Vec(static_cast<size_t>(C), 0.0);
    if (static_cast<int64_t>(bias.size()) != C)
        fail("CausalConvWithState: bias must have C values");
    Vec past(static_cast<size_t>(B * C * (K - 1)), 0.0);
    if (ctx.has_input(3)) {
        if (ctx.input(3).dims() != Dims{B, C, K - 1})
            fail("CausalConvWithState: past_state must be (B, C, k - 1)");
        past = to_doubles(ctx.input(3));
    }
    const int64_t P = L + K - 1;
    Vec y(xv.size()), present(past.size());
    Vec padded(static_cast<size_t>(P));
    for (int64_t bc = 0; bc < B * C; ++bc) {
        for (int64_t p = 0; p < P; ++p)
            padded[p] = p < K - 1 ? past[bc * (K - 1) + p] : xv[bc * L + p - (K - 1)];
        const double* wr = wv.data() + (bc % C) * K;
        for (int64_t l = 0; l < L; ++l) {
            double acc = bias[bc % C];
            for (int64_t k = 0; k < K; ++k) acc += wr[k] * padded[l + k];
            y[bc * L + l] = silu ? acc / (1.0 + std::exp(-acc)) : acc;
        }
        for (int64_t p = 0; p < K - 1; ++p) present[bc * (K - 1) + p] = padded[L + p];
    }
    ctx.set_output(0, from_doubles(y, x.dtype(), x.dims(), "CausalConvWithState"));
    ctx.set_output(1, from_doubles(present, x.dtype(), {B, C, K - 1}, "CausalConvWithState"));
}

KernelFn make_causal_conv(const Attrs& a, int64_t) {
    const std::string act = a.get_string("activation", "none");
    if (act != "none" && act != "silu" && act != "swish")
        fail("CausalConvWithState: unknown activation '" + act + "'");
    const bool silu = act != "none";
    return half_via_float([silu](KernelContext& ctx) { run_causal_conv(ctx, silu); });
}

}  // namespace

void register_attention_norm_ops(OpTable& t) {
    using C = NumericContract;
    t.add("RotaryEmbedding", 23, C::kApproximate, make_rotary);
    t.add("RMSNormalization", 23, C::kApproximate, make_rms_norm);
    t.add("CausalConvWithState", 27, C::kApproximate, make_causal_conv);
}

}  // namespace pg::ops
