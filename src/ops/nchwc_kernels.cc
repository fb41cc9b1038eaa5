// The blocked steps' kernels (see nchwc_kernels.h).
#include "ops/nchwc_kernels.h"

#include <cstring>
#include <string>
#include <utility>

#include "ops/concat_slice.h"
#include "ops/conv_kernels.h"
#include "ops/nchwc.h"
#include "ops/nchwc_winograd.h"

namespace pg::ops {

namespace {

constexpr int64_t kB = kNchwcBlock;

bool is_f32(const Tensor& t) {
    return t.dtype() == DataType::kFloat32;
}

// Bytes per element when t has fixed-size elements (0 otherwise: strings, packed 4-bit types).
size_t element_bytes(const Tensor& t) {
    if (t.is_string() || t.numel() == 0 || t.nbytes() % t.numel()) return 0;
    return static_cast<size_t>(t.nbytes() / t.numel());
}

int64_t plane_of(const std::vector<int64_t>& nchw) {
    int64_t p = 1;
    for (size_t i = 2; i < nchw.size(); ++i) p *= nchw[i];
    return p;
}

Tensor blocked_of(const Tensor& t, ThreadPool* pool) {
    Tensor y = Tensor::uninitialized(t.dtype(), nchwc_dims(t.dims()));
    to_nchwc(t.bytes(), t.dims()[0], t.dims()[1], plane_of(t.dims()), element_bytes(t),
             y.mutable_bytes(), pool);
    return y;
}

// Runs `plain` on ctx's inputs with the blocked ones among `blocked` made plain.
void run_plain(KernelContext& ctx, const KernelFn& plain, const std::vector<size_t>& blocked) {
    std::vector<RtValue> held(ctx.num_inputs());
    std::vector<const RtValue*> in(ctx.num_inputs());
    for (size_t i = 0; i < ctx.num_inputs(); ++i) in[i] = ctx.value(i);
    for (const size_t i : blocked)
        if (ctx.has_input(i) && ctx.value(i)->is_tensor() && is_nchwc(ctx.input(i))) {
            held[i] = RtValue::of(plain_of(ctx.input(i), ctx.pool()));
            in[i] = &held[i];
        }
    KernelContext sub(ctx.node(), std::move(in), ctx.num_outputs(), ctx.pool(), nullptr);
    plain(sub);
    for (size_t k = 0; k < ctx.num_outputs(); ++k) ctx.set_output(k, std::move(sub.outputs()[k]));
}

// The NCHW dims of blocked x (its data is not read through them).
Tensor nchw_view(const Tensor& x) {
    return x.reshaped(nchw_dims(x.dims()));
}

// A Conv whose output channels do not fill whole blocks (a classifier's 1000) from blocked (or
// passed-through plain) X into a plain output: conv_nchwc_plain_out; false to run the plain one.
bool conv_to_plain(const ConvChain& chain, KernelContext& ctx, const ConvShape& s, size_t res,
                   bool plain) {
    if (res || !conv_nchwc_plain_out_fits(s, plain)) return false;
    std::vector<float> k;
    const GemmEpilogue ep = conv_chain_epilogue(chain, ctx, k);
    OutputSpace y = output_space(ctx.concat_slice(), DataType::kFloat32, conv_output_dims(s));
    const float* bias = ctx.has_input(2) ? ctx.input(2).data<float>() : nullptr;
    conv_nchwc_plain_out(s, ctx.input(0).data<float>(), ctx.input(1).data<float>(), bias, &ep,
                         reinterpret_cast<float*>(y.data), ctx.pool(), plain);
    ctx.set_output(0, std::move(y.tensor));
    return true;
}

// The blocked Conv chain when everything fits; false to run the plain one.
bool blocked_conv(const ConvChain& chain, KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    const bool plain = !is_nchwc(x);  // (passed through an entry; the output is blocked still)
    if (!is_f32(x) || x.rank() != (plain ? 4 : 5) || !ctx.has_input(1)) return false;
    const Tensor& w = ctx.input(1);
    if (!is_f32(w) || w.rank() != 4) return false;
    size_t res = 0;
    if (!conv_chain_inputs_fit(chain, ctx, &res)) return false;
    const Tensor* b = ctx.has_input(2) ? &ctx.input(2) : nullptr;
    const ConvShape s = conv_shape(chain.conv, plain ? x : nchw_view(x), w, b);
    const bool depthwise = !plain && depthwise_nchwc_fits(s);
    if (!depthwise && s.m % kB) return conv_to_plain(chain, ctx, s, res, plain);
    if (!depthwise && !conv_nchwc_fits(s, plain)) return false;
    const std::vector<int64_t> dims = nchwc_dims(conv_output_dims(s));
    if (res && (!is_nchwc(ctx.input(res)) || ctx.input(res).dims() != dims)) return false;
    std::vector<float> k;
    GemmEpilogue ep = conv_chain_epilogue(chain, ctx, k);
    OutputSpace y = output_space(ctx.concat_slice(), DataType::kFloat32, dims);
    float* out = reinterpret_cast<float*>(y.data);
    if (ep.res) ep.res_origin = out;
    const float* bias = b ? b->data<float>() : nullptr;
    if (depthwise)
        depthwise_nchwc(s, x.data<float>(), w.data<float>(), bias, &ep, out, ctx.pool());
    else if (!plain && nchwc_winograd_pays(s))
        conv_nchwc_winograd(s, x.data<float>(), w.data<float>(), bias, &ep, out, ctx.pool());
    else
        conv_nchwc(s, x.data<float>(), w.data<float>(), bias, &ep, out, ctx.pool(), plain);
    ctx.set_output(0, std::move(y.tensor));
    return true;
}

// The pool's window over blocked x's spatial dims.
Window blocked_window(const WindowAttrs& wa, const Tensor& x, const char* op) {
    const std::vector<int64_t> spatial{x.dims()[2], x.dims()[3]};
    return make_window(wa, spatial, wa.kernel_shape, op);
}

// The blocked pool when it fits; false to run the plain one.
bool blocked_pool(const std::string& op, const WindowAttrs& wa, bool include_pad,
                  KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    if (!is_nchwc(x) || !is_f32(x) || x.rank() != 5 || ctx.num_outputs() != 1) return false;
    const int64_t n = x.dims()[0], cb = x.dims()[1];
    const float* src = x.data<float>();
    if (op == "GlobalAveragePool" || op == "GlobalMaxPool") {
        Tensor y = Tensor::uninitialized(DataType::kFloat32, {n, cb, 1, 1, kB});
        global_pool_nchwc(n, cb, x.dims()[2] * x.dims()[3], src,
                          reinterpret_cast<float*>(y.mutable_bytes()), op == "GlobalMaxPool",
                          ctx.pool());
        ctx.set_output(0, std::move(y));
        return true;
    }
    if (wa.kernel_shape.size() != 2) return false;  // the plain kernel reports it
    const Window g = blocked_window(wa, x, op.c_str());
    Tensor y = Tensor::uninitialized(DataType::kFloat32, {n, cb, g.out[1], g.out[2], kB});
    float* dst = reinterpret_cast<float*>(y.mutable_bytes());
    if (op == "MaxPool")
        max_pool_nchwc(g, n, cb, src, dst, ctx.pool());
    else
        avg_pool_nchwc(g, n, cb, src, dst, include_pad, ctx.pool());
    ctx.set_output(0, std::move(y));
    return true;
}

// The blocked Concat when every input is blocked with the same type and the same dims but the
// blocks; false to run the plain one.
bool blocked_concat(KernelContext& ctx) {
    if (ctx.num_inputs() == 0 || ctx.num_outputs() != 1) return false;
    std::vector<int64_t> dims;
    DataType dt = DataType::kUndefined;
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
        if (!ctx.has_input(i) || !ctx.value(i)->is_tensor()) return false;
        const Tensor& t = ctx.input(i);
        if (!is_nchwc(t) || element_bytes(t) == 0) return false;
        if (i == 0) {
            dims = t.dims(), dt = t.dtype();
            continue;
        }
        for (size_t a = 0; a < 5; ++a)
            if (a != 1 && t.dims()[a] != dims[a]) return false;
        if (t.dtype() != dt) return false;
        dims[1] += t.dims()[1];
    }
    Tensor y = Tensor::uninitialized(dt, dims);
    uint8_t* dst = y.mutable_bytes();
    const size_t line = element_bytes(ctx.input(0)) * static_cast<size_t>(dims[2] * dims[3] * kB);
    for (int64_t n = 0; n < dims[0]; ++n)
        for (size_t i = 0; i < ctx.num_inputs(); ++i) {
            const Tensor& t = ctx.input(i);
            const size_t bytes = line * static_cast<size_t>(t.dims()[1]);
            std::memcpy(dst, t.bytes() + static_cast<size_t>(n) * bytes, bytes);
            dst += bytes;
        }
    ctx.set_output(0, std::move(y));
    return true;
}

// Input i is float32 with `count` values.
bool f32_count(const KernelContext& ctx, size_t i, int64_t count) {
    return ctx.has_input(i) && is_f32(ctx.input(i)) &&
           ctx.input(i).numel() == static_cast<uint64_t>(count);
}

// The blocked BatchNormalization chain when everything fits; false to run the plain one.
bool blocked_batch_norm(const BatchNormChain& chain, KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    if (!is_nchwc(x) || !is_f32(x) || ctx.num_outputs() != 1) return false;
    const int64_t c = x.dims()[1] * kB;
    for (size_t i = 1; i < 5; ++i)
        if (!f32_count(ctx, i, c)) return false;
    BlockedNorm a{ctx.input(1).data<float>(),
                  ctx.input(2).data<float>(),
                  ctx.input(3).data<float>(),
                  ctx.input(4).data<float>(),
                  chain.epsilon,
                  nullptr,
                  nullptr,
                  chain.relu};
    size_t next = 5;
    for (const auto& [dims, factor] :
         {std::pair{&chain.mul_dims, &a.post_mul}, std::pair{&chain.add_dims, &a.post_add}}) {
        if (dims->empty()) continue;
        if (!f32_count(ctx, next, c) || !per_channel_dims(*dims, 4, c)) return false;
        *factor = ctx.input(next++).data<float>();
    }
    Tensor y = Tensor::uninitialized(DataType::kFloat32, x.dims());
    batch_norm_nchwc(a, x.dims()[0], x.dims()[1], x.dims()[2] * x.dims()[3], x.data<float>(),
                     reinterpret_cast<float*>(y.mutable_bytes()), ctx.pool());
    ctx.set_output(0, std::move(y));
    return true;
}

}  // namespace

bool is_nchwc(const Tensor& t) {
    return t.rank() == 5 && t.dims()[4] == kB;
}

Tensor plain_of(const Tensor& t, ThreadPool* pool) {
    if (!is_nchwc(t)) return t;
    const std::vector<int64_t> dims = nchw_dims(t.dims());
    if (t.numel() == 0) return Tensor::uninitialized(t.dtype(), dims);
    if (element_bytes(t) == 0) return t;
    Tensor y = Tensor::uninitialized(t.dtype(), dims);
    from_nchwc(t.bytes(), dims[0], dims[1], plane_of(dims), element_bytes(t), y.mutable_bytes(),
               pool);
    return y;
}

KernelFn make_to_nchwc() {
    return [](KernelContext& ctx) {
        const RtValue* v = ctx.value(0);
        if (!v || !v->is_tensor()) return ctx.set_output(0, v ? *v : RtValue());
        const Tensor& x = v->tensor();
        const bool fits =
            x.rank() == 4 && x.dims()[1] > 0 && x.dims()[1] % kB == 0 && is_f32(x) && x.has_data();
        ctx.set_output(0, fits ? RtValue::of(blocked_of(x, ctx.pool())) : *v);
    };
}

KernelFn make_from_nchwc() {
    return [](KernelContext& ctx) {
        const RtValue* v = ctx.value(0);
        if (!v || !v->is_tensor()) return ctx.set_output(0, v ? *v : RtValue());
        ctx.set_output(0, plain_of(v->tensor(), ctx.pool()));
    };
}

KernelFn make_nchwc_conv(const ConvChain& chain, std::vector<size_t> blocked, KernelFn plain) {
    return [chain, blocked = std::move(blocked), plain = std::move(plain)](KernelContext& ctx) {
        if (!blocked_conv(chain, ctx)) run_plain(ctx, plain, blocked);
    };
}

namespace {

// The classifier Conv with its GlobalAveragePool (conv_nchwc_global_average) when everything
// fits: blocked float32 X, output channels not in whole blocks, no residual; false otherwise.
bool blocked_conv_average(const ConvChain& chain, KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    if (!is_f32(x) || !is_nchwc(x) || x.rank() != 5 || !ctx.has_input(1)) return false;
    const Tensor& w = ctx.input(1);
    if (!is_f32(w) || w.rank() != 4) return false;
    size_t res = 0;
    if (!conv_chain_inputs_fit(chain, ctx, &res) || res) return false;
    const Tensor* b = ctx.has_input(2) ? &ctx.input(2) : nullptr;
    const ConvShape s = conv_shape(chain.conv, nchw_view(x), w, b);
    if (s.m % kB == 0 || !conv_nchwc_plain_out_fits(s)) return false;
    std::vector<float> k;
    const GemmEpilogue ep = conv_chain_epilogue(chain, ctx, k);
    Tensor y = Tensor::uninitialized(DataType::kFloat32, {s.n, s.m, 1, 1});
    conv_nchwc_global_average(s, x.data<float>(), w.data<float>(), b ? b->data<float>() : nullptr,
                              &ep, reinterpret_cast<float*>(y.mutable_bytes()), ctx.pool());
    ctx.set_output(0, std::move(y));
    return true;
}

}  // namespace

KernelFn make_nchwc_conv_global_average(const ConvChain& chain, std::vector<size_t> blocked,
                                        KernelFn plain, const ir::Node& average,
                                        KernelFn plain_average) {
    return [chain, blocked = std::move(blocked), plain = std::move(plain), &average,
            plain_average = std::move(plain_average)](KernelContext& ctx) {
        if (blocked_conv_average(chain, ctx)) return;
        run_plain(ctx, plain, blocked);
        const RtValue conv = ctx.outputs()[0];
        KernelContext next(average, {&conv}, 1, ctx.pool(), nullptr);
        plain_average(next);
        ctx.set_output(0, std::move(next.outputs()[0]));
    };
}

KernelFn make_nchwc_batch_norm(const BatchNormChain& chain, KernelFn plain) {
    return [chain, plain = std::move(plain)](KernelContext& ctx) {
        if (!blocked_batch_norm(chain, ctx)) run_plain(ctx, plain, {0});
    };
}

KernelFn make_nchwc_concat(KernelFn plain) {
    return [plain = std::move(plain)](KernelContext& ctx) {
        if (blocked_concat(ctx)) return;
        std::vector<size_t> all(ctx.num_inputs());
        for (size_t i = 0; i < all.size(); ++i) all[i] = i;
        run_plain(ctx, plain, all);
    };
}

KernelFn make_nchwc_pool(const std::string& op, const Attrs& a, KernelFn plain) {
    const bool global = op == "GlobalAveragePool" || op == "GlobalMaxPool";
    const WindowAttrs wa = global ? WindowAttrs{} : read_window_attrs(a);
    const bool include_pad = op == "AveragePool" && a.get_flag("count_include_pad", false);
    return [op, wa, include_pad, plain = std::move(plain)](KernelContext& ctx) {
        if (!blocked_pool(op, wa, include_pad, ctx)) run_plain(ctx, plain, {0});
    };
}

}  // namespace pg::ops
