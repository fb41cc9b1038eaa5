// Transformer building blocks: Attention (opset 23, 24 adds nonpad_kv_seqlen), LinearAttention,
// ai.onnx.preview::FlexAttention (score_mod / prob_mod subgraphs), RotaryEmbedding,
// RMSNormalization and CausalConvWithState. Kernels compute in double over plain row-major
// buffers and store the input's type; float16/bfloat16 go through half_via_float (FlexAttention
// widens by hand, since its subgraphs need the runtime's runner).
#include <cmath>
#include <limits>
#include <optional>

#include "base/float16.h"
#include "ir/graph.h"
#include "ops/broadcast.h"
#include "ops/dispatch.h"
#include "ops/half.h"
#include "ops/op_table.h"
#include "ops/tensor_util.h"

namespace pg::ops {

// Helpers shared with attention_extra.cc (declared there).
namespace attn {

using Vec = std::vector<double>;
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

Vec to_doubles(const Tensor& t) {
    Vec v(t.numel());
    for (uint64_t i = 0; i < t.numel(); ++i) v[i] = t.element_as_double(i);
    return v;
}

// A float32 / float64 tensor holding `v` rounded to `dt`.
Tensor from_doubles(const Vec& v, DataType dt, Dims dims, const char* op) {
    Tensor out = Tensor::zeros(dt, std::move(dims));
    dispatch_float(dt, op, [&]<typename T>() {
        T* dst = reinterpret_cast<T*>(out.mutable_bytes());
        for (size_t i = 0; i < v.size(); ++i) dst[i] = static_cast<T>(v[i]);
    });
    return out;
}

void require_float(const Tensor& t, const char* op) {
    if (t.dtype() != DataType::kFloat32 && t.dtype() != DataType::kFloat64)
        unsupported_type(op, t.dtype());
}

// `x` rounded to the ONNX float type `prec` (0 = keep double).
double round_to(double x, int64_t prec) {
    switch (static_cast<DataType>(prec)) {
        case DataType::kFloat32:
            return static_cast<float>(x);
        case DataType::kFloat16:
            return half_bits_to_float(float_to_half_bits(static_cast<float>(x)));
        case DataType::kBFloat16:
            return bfloat16_bits_to_float(float_to_bfloat16_bits(static_cast<float>(x)));
        default:
            return x;
    }
}

// In-place softmax of one row: exp(x - max) / sum, so an all -inf row gives NaN like ONNX's
// reference implementation.
void softmax_row(double* x, int64_t n) {
    double m = kNegInf;
    for (int64_t j = 0; j < n && !std::isnan(m); ++j)
        m = std::isnan(x[j]) ? x[j] : std::max(m, x[j]);
    double s = 0;
    for (int64_t j = 0; j < n; ++j) s += (x[j] = std::exp(x[j] - m));
    for (int64_t j = 0; j < n; ++j) x[j] /= s;
}

}  // namespace attn

namespace {

using namespace attn;

// ---- Attention --------------------------------------------------------------------------

// A [batch, heads, seq, head_size] buffer.
struct Heads {
    int64_t b = 0, h = 0, s = 0, d = 0;
    Vec v;
    const double* row(int64_t bi, int64_t hi, int64_t si) const {
        return v.data() + ((bi * h + hi) * s + si) * d;
    }
};

// 4-D input as it is; 3-D [batch, seq, heads * head_size] split into `heads` heads.
Heads to_heads(const Tensor& t, int64_t heads, const char* what) {
    const auto& dm = t.dims();
    if (t.rank() == 4) return {dm[0], dm[1], dm[2], dm[3], to_doubles(t)};
    if (t.rank() != 3) fail(std::string("Attention: ") + what + " must be 3-D or 4-D");
    if (heads <= 0 || dm[2] % heads != 0)
        fail(std::string("Attention: ") + what + " hidden size is not divisible by its heads");
    Heads r{dm[0], heads, dm[1], dm[2] / heads, Vec(t.numel())};
    const Vec src = to_doubles(t);
    for (int64_t b = 0; b < r.b; ++b)
        for (int64_t s = 0; s < r.s; ++s)
            for (int64_t h = 0; h < r.h; ++h)
                for (int64_t d = 0; d < r.d; ++d)
                    r.v[static_cast<size_t>(((b * r.h + h) * r.s + s) * r.d + d)] =
                        src[static_cast<size_t>(((b * r.s + s) * r.h + h) * r.d + d)];
    return r;
}

// past followed by cur along the sequence axis.
Heads concat_seq(const Heads& past, const Heads& cur) {
    if (past.b != cur.b || past.h != cur.h || past.d != cur.d)
        fail("Attention: past key/value shape does not match the current key/value");
    Heads r{cur.b, cur.h, past.s + cur.s, cur.d, {}};
    for (int64_t b = 0; b < r.b; ++b)
        for (int64_t h = 0; h < r.h; ++h) {
            r.v.insert(r.v.end(), past.row(b, h, 0), past.row(b, h, 0) + past.s * past.d);
            r.v.insert(r.v.end(), cur.row(b, h, 0), cur.row(b, h, 0) + cur.s * cur.d);
        }
    return r;
}

struct AttnConfig {
    int64_t q_heads = 0, kv_heads = 0;
    bool causal = false;
    std::optional<double> scale;
    double softcap = 0;
    int64_t softmax_precision = 0;
    int64_t qk_mode = 0;
    bool has_nonpad_input = false;  // opset >= 24
};

struct AttnInputs {
    Heads q, k, v;
    bool three_d = false, has_past = false;
    int64_t past = 0;
    std::vector<int64_t> nonpad;  // per batch; empty = not given
};

AttnInputs read_attention_inputs(KernelContext& ctx, const AttnConfig& c) {
    AttnInputs in;
    in.three_d = ctx.input(0).rank() == 3;
    in.q = to_heads(ctx.input(0), c.q_heads, "Q");
    in.k = to_heads(ctx.input(1), c.kv_heads, "K");
    in.v = to_heads(ctx.input(2), c.kv_heads, "V");
    if (ctx.has_input(4)) {
        const Heads pk = to_heads(ctx.input(4), 0, "past_key");
        in.has_past = true;
        in.past = pk.s;
        in.k = concat_seq(pk, in.k);
    }
    if (ctx.has_input(5)) in.v = concat_seq(to_heads(ctx.input(5), 0, "past_value"), in.v);
    if (c.has_nonpad_input && ctx.has_input(6))
        in.nonpad = to_int64_vector(ctx.input(6), "Attention nonpad_kv_seqlen");
    const Heads &q = in.q, &k = in.k, &v = in.v;
    if (k.b != q.b || v.b != q.b || k.d != q.d || v.s != k.s || v.h != k.h)
        fail("Attention: Q, K and V shapes are not compatible");
    if (k.h <= 0 || q.h % k.h != 0)
        fail("Attention: q_num_heads must be a multiple of kv_num_heads");
    if (!in.nonpad.empty() && static_cast<int64_t>(in.nonpad.size()) != q.b)
        fail("Attention: nonpad_kv_seqlen must have one entry per batch");
    for (const int64_t n : in.nonpad)
        if (n < 0 || n > k.s)
            fail("Attention: nonpad_kv_seqlen holds " + std::to_string(n) + ", outside [0, " +
                 std::to_string(k.s) + "] (the key sequence length)");
    return in;
}

// attn_mask broadcast to [B, H, Sq, Skv]; a mask shorter than Skv is padded with -inf (or
// false); bool masks become 0 / -inf.
// (ONNX's reference implementation turns a bool mask combined with is_causal into NaN,
// 0 * -inf; we follow the spec's wording instead: true = attend. No node test combines them.)
Vec expand_mask(const Tensor& m, int64_t B, int64_t H, int64_t Sq, int64_t Skv) {
    if (m.rank() < 1 || m.rank() > 4) fail("Attention: attn_mask must have rank 1 to 4");
    Dims md(4, 1);
    std::copy(m.dims().begin(), m.dims().end(), md.end() - m.rank());
    const Dims target{B, H, Sq, md[3]};
    if (md[3] > Skv) fail("Attention: attn_mask is longer than the key sequence");
    for (int i = 0; i < 3; ++i)
        if (md[i] != 1 && md[i] != target[i]) fail("Attention: attn_mask does not broadcast");
    const Dims st = broadcast_strides(md, target);
    const bool is_bool = m.dtype() == DataType::kBool;
    const Vec src = to_doubles(m);
    Vec out(static_cast<size_t>(B * H * Sq * Skv), kNegInf);
    for (int64_t b = 0; b < B; ++b)
        for (int64_t h = 0; h < H; ++h)
            for (int64_t i = 0; i < Sq; ++i)
                for (int64_t j = 0; j < md[3]; ++j) {
                    const double x =
                        src[static_cast<size_t>(b * st[0] + h * st[1] + i * st[2] + j)];
                    out[static_cast<size_t>(((b * H + h) * Sq + i) * Skv + j)] =
                        is_bool ? (x != 0 ? 0.0 : kNegInf) : x;
                }
    return out;
}

// The additive bias [B, H, Sq, Skv]: mask, causal frontier, padding from nonpad_kv_seqlen.
// Causal masking is bottom-right aligned: with past_key the offset is the past length; with
// only nonpad_kv_seqlen it is nonpad[b] - Sq; otherwise 0.
Vec attention_bias(KernelContext& ctx, const AttnConfig& c, const AttnInputs& in) {
    const int64_t B = in.q.b, H = in.q.h, Sq = in.q.s, Skv = in.k.s;
    Vec bias = ctx.has_input(3) ? expand_mask(ctx.input(3), B, H, Sq, Skv)
                                : Vec(static_cast<size_t>(B * H * Sq * Skv), 0.0);
    for (int64_t b = 0; b < B; ++b) {
        const bool use_nonpad = !in.nonpad.empty();
        const int64_t nonpad = use_nonpad ? in.nonpad[static_cast<size_t>(b)] : Skv;
        const int64_t offset = (use_nonpad && !in.has_past) ? nonpad - Sq : in.past;
        for (int64_t h = 0; h < H; ++h)
            for (int64_t i = 0; i < Sq; ++i)
                for (int64_t j = 0; j < Skv; ++j) {
                    double& x = bias[static_cast<size_t>(((b * H + h) * Sq + i) * Skv + j)];
                    if (c.causal && j > i + offset) x += kNegInf;
                    if (j >= nonpad) x += kNegInf;
                }
    }
    return bias;
}

// Scores [B, H, Sq, Skv] = softcap((Q * sqrt(scale)) . (K * sqrt(scale))), GQA mapping query
// head h to key head h / (Hq / Hkv).
Vec attention_scores(const AttnConfig& c, const AttnInputs& in) {
    const Heads &q = in.q, &k = in.k;
    const double s = std::sqrt(c.scale ? *c.scale : 1.0 / std::sqrt(static_cast<double>(q.d)));
    const int64_t group = q.h / k.h;
    Vec out;
    out.reserve(static_cast<size_t>(q.b * q.h * q.s * k.s));
    for (int64_t b = 0; b < q.b; ++b)
        for (int64_t h = 0; h < q.h; ++h)
            for (int64_t i = 0; i < q.s; ++i)
                for (int64_t j = 0; j < k.s; ++j) {
                    const double *qr = q.row(b, h, i), *kr = k.row(b, h / group, j);
                    double acc = 0;
                    for (int64_t d = 0; d < q.d; ++d) acc += (qr[d] * s) * (kr[d] * s);
                    if (c.softcap > 0) acc = c.softcap * std::tanh(acc / c.softcap);
                    out.push_back(acc);
                }
    return out;
}

// Y = probs @ V, as [B, Hq, Sq, Dv] (4-D) or [B, Sq, Hq * Dv] (3-D).
Vec attention_output(const Vec& probs, const AttnInputs& in) {
    const Heads &q = in.q, &v = in.v;
    const int64_t group = q.h / v.h, Skv = v.s;
    Vec y(static_cast<size_t>(q.b * q.h * q.s * v.d), 0.0);
    for (int64_t b = 0; b < q.b; ++b)
        for (int64_t h = 0; h < q.h; ++h)
            for (int64_t i = 0; i < q.s; ++i) {
                const double* p = probs.data() + ((b * q.h + h) * q.s + i) * Skv;
                const int64_t o =
                    in.three_d ? ((b * q.s + i) * q.h + h) * v.d : ((b * q.h + h) * q.s + i) * v.d;
                for (int64_t j = 0; j < Skv; ++j) {
                    const double* vr = v.row(b, h / group, j);
                    for (int64_t d = 0; d < v.d; ++d) y[static_cast<size_t>(o + d)] += p[j] * vr[d];
                }
            }
    return y;
}

void run_attention(KernelContext& ctx, const AttnConfig& c) {
    require_float(ctx.input(0), "Attention");
    const DataType dt = ctx.input(0).dtype();
    const AttnInputs in = read_attention_inputs(ctx, c);
    const Vec bias = attention_bias(ctx, c, in);
    const Vec qk = attention_scores(c, in);
    Vec probs(qk.size()), with_bias(qk.size());
    for (size_t i = 0; i < qk.size(); ++i) {
        with_bias[i] = qk[i] + bias[i];
        probs[i] = round_to(with_bias[i], c.softmax_precision);
    }
    const int64_t Skv = in.k.s;
    for (size_t r = 0; Skv > 0 && r < probs.size(); r += static_cast<size_t>(Skv))
        softmax_row(probs.data() + r, Skv);
    const Heads &q = in.q, &k = in.k, &v = in.v;
    const Dims y_dims = in.three_d ? Dims{q.b, q.s, q.h * v.d} : Dims{q.b, q.h, q.s, v.d};
    ctx.set_output(0, from_doubles(attention_output(probs, in), dt, y_dims, "Attention"));
    ctx.set_output(1, from_doubles(k.v, dt, {k.b, k.h, k.s, k.d}, "Attention"));
    ctx.set_output(2, from_doubles(v.v, dt, {v.b, v.h, v.s, v.d}, "Attention"));
    const Vec& qk_out = c.qk_mode == 2 ? with_bias : c.qk_mode == 3 ? probs : qk;
    ctx.set_output(3, from_doubles(qk_out, dt, {q.b, q.h, q.s, Skv}, "Attention"));
}

KernelFn make_attention(const Attrs& a, int64_t opset) {
    AttnConfig c;
    c.q_heads = a.get_int("q_num_heads", 0);
    c.kv_heads = a.get_int("kv_num_heads", 0);
    c.causal = a.get_flag("is_causal", false);
    if (a.has("scale")) c.scale = a.get_float("scale", 0);
    c.softcap = a.get_float("softcap", 0);
    c.softmax_precision = a.get_int("softmax_precision", 0);
    c.qk_mode = a.get_int("qk_matmul_output_mode", 0);
    if (c.qk_mode < 0 || c.qk_mode > 3) fail("Attention: qk_matmul_output_mode must be 0..3");
    c.has_nonpad_input = opset >= 24;
    return half_via_float([c](KernelContext& ctx) { run_attention(ctx, c); });
}

}  // namespace

void register_attention_extra_ops(OpTable& t);  // attention_extra.cc

void register_attention_ops(OpTable& t) {
    using C = NumericContract;
    t.add("Attention", 23, C::kApproximate, make_attention);
    t.add("Attention", 24, C::kApproximate, make_attention);
    register_attention_extra_ops(t);
}

}  // namespace pg::ops
