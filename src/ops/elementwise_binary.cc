// Binary elementwise ops with broadcasting: arithmetic, comparisons, logical and bitwise ops.
// Each op is a scalar function applied over runs of the merged broadcast shape (broadcast_runs,
// whose iteration tests diff against for_each_broadcast2); float16/bfloat16 inputs are computed
// in float32 (half_via_float).
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "base/thread_pool.h"

#include "ir/graph.h"
#include "ops/broadcast.h"
#include "ops/dispatch.h"
#include "ops/gemm_kernels.h"
#include "ops/half.h"
#include "ops/int_wrap.h"
#include "ops/legacy_broadcast.h"
#include "ops/op_table.h"

namespace pg::ops {

namespace {

constexpr int64_t kGrain = 16384;

// dst[k] = op(a[k * da], b[k * db]) for k < n, with the common steps (0 or 1) as their own loops
// so the compiler vectorizes them.
template <typename T, typename Out, typename Op>
void binary_run(const T* a, int64_t da, const T* b, int64_t db, Out* dst, int64_t n, Op& op) {
    if (da == 1 && db == 1) {
        for (int64_t k = 0; k < n; ++k) dst[k] = static_cast<Out>(op(a[k], b[k]));
    } else if (da == 1 && db == 0) {
        const T y = *b;
        for (int64_t k = 0; k < n; ++k) dst[k] = static_cast<Out>(op(a[k], y));
    } else if (da == 0 && db == 1) {
        const T x = *a;
        for (int64_t k = 0; k < n; ++k) dst[k] = static_cast<Out>(op(x, b[k]));
    } else {
        for (int64_t k = 0; k < n; ++k) dst[k] = static_cast<Out>(op(a[k * da], b[k * db]));
    }
}

// Applies op(a, b) -> Out over broadcast inputs of type T: runs of the merged innermost axis
// (broadcast_runs), split over the pool for large outputs.
template <typename T, typename Out, typename Op>
Tensor apply_binary(const Tensor& a, const Tensor& b, DataType out_type, Op op,
                    ThreadPool* pool = nullptr) {
    const Dims out_dims = broadcast_shape(a.dims(), b.dims());
    Tensor out = Tensor::uninitialized(out_type, out_dims);
    Out* dst = reinterpret_cast<Out*>(out.mutable_bytes());
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    const BroadcastRuns r = broadcast_runs(out_dims, broadcast_strides(a.dims(), out_dims),
                                           broadcast_strides(b.dims(), out_dims));
    auto body = [&](int64_t begin, int64_t end) {
        for_each_run(r, begin, end, [&](int64_t o, int64_t ia, int64_t ib) {
            binary_run(pa + ia, r.step_a, pb + ib, r.step_b, dst + o, r.inner, op);
        });
    };
    if (pool && pool->num_threads() > 1 && r.runs > 1 && r.runs * r.inner > 2 * kGrain)
        run_affine(pool, r.runs, std::max<int64_t>(1, kGrain / r.inner), body);
    else
        body(0, r.runs);
    return out;
}

void check_same_type(const Tensor& a, const Tensor& b, const char* op) {
    if (a.dtype() != b.dtype())
        fail(std::string(op) + ": inputs have different types (" + dtype_name(a.dtype()) + " and " +
             dtype_name(b.dtype()) + ")");
}

// An arithmetic op: same type in and out.
template <typename Op>
MakeKernel arithmetic(const char* name, Op op) {
    return [name, op](const Attrs&, int64_t) {
        return half_via_float([name, op](KernelContext& ctx) {
            const Tensor& a = ctx.input(0);
            const Tensor& b = ctx.input(1);
            check_same_type(a, b, name);
            dispatch_numeric(a.dtype(), name, [&]<typename T>() {
                ctx.set_output(
                    0, apply_binary<T, T>(
                           a, b, a.dtype(), [&](T x, T y) { return op(x, y); }, ctx.pool()));
            });
        });
    };
}

// Equal on string tensors (opset 19).
Tensor string_equal(const Tensor& a, const Tensor& b) {
    const Dims out_dims = broadcast_shape(a.dims(), b.dims());
    Tensor out = Tensor::zeros(DataType::kBool, out_dims);
    uint8_t* dst = out.mutable_bytes();
    for_each_broadcast2(
        out_dims, broadcast_strides(a.dims(), out_dims), broadcast_strides(b.dims(), out_dims),
        [&](int64_t o, int64_t ia, int64_t ib) {
            dst[o] = a.strings()[static_cast<size_t>(ia)] == b.strings()[static_cast<size_t>(ib)];
        });
    return out;
}

// A comparison: numeric inputs, bool output.
template <typename Op>
MakeKernel comparison(const char* name, Op op) {
    return [name, op](const Attrs&, int64_t) {
        return half_via_float([name, op](KernelContext& ctx) {
            const Tensor& a = ctx.input(0);
            const Tensor& b = ctx.input(1);
            check_same_type(a, b, name);
            if (a.is_string() && std::string(name) == "Equal")
                return ctx.set_output(0, string_equal(a, b));
            dispatch_numeric_bool(a.dtype(), name, [&]<typename T>() {
                ctx.set_output(
                    0, apply_binary<T, uint8_t>(
                           a, b, DataType::kBool, [&](T x, T y) { return op(x, y); }, ctx.pool()));
            });
        });
    };
}

// A logical op on bool tensors.
template <typename Op>
MakeKernel logical(const char* name, Op op) {
    return [name, op](const Attrs&, int64_t) {
        return KernelFn([name, op](KernelContext& ctx) {
            const Tensor& a = ctx.input(0);
            const Tensor& b = ctx.input(1);
            if (a.dtype() != DataType::kBool || b.dtype() != DataType::kBool)
                fail(std::string(name) + ": inputs must be bool");
            ctx.set_output(
                0, apply_binary<uint8_t, uint8_t>(a, b, DataType::kBool, [&](uint8_t x, uint8_t y) {
                    return op(x != 0, y != 0);
                }));
        });
    };
}

// A bitwise op on integer tensors.
template <typename Op>
MakeKernel bitwise(const char* name, Op op) {
    return [name, op](const Attrs&, int64_t) {
        return KernelFn([name, op](KernelContext& ctx) {
            const Tensor& a = ctx.input(0);
            const Tensor& b = ctx.input(1);
            check_same_type(a, b, name);
            dispatch_integer(a.dtype(), name, [&]<typename T>() {
                ctx.set_output(
                    0, apply_binary<T, T>(a, b, a.dtype(), [&](T x, T y) { return op(x, y); }));
            });
        });
    };
}

template <typename T>
T div_op(T x, T y) {
    if constexpr (std::is_integral_v<T>) {
        if (y == 0) fail("Div: integer division by zero");
        if constexpr (std::is_signed_v<T>)  // lowest / -1 traps (SIGFPE); numpy wraps
            if (y == -1) return wrap_neg(x);
        return static_cast<T>(x / y);
    } else {
        return x / y;
    }
}

// Pow allows different base and exponent types (opset >= 12); the result has the base's type.
KernelFn make_pow(const Attrs&, int64_t) {
    return half_via_float([](KernelContext& ctx) {
        const Tensor& a = ctx.input(0);
        const Tensor& b = ctx.input(1);
        dispatch_numeric(a.dtype(), "Pow", [&]<typename T>() {
            dispatch_numeric(b.dtype(), "Pow", [&]<typename E>() {
                const Dims out_dims = broadcast_shape(a.dims(), b.dims());
                Tensor out = Tensor::uninitialized(a.dtype(), out_dims);
                T* dst = reinterpret_cast<T*>(out.mutable_bytes());
                const T* pa = a.data<T>();
                const E* pb = b.data<E>();
                for_each_broadcast2(
                    out_dims, broadcast_strides(a.dims(), out_dims),
                    broadcast_strides(b.dims(), out_dims), [&](int64_t o, int64_t ia, int64_t ib) {
                        dst[o] = static_cast<T>(
                            std::pow(static_cast<double>(pa[ia]), static_cast<double>(pb[ib])));
                    });
                ctx.set_output(0, std::move(out));
            });
        });
    });
}

// Mod: fmod=0 is Python's integer modulo (sign of the divisor); fmod=1 is C's fmod.
KernelFn make_mod(const Attrs& attrs, int64_t) {
    const bool use_fmod = attrs.get_flag("fmod", false);
    return half_via_float([use_fmod](KernelContext& ctx) {
        const Tensor& a = ctx.input(0);
        const Tensor& b = ctx.input(1);
        check_same_type(a, b, "Mod");
        dispatch_numeric(a.dtype(), "Mod", [&]<typename T>() {
            ctx.set_output(0, apply_binary<T, T>(a, b, a.dtype(), [&](T x, T y) -> T {
                               if constexpr (std::is_integral_v<T>) {
                                   if (y == 0) fail("Mod: integer division by zero");
                                   if constexpr (std::is_signed_v<T>)
                                       if (y == -1) return T{0};  // lowest % -1 traps
                                   T r = static_cast<T>(x % y);
                                   if constexpr (std::is_signed_v<T>)
                                       if (!use_fmod && r != 0 && ((r < 0) != (y < 0)))
                                           r = static_cast<T>(r + y);
                                   return r;
                               } else {
                                   T r = std::fmod(x, y);
                                   if (!use_fmod && r != 0 && ((r < 0) != (y < 0))) r += y;
                                   return r;
                               }
                           }));
        });
    });
}

KernelFn make_bitshift(const Attrs& attrs, int64_t) {
    const bool left = attrs.get_string("direction", "") == "LEFT";
    return [left](KernelContext& ctx) {
        const Tensor& a = ctx.input(0);
        const Tensor& b = ctx.input(1);
        check_same_type(a, b, "BitShift");
        dispatch_integer(a.dtype(), "BitShift", [&]<typename T>() {
            ctx.set_output(0, apply_binary<T, T>(a, b, a.dtype(), [&](T x, T y) -> T {
                               if (static_cast<uint64_t>(y) >= sizeof(T) * 8) return 0;
                               return left ? static_cast<T>(x << y) : static_cast<T>(x >> y);
                           }));
        });
    };
}

}  // namespace

void register_elementwise_binary_ops(OpTable& t) {
    using C = NumericContract;
    t.add("Add", 1, C::kRounding,
          with_legacy_broadcast("Add",
                                arithmetic("Add", [](auto x, auto y) { return wrap_add(x, y); })));
    t.add("Sub", 1, C::kRounding,
          with_legacy_broadcast("Sub",
                                arithmetic("Sub", [](auto x, auto y) { return wrap_sub(x, y); })));
    t.add("Mul", 1, C::kRounding,
          with_legacy_broadcast("Mul",
                                arithmetic("Mul", [](auto x, auto y) { return wrap_mul(x, y); })));
    t.add("Div", 1, C::kRounding,
          with_legacy_broadcast("Div",
                                arithmetic("Div", [](auto x, auto y) { return div_op(x, y); })));
    t.add("Pow", 1, C::kApproximate, with_legacy_broadcast("Pow", make_pow));
    t.add("Mod", 10, C::kRounding, make_mod);
    t.add("BitShift", 11, C::kExact, make_bitshift);
    t.add(
        "Equal", 1, C::kExact,
        with_legacy_broadcast("Equal", comparison("Equal", [](auto x, auto y) { return x == y; })));
    t.add("Less", 1, C::kExact,
          with_legacy_broadcast("Less", comparison("Less", [](auto x, auto y) { return x < y; })));
    t.add("Greater", 1, C::kExact,
          with_legacy_broadcast("Greater",
                                comparison("Greater", [](auto x, auto y) { return x > y; })));
    t.add("LessOrEqual", 12, C::kExact,
          comparison("LessOrEqual", [](auto x, auto y) { return x <= y; }));
    t.add("GreaterOrEqual", 12, C::kExact,
          comparison("GreaterOrEqual", [](auto x, auto y) { return x >= y; }));
    t.add("And", 1, C::kExact,
          with_legacy_broadcast("And", logical("And", [](bool x, bool y) { return x && y; })));
    t.add("Or", 1, C::kExact,
          with_legacy_broadcast("Or", logical("Or", [](bool x, bool y) { return x || y; })));
    t.add("Xor", 1, C::kExact,
          with_legacy_broadcast("Xor", logical("Xor", [](bool x, bool y) { return x != y; })));
    t.add("BitwiseAnd", 18, C::kExact, bitwise("BitwiseAnd", [](auto x, auto y) { return x & y; }));
    t.add("BitwiseOr", 18, C::kExact, bitwise("BitwiseOr", [](auto x, auto y) { return x | y; }));
    t.add("BitwiseXor", 18, C::kExact, bitwise("BitwiseXor", [](auto x, auto y) { return x ^ y; }));
}

}  // namespace pg::ops
