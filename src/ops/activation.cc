// Activations and softmax-like ops: Relu, LeakyRelu, PRelu, Sigmoid, Tanh, Elu, Selu, Celu,
// HardSigmoid, HardSwish, Softplus, Softsign, Gelu, Mish, ThresholdedRelu, Clip, Softmax,
// LogSoftmax, Hardmax. Pointwise ops are scalar functions mapped in parallel; float16 / bfloat16
// are computed in float32 (half_via_float). Softmax-like ops before opset 13 coerce the input to
// 2-D at `axis` and normalize whole rows; from opset 13 they normalize along the single axis.
// The row kernels are in softmax_kernels.h (float32 contiguous rows take its fast path); float32
// Sigmoid and Gelu use activation_kernels.h's vectorized versions, float32 Tanh vec_math's.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "base/thread_pool.h"
#include "ops/gemm_kernels.h"
#include "ops/activation_kernels.h"
#include "ops/broadcast.h"
#include "ops/dispatch.h"
#include "ops/half.h"
#include "ops/op_table.h"
#include "ops/softmax_kernels.h"
#include "ops/tensor_util.h"
#include "ops/vec_math.h"

namespace pg::ops {

namespace {

constexpr int64_t kGrain = 16384;

template <typename T, typename F>
Tensor map_same(KernelContext& ctx, const Tensor& x, F f) {
    Tensor out = Tensor::uninitialized(x.dtype(), x.dims());
    T* dst = reinterpret_cast<T*>(out.mutable_bytes());
    const T* src = x.data<T>();
    auto body = [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) dst[i] = static_cast<T>(f(src[i]));
    };
    const auto n = static_cast<int64_t>(x.numel());
    run_affine(ctx.pool(), n, kGrain, body);
    return out;
}

// A pointwise op on float tensors (numeric tensors when `numeric`).
template <bool numeric = false, typename Op>
KernelFn pointwise(const char* name, Op op) {
    return half_via_float([=](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        auto run = [&]<typename T>() {
            ctx.set_output(0, map_same<T>(ctx, x, [&](T v) { return op(v); }));
        };
        if constexpr (numeric)
            dispatch_numeric(x.dtype(), name, run);
        else
            dispatch_float(x.dtype(), name, run);
    });
}

// A pointwise float op whose float32 values come from the array function `fast`
// (activation_kernels.h) in parallel chunks; other float types map the plain `op`.
template <typename Op>
KernelFn pointwise_vec(const char* name, Op op, void (*fast)(const float*, float*, int64_t)) {
    const KernelFn plain = pointwise(name, op);
    return half_via_float([plain, fast](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        if (x.dtype() != DataType::kFloat32) return plain(ctx);
        ctx.set_output(0, map_float32(x, fast, ctx.pool()));
    });
}

template <typename T>
T softplus(T x) {
    return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

KernelFn make_relu(const Attrs&, int64_t) {
    return pointwise<true>("Relu", [](auto x) { return x < decltype(x)(0) ? decltype(x)(0) : x; });
}
KernelFn make_leaky_relu(const Attrs& a, int64_t) {
    const float alpha = a.get_float("alpha", 0.01f);
    return pointwise("LeakyRelu", [=](auto x) { return x < 0 ? decltype(x)(alpha) * x : x; });
}
KernelFn make_sigmoid(const Attrs&, int64_t) {
    return pointwise_vec(
        "Sigmoid", [](auto x) { return sigmoid(x); }, sigmoid_fast);
}
KernelFn make_tanh(const Attrs&, int64_t) {
    return pointwise_vec(
        "Tanh", [](auto x) { return std::tanh(x); }, vec_tanh);
}
KernelFn make_elu(const Attrs& a, int64_t) {
    const float alpha = a.get_float("alpha", 1.0f);
    // ONNX: x for x >= 0 (at 0 too, whatever alpha is).
    return pointwise("Elu", [=](auto x) { return x >= 0 ? x : decltype(x)(alpha) * std::expm1(x); });
}
KernelFn make_selu(const Attrs& a, int64_t) {
    const float alpha = a.get_float("alpha", 1.67326319217681884765625f);
    const float gamma = a.get_float("gamma", 1.05070102214813232421875f);
    return pointwise("Selu", [=](auto x) {
        using T = decltype(x);
        return T(gamma) * (x > 0 ? x : T(alpha) * std::expm1(x));
    });
}
KernelFn make_celu(const Attrs& a, int64_t) {
    const float alpha = a.get_float("alpha", 1.0f);
    // max(0, x) + min(0, alpha * (exp(x / alpha) - 1)) as ONNX defines it, NaN propagating: an
    // alpha of 0, NaN or infinity gives NaN where the second term is NaN.
    return pointwise("Celu", [=](auto x) {
        using T = decltype(x);
        const T neg = T(alpha) * std::expm1(x / T(alpha));
        return (x > 0 ? x : T(0)) + (neg < 0 || std::isnan(neg) ? neg : T(0));
    });
}
KernelFn make_hard_sigmoid(const Attrs& a, int64_t) {
    const float alpha = a.get_float("alpha", 0.2f), beta = a.get_float("beta", 0.5f);
    return pointwise("HardSigmoid", [=](auto x) {
        using T = decltype(x);
        const T y = T(alpha) * x + T(beta);
        return std::isnan(y) ? y : std::max(T(0), std::min(T(1), y));  // NaN stays NaN
    });
}
KernelFn make_hard_swish(const Attrs&, int64_t) {
    return pointwise("HardSwish", [](auto x) {
        using T = decltype(x);
        return x * std::max(T(0), std::min(T(1), x / T(6) + T(0.5)));
    });
}
KernelFn make_softplus(const Attrs&, int64_t) {
    return pointwise("Softplus", [](auto x) { return softplus(x); });
}
KernelFn make_softsign(const Attrs&, int64_t) {
    return pointwise("Softsign", [](auto x) { return x / (decltype(x)(1) + std::fabs(x)); });
}
KernelFn make_mish(const Attrs&, int64_t) {
    return pointwise("Mish", [](auto x) { return x * std::tanh(softplus(x)); });
}
KernelFn make_thresholded_relu(const Attrs& a, int64_t) {
    const float alpha = a.get_float("alpha", 1.0f);
    return pointwise("ThresholdedRelu",
                     [=](auto x) { return x > decltype(x)(alpha) ? x : decltype(x)(0); });
}

KernelFn make_gelu(const Attrs& a, int64_t) {
    const std::string approx = a.get_string("approximate", "none");
    if (approx == "tanh")
        return pointwise_vec(
            "Gelu", [](auto x) { return gelu_tanh(x); }, gelu_tanh_fast);
    if (approx != "none") fail("Gelu: unknown approximate '" + approx + "'");
    return pointwise_vec(
        "Gelu", [](auto x) { return gelu_erf(x); }, gelu_fast);
}

// The slope's shape as broadcast against x. PRelu before opset 7 applies a 1-D slope of size C
// per channel (axis 1); later versions use numpy broadcasting.
Dims slope_dims(const Tensor& x, const Tensor& s, int64_t opset) {
    if (opset < 7 && s.rank() == 1 && x.rank() >= 2 && s.dims()[0] == x.dims()[1] &&
        s.dims()[0] != 1) {
        Dims d(static_cast<size_t>(x.rank() - 1), 1);
        d[0] = s.dims()[0];
        return d;
    }
    return s.dims();
}

// PRelu: y = x < 0 ? slope * x : x, slope broadcast to x.
KernelFn make_prelu(const Attrs&, int64_t opset) {
    return half_via_float([opset](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        const Tensor& s = ctx.input(1);
        if (x.dtype() != s.dtype()) fail("PRelu: X and slope have different types");
        const Dims sd = slope_dims(x, s, opset);
        dispatch_numeric(x.dtype(), "PRelu", [&]<typename T>() {
            const Dims out_dims = broadcast_shape(x.dims(), sd);
            Tensor out = Tensor::uninitialized(x.dtype(), out_dims);
            T* dst = reinterpret_cast<T*>(out.mutable_bytes());
            const T* px = x.data<T>();
            const T* ps = s.data<T>();
            for_each_broadcast2(out_dims, broadcast_strides(x.dims(), out_dims),
                                broadcast_strides(sd, out_dims),
                                [&](int64_t o, int64_t i, int64_t k) {
                                    dst[o] = px[i] < T(0) ? static_cast<T>(ps[k] * px[i]) : px[i];
                                });
            ctx.set_output(0, std::move(out));
        });
    });
}

// Clip-1/6 take min and max as attributes; Clip-11+ as optional scalar inputs.
KernelFn make_clip(const Attrs& a, int64_t opset) {
    const bool from_attrs = opset < 11;
    const float amin = a.get_float("min", std::numeric_limits<float>::lowest());
    const float amax = a.get_float("max", std::numeric_limits<float>::max());
    return half_via_float([=](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        dispatch_numeric(x.dtype(), "Clip", [&]<typename T>() {
            T lo = std::numeric_limits<T>::lowest(), hi = std::numeric_limits<T>::max();
            if (from_attrs) {
                lo = static_cast<T>(amin);
                hi = static_cast<T>(amax);
            }
            for (size_t k = 1; k <= 2 && !from_attrs; ++k) {
                if (!ctx.has_input(k)) continue;
                const Tensor& b = ctx.input(k);
                if (b.dtype() != x.dtype() || b.numel() != 1)
                    fail("Clip: min and max must be scalars of the input's type");
                (k == 1 ? lo : hi) = b.data<T>()[0];
            }
            ctx.set_output(0, map_same<T>(ctx, x, [&](T v) {
                               const T r = v < lo ? lo : v;
                               return r > hi ? hi : r;
                           }));
        });
    });
}

KernelFn make_norm(Norm kind, const char* name, const Attrs& a, int64_t opset) {
    const bool coerce_2d = opset < 13;
    const int64_t axis_attr = a.get_int("axis", coerce_2d ? 1 : -1);
    return half_via_float([=](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        const int64_t rank = x.rank();
        const int64_t axis = axis_attr < 0 ? axis_attr + rank : axis_attr;
        if (axis < 0 || axis > rank || (axis == rank && rank > 0))
            fail(std::string(name) + ": axis " + std::to_string(axis_attr) + " out of range");
        int64_t outer = 1, n = 1, inner = 1;
        for (int64_t d = 0; d < rank; ++d) {
            if (d < axis)
                outer *= x.dims()[d];
            else if (d == axis || coerce_2d)
                n *= x.dims()[d];
            else
                inner *= x.dims()[d];
        }
        dispatch_float(x.dtype(), name, [&]<typename T>() {
            Tensor out = Tensor::uninitialized(x.dtype(), x.dims());
            T* dst = reinterpret_cast<T*>(out.mutable_bytes());
            const T* src = x.data<T>();
            // float32 rows along a contiguous axis: the vectorized kernel (softmax_kernels.h).
            const bool fast = std::is_same_v<T, float> && inner == 1 && kind != Norm::kHardmax;
            auto rows = [&](int64_t b, int64_t e) {  // row r = (o, i)
                if constexpr (std::is_same_v<T, float>)
                    if (fast) {
                        for (int64_t r = b; r < e; ++r)
                            softmax_row_fast(src + r * n, dst + r * n, n,
                                             kind == Norm::kLogSoftmax);
                        return;
                    }
                for (int64_t r = b; r < e; ++r) {
                    const int64_t base = (r / inner) * n * inner + r % inner;
                    normalize(src + base, dst + base, n, inner, kind);
                }
            };
            const int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(n, 1));
            run_affine(outer * inner * n > kGrain ? ctx.pool() : nullptr, outer * inner, grain,
                       rows);
            ctx.set_output(0, std::move(out));
        });
    });
}

MakeKernel norm(Norm kind, const char* name) {
    return [=](const Attrs& a, int64_t opset) { return make_norm(kind, name, a, opset); };
}

}  // namespace

void register_activation_ops(OpTable& t) {
    using C = NumericContract;
    t.add("Relu", 1, C::kExact, make_relu);
    t.add("LeakyRelu", 1, C::kRounding, make_leaky_relu);
    t.add("PRelu", 1, C::kRounding, make_prelu);
    t.add("ThresholdedRelu", 10, C::kExact, make_thresholded_relu);
    t.add("Sigmoid", 1, C::kApproximate, make_sigmoid);
    t.add("Tanh", 1, C::kApproximate, make_tanh);
    t.add("Elu", 1, C::kApproximate, make_elu);
    t.add("Selu", 1, C::kApproximate, make_selu);
    t.add("Celu", 12, C::kApproximate, make_celu);
    t.add("HardSigmoid", 1, C::kRounding, make_hard_sigmoid);
    t.add("HardSwish", 14, C::kRounding, make_hard_swish);
    t.add("Softplus", 1, C::kApproximate, make_softplus);
    t.add("Softsign", 1, C::kRounding, make_softsign);
    t.add("Gelu", 20, C::kApproximate, make_gelu);
    t.add("Mish", 18, C::kApproximate, make_mish);
    t.add("Clip", 1, C::kExact, make_clip);
    t.add("Softmax", 1, C::kApproximate, norm(Norm::kSoftmax, "Softmax"));
    t.add("LogSoftmax", 1, C::kApproximate, norm(Norm::kLogSoftmax, "LogSoftmax"));
    t.add("Hardmax", 1, C::kExact, norm(Norm::kHardmax, "Hardmax"));
}

}  // namespace pg::ops
