// The fused Conv + BatchNormalization / Relu / Clip kernel (see conv_fused.h).
#include "ops/conv_fused.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "base/error.h"
#include "ops/concat_slice.h"
#include "ops/gemm_kernels.h"
#include "ops/tensor_util.h"

namespace pg::ops {

namespace {

bool is_f32(const Tensor& t) {
    return t.dtype() == DataType::kFloat32;
}

// One past the chain's last input before the shuffle's shapes.
size_t chain_end(const ConvChain& c, const KernelContext& ctx) {
    return ctx.num_inputs() - (c.shuffle ? 2 : 0);
}

}  // namespace

bool conv_chain_inputs_fit(const ConvChain& c, const KernelContext& ctx, size_t* residual) {
    *residual = 0;
    if (ctx.has_input(2) && !is_f32(ctx.input(2))) return false;
    const int64_t m = ctx.input(1).dims()[0];
    size_t next = 3;
    if (c.batch_norm) {
        for (size_t i = 3; i < 7; ++i)
            if (!ctx.has_input(i) || !is_f32(ctx.input(i)) ||
                ctx.input(i).numel() != static_cast<uint64_t>(m))
                return false;
        next = 7;
    }
    for (const bool on : {c.scale, c.shift}) {
        if (!on) continue;
        if (!ctx.has_input(next) || !is_f32(ctx.input(next)) ||
            ctx.input(next).numel() != static_cast<uint64_t>(m))
            return false;
        ++next;
    }
    if (c.residual) {
        if (!ctx.has_input(next) || !is_f32(ctx.input(next))) return false;
        *residual = next++;
    }
    if (c.act == ConvChain::Act::kClip && !c.clip_from_attrs)
        for (size_t i = next; i < std::min(next + 2, chain_end(c, ctx)); ++i)
            if (ctx.has_input(i) && (!is_f32(ctx.input(i)) || ctx.input(i).numel() != 1))
                return false;
    return true;
}

namespace {

// True when every input the fast path reads is float32 with the size it expects.
bool fast_path_fits(const ConvChain& c, KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    if (!is_f32(x) || !is_f32(w) || x.rank() < 3 || w.rank() != x.rank()) return false;
    size_t residual = 0;
    if (!conv_chain_inputs_fit(c, ctx, &residual)) return false;
    if (residual) {
        const Tensor* b = ctx.has_input(2) ? &ctx.input(2) : nullptr;
        if (ctx.input(residual).dims() != conv_output_dims(conv_shape(c.conv, x, w, b)))
            return false;
    }
    return true;
}

}  // namespace

GemmEpilogue conv_chain_epilogue(const ConvChain& c, const KernelContext& ctx,
                                 std::vector<float>& k) {
    GemmEpilogue ep;
    size_t next = 3;
    if (c.batch_norm) {
        const float* scale = ctx.input(3).data<float>();
        const float* var = ctx.input(6).data<float>();
        k.resize(ctx.input(3).numel());
        for (size_t i = 0; i < k.size(); ++i)
            k[i] =
                static_cast<float>(scale[i] / std::sqrt(static_cast<double>(var[i]) + c.epsilon));
        ep.sub = ctx.input(5).data<float>(), ep.mul = k.data(), ep.add = ctx.input(4).data<float>();
        next = 7;
    }
    if (c.scale) ep.scale = ctx.input(next++).data<float>();
    if (c.shift) ep.shift = ctx.input(next++).data<float>();
    if (c.residual) ep.res = ctx.input(next++).data<float>();  // res_origin: set with the output
    ep.keep_cached = c.keep_cached;
    if (c.act == ConvChain::Act::kRelu) {
        ep.clamp = true, ep.lo = 0.0f, ep.hi = std::numeric_limits<float>::infinity();
    } else if (c.act == ConvChain::Act::kClip) {
        ep.clamp = true;
        ep.lo = std::numeric_limits<float>::lowest(), ep.hi = std::numeric_limits<float>::max();
        if (c.clip_from_attrs) {
            ep.lo = c.clip_min, ep.hi = c.clip_max;
        } else {
            const size_t end = chain_end(c, ctx);
            if (next < end && ctx.has_input(next)) ep.lo = ctx.input(next).data<float>()[0];
            if (next + 1 < end && ctx.has_input(next + 1))
                ep.hi = ctx.input(next + 1).data<float>()[0];
        }
    }
    return ep;
}

namespace {

// The shuffle's group count g when the chain's Reshape (n, g, m / g, spatial...), Transpose
// (0, 2, 1, ...) and Reshape take Conv output dims `y` back to `y`; 0 otherwise (the plain
// kernels then run, and report any error).
int64_t shuffle_groups(const ConvChain& c, const KernelContext& ctx,
                       const std::vector<int64_t>& y) {
    const size_t n = ctx.num_inputs();
    if (!ctx.has_input(n - 2) || !ctx.has_input(n - 1)) return 0;
    try {
        const std::vector<int64_t> r =
            reshape_dims(y, to_int64_vector(ctx.input(n - 2), "Reshape"), c.shuffle_allowzero[0]);
        if (r.size() != y.size() + 1 || r[0] != y[0] || r[1] * r[2] != y[1] ||
            !std::equal(r.begin() + 3, r.end(), y.begin() + 2))
            return 0;
        std::vector<int64_t> t = r;
        std::swap(t[1], t[2]);
        const std::vector<int64_t> back =
            reshape_dims(t, to_int64_vector(ctx.input(n - 1), "Reshape"), c.shuffle_allowzero[1]);
        return back == y ? r[1] : 0;
    } catch (const Error&) {
        return 0;
    }
}

}  // namespace

KernelFn make_conv_chain(const ConvChain& chain, KernelFn plain) {
    return [chain, plain = std::move(plain)](KernelContext& ctx) {
        if (!fast_path_fits(chain, ctx)) return plain(ctx);
        const Tensor& x = ctx.input(0);
        const Tensor& w = ctx.input(1);
        const Tensor* b = ctx.has_input(2) ? &ctx.input(2) : nullptr;
        const ConvShape s = conv_shape(chain.conv, x, w, b);
        const std::vector<int64_t> dims = conv_output_dims(s);
        const int64_t shuffle = chain.shuffle ? shuffle_groups(chain, ctx, dims) : 1;
        if (shuffle == 0 || (shuffle > 1 && is_depthwise(s))) return plain(ctx);
        std::vector<float> k;
        GemmEpilogue ep = conv_chain_epilogue(chain, ctx, k);
        OutputSpace y = output_space(ctx.concat_slice(), DataType::kFloat32, dims);
        float* out = reinterpret_cast<float*>(y.data);
        if (ep.res) ep.res_origin = out;
        conv_fast(s, x.data<float>(), w.data<float>(), b ? b->data<float>() : nullptr, out,
                  ctx.pool(), &ep, shuffle);
        ctx.set_output(0, std::move(y.tensor));
    };
}

}  // namespace pg::ops
