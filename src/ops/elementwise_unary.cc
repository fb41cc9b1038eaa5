// Unary math ops: Abs, Neg, Exp, Log, Sqrt, Reciprocal, Floor, Ceil, Round, Sign, trigonometric
// and hyperbolic functions, Erf, IsNaN, IsInf, Not, BitwiseNot.
// Each op is a scalar function mapped over the input (in parallel for large tensors); float16 and
// bfloat16 are computed in float32 (half_via_float). IsNaN / IsInf also read the float8 types.
// float32 Exp and Erf run vec_math's vectorized exp / erf (`vectorized`).
#include <cmath>
#include <type_traits>

#include "base/float8.h"
#include "base/thread_pool.h"
#include "ops/dispatch.h"
#include "ops/gemm_kernels.h"
#include "ops/half.h"
#include "ops/int_wrap.h"
#include "ops/op_table.h"
#include "ops/tensor_util.h"
#include "ops/vec_math.h"

namespace pg::ops {

namespace {

constexpr int64_t kGrain = 16384;

// out[i] = f(x[i]) with x of type T and out of type Out.
template <typename T, typename Out, typename F>
Tensor map_unary(KernelContext& ctx, const Tensor& x, DataType out_type, F f) {
    Tensor out = Tensor::uninitialized(out_type, x.dims());
    Out* dst = reinterpret_cast<Out*>(out.mutable_bytes());
    const T* src = x.data<T>();
    auto body = [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) dst[i] = static_cast<Out>(f(src[i]));
    };
    const auto n = static_cast<int64_t>(x.numel());
    run_affine(ctx.pool(), n, kGrain, body);
    return out;
}

enum class Types { kFloat, kNumeric, kInteger };

// A same-type op over float (or numeric / integer) tensors.
template <Types types, typename Op>
MakeKernel unary(const char* name, Op op) {
    return [=](const Attrs&, int64_t) {
        return half_via_float([=](KernelContext& ctx) {
            const Tensor& x = ctx.input(0);
            auto run = [&]<typename T>() {
                ctx.set_output(0, map_unary<T, T>(ctx, x, x.dtype(), [&](T v) { return op(v); }));
            };
            if constexpr (types == Types::kFloat)
                dispatch_float(x.dtype(), name, run);
            else if constexpr (types == Types::kNumeric)
                dispatch_numeric(x.dtype(), name, run);
            else
                dispatch_integer(x.dtype(), name, run);
        });
    };
}

template <typename T>
T abs_op(T v) {
    if constexpr (std::is_unsigned_v<T>)
        return v;
    else if constexpr (std::is_floating_point_v<T>)
        return std::fabs(v);
    else
        return v < 0 ? wrap_neg(v) : v;  // the lowest value stays itself, as numpy's abs
}

template <typename T>
T sign_op(T v) {
    if constexpr (std::is_floating_point_v<T>)
        if (std::isnan(v)) return v;
    return static_cast<T>((T(0) < v) - (v < T(0)));
}

// A float input as float32 values (float8 types decoded), for the classification ops.
Tensor classify_input(const Tensor& x) {
    const MiniFloatFormat* f = nullptr;
    switch (x.dtype()) {
        case DataType::kFloat8E4M3FN:
            f = &kE4M3FN;
            break;
        case DataType::kFloat8E4M3FNUZ:
            f = &kE4M3FNUZ;
            break;
        case DataType::kFloat8E5M2:
            f = &kE5M2;
            break;
        case DataType::kFloat8E5M2FNUZ:
            f = &kE5M2FNUZ;
            break;
        default:
            return widen_half(x);
    }
    Tensor out = Tensor::zeros(DataType::kFloat32, x.dims());
    float* dst = reinterpret_cast<float*>(out.mutable_bytes());
    for (uint64_t i = 0; i < x.numel(); ++i)
        dst[i] = static_cast<float>(minifloat_to_double(x.bytes()[i], *f));
    return out;
}

// IsNaN / IsInf: float -> bool.
template <typename Pred>
KernelFn classify(const char* name, Pred pred) {
    return [=](KernelContext& ctx) {
        const Tensor x = classify_input(ctx.input(0));
        dispatch_float(x.dtype(), name, [&]<typename T>() {
            ctx.set_output(
                0, map_unary<T, uint8_t>(ctx, x, DataType::kBool, [&](T v) { return pred(v); }));
        });
    };
}

KernelFn make_isnan(const Attrs&, int64_t) {
    return classify("IsNaN", [](auto v) { return std::isnan(v); });
}

KernelFn make_isinf(const Attrs& a, int64_t) {
    const bool neg = a.get_flag("detect_negative", true),
               pos = a.get_flag("detect_positive", true);
    return classify("IsInf", [=](auto v) { return std::isinf(v) && (v > 0 ? pos : neg); });
}

KernelFn make_not(const Attrs&, int64_t) {
    return [](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        if (x.dtype() != DataType::kBool) fail("Not: input must be bool");
        ctx.set_output(0, map_unary<uint8_t, uint8_t>(ctx, x, DataType::kBool,
                                                      [](uint8_t v) { return v == 0; }));
    };
}

// An op whose float32 (and float16 / bfloat16, through it) values come from a vec_math array
// function, in parallel chunks; other types map the plain scalar `op` (the reference, which
// tests/unit/ops_vec_fastpath_test.cc diffs the fast path against).
template <Types types, typename Op>
MakeKernel vectorized(const char* name, Op op, void (*fast)(const float*, float*, int64_t)) {
    return [=](const Attrs& a, int64_t opset) {
        const KernelFn plain = unary<types>(name, op)(a, opset);
        return half_via_float([plain, fast](KernelContext& ctx) {
            const Tensor& x = ctx.input(0);
            if (x.dtype() != DataType::kFloat32) return plain(ctx);
            ctx.set_output(0, map_float32(x, fast, ctx.pool()));
        });
    };
}

template <typename T>
T nearest_even(T v) {
    return std::nearbyint(v);  // the default rounding mode: to nearest, ties to even
}

}  // namespace

void register_elementwise_unary_ops(OpTable& t) {
    using C = NumericContract;
    constexpr Types F = Types::kFloat, N = Types::kNumeric, I = Types::kInteger;
    t.add("Abs", 1, C::kExact, unary<N>("Abs", [](auto v) { return abs_op(v); }));
    t.add("Neg", 1, C::kExact, unary<N>("Neg", [](auto v) { return wrap_neg(v); }));
    t.add("Sign", 9, C::kExact, unary<N>("Sign", [](auto v) { return sign_op(v); }));
    t.add("Floor", 1, C::kExact, unary<F>("Floor", [](auto v) { return std::floor(v); }));
    t.add("Ceil", 1, C::kExact, unary<F>("Ceil", [](auto v) { return std::ceil(v); }));
    t.add("Round", 11, C::kExact, unary<F>("Round", [](auto v) { return nearest_even(v); }));
    t.add("Sqrt", 1, C::kRounding, unary<F>("Sqrt", [](auto v) { return std::sqrt(v); }));
    t.add("Reciprocal", 1, C::kRounding,
          unary<F>("Reciprocal", [](auto v) { return decltype(v)(1) / v; }));
    // float32 Exp and Erf: vec_math (below 1 ulp from the correctly rounded result).
    t.add("Exp", 1, C::kApproximate,
          vectorized<F>(
              "Exp", [](auto v) { return std::exp(v); }, vec_exp));
    t.add("Log", 1, C::kApproximate, unary<F>("Log", [](auto v) { return std::log(v); }));
    t.add("Sin", 7, C::kApproximate, unary<F>("Sin", [](auto v) { return std::sin(v); }));
    t.add("Cos", 7, C::kApproximate, unary<F>("Cos", [](auto v) { return std::cos(v); }));
    t.add("Tan", 7, C::kApproximate, unary<F>("Tan", [](auto v) { return std::tan(v); }));
    t.add("Asin", 7, C::kApproximate, unary<F>("Asin", [](auto v) { return std::asin(v); }));
    t.add("Acos", 7, C::kApproximate, unary<F>("Acos", [](auto v) { return std::acos(v); }));
    t.add("Atan", 7, C::kApproximate, unary<F>("Atan", [](auto v) { return std::atan(v); }));
    t.add("Sinh", 9, C::kApproximate, unary<F>("Sinh", [](auto v) { return std::sinh(v); }));
    t.add("Cosh", 9, C::kApproximate, unary<F>("Cosh", [](auto v) { return std::cosh(v); }));
    t.add("Asinh", 9, C::kApproximate, unary<F>("Asinh", [](auto v) { return std::asinh(v); }));
    t.add("Acosh", 9, C::kApproximate, unary<F>("Acosh", [](auto v) { return std::acosh(v); }));
    t.add("Atanh", 9, C::kApproximate, unary<F>("Atanh", [](auto v) { return std::atanh(v); }));
    t.add("Erf", 9, C::kApproximate,
          vectorized<N>(
              "Erf", [](auto v) { return static_cast<decltype(v)>(std::erf(v)); }, vec_erf));
    t.add("IsNaN", 9, C::kExact, make_isnan);
    t.add("IsInf", 10, C::kExact, make_isinf);
    t.add("Not", 1, C::kExact, make_not);
    t.add("BitwiseNot", 18, C::kExact,
          unary<I>("BitwiseNot", [](auto v) { return static_cast<decltype(v)>(~v); }));
}

}  // namespace pg::ops
