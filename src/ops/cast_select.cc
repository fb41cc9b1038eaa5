// Selection ops of the cast family: Where (three-way broadcast, any element type) and the
// variadic Sum, Mean, Max, Min (all inputs broadcast together, folded left to right; float16 and
// bfloat16 computed in float32). Max and Min propagate NaN as numpy's maximum/minimum do.
#include <algorithm>
#include <array>
#include <cmath>
#include <type_traits>

#include "ops/broadcast.h"
#include "ops/dispatch.h"
#include "ops/gemm_kernels.h"
#include "ops/half.h"
#include "ops/op_table.h"

namespace pg::ops {

namespace {

// Calls f(out_index, offsets) for every element of `out`, each input read through its strides.
template <size_t N, typename F>
void for_each_broadcast(const Dims& out, const std::array<Dims, N>& strides, F&& f) {
    int64_t total = 1;
    for (int64_t d : out) total *= d;
    if (total == 0) return;
    std::array<int64_t, N> off{};
    if (out.empty()) return f(int64_t{0}, off);
    const size_t rank = out.size();
    std::vector<int64_t> idx(rank, 0);
    for (int64_t o = 0; o < total; o += out[rank - 1]) {
        std::array<int64_t, N> cur = off;
        for (int64_t k = 0; k < out[rank - 1]; ++k) {
            f(o + k, cur);
            for (size_t n = 0; n < N; ++n) cur[n] += strides[n][rank - 1];
        }
        for (size_t ax = rank - 1; ax-- > 0;) {  // odometer over the outer axes
            for (size_t n = 0; n < N; ++n) off[n] += strides[n][ax];
            if (++idx[ax] < out[ax]) break;
            for (size_t n = 0; n < N; ++n) off[n] -= strides[n][ax] * out[ax];
            idx[ax] = 0;
        }
    }
}

KernelFn make_where(const Attrs&, int64_t) {
    return [](KernelContext& ctx) {
        const Tensor& c = ctx.input(0);
        const Tensor& x = ctx.input(1);
        const Tensor& y = ctx.input(2);
        if (c.dtype() != DataType::kBool) fail("Where: condition must be bool");
        if (x.dtype() != y.dtype()) fail("Where: X and Y have different types");
        const Dims out_dims = broadcast_shape(broadcast_shape(c.dims(), x.dims()), y.dims());
        const std::array<Dims, 3> st{broadcast_strides(c.dims(), out_dims),
                                     broadcast_strides(x.dims(), out_dims),
                                     broadcast_strides(y.dims(), out_dims)};
        const uint8_t* pc = c.data<uint8_t>();
        if (x.is_string()) {
            std::vector<std::string> out(static_cast<size_t>(checked_numel(out_dims).value_or(0)));
            for_each_broadcast(out_dims, st, [&](int64_t o, const std::array<int64_t, 3>& k) {
                out[o] = pc[k[0]] ? x.strings()[k[1]] : y.strings()[k[2]];
            });
            return ctx.set_output(0, Tensor::from_strings(out_dims, std::move(out)));
        }
        if (dtype_bits(x.dtype()) < 8) unsupported("Where on " + dtype_name(x.dtype()));
        Tensor out = Tensor::zeros(x.dtype(), out_dims);
        dispatch_by_size(x.dtype(), "Where", [&]<typename T>() {
            T* dst = reinterpret_cast<T*>(out.mutable_bytes());
            const T* px = x.data<T>();
            const T* py = y.data<T>();
            for_each_broadcast(out_dims, st, [&](int64_t o, const std::array<int64_t, 3>& k) {
                dst[o] = pc[k[0]] ? px[k[1]] : py[k[2]];
            });
        });
        ctx.set_output(0, std::move(out));
    };
}

template <typename T>
T max_op(T a, T b) {
    if constexpr (std::is_floating_point_v<T>)
        if (std::isnan(a) || std::isnan(b)) return std::isnan(a) ? a : b;
    return a < b ? b : a;
}

template <typename T>
T min_op(T a, T b) {
    if constexpr (std::is_floating_point_v<T>)
        if (std::isnan(a) || std::isnan(b)) return std::isnan(a) ? a : b;
    return b < a ? b : a;
}

// op(a, b) with a and b broadcast together; equal shapes take a flat loop split over the pool.
template <typename T, typename Op>
Tensor fold_step(const Tensor& a, const Tensor& b, Op op, ThreadPool* pool) {
    if (a.dims() == b.dims()) {
        Tensor out = Tensor::uninitialized(a.dtype(), a.dims());
        T* dst = reinterpret_cast<T*>(out.mutable_bytes());
        const T* pa = a.data<T>();
        const T* pb = b.data<T>();
        const auto n = static_cast<int64_t>(a.numel());
        constexpr int64_t kChunk = 1 << 14;
        run_parallel(n > 2 * kChunk ? pool : nullptr, (n + kChunk - 1) / kChunk,
                     [&](int64_t cb, int64_t ce) {
                         for (int64_t i = cb * kChunk; i < std::min(n, ce * kChunk); ++i)
                             dst[i] = op(pa[i], pb[i]);
                     });
        return out;
    }
    const Dims out_dims = broadcast_shape(a.dims(), b.dims());
    Tensor out = Tensor::zeros(a.dtype(), out_dims);
    T* dst = reinterpret_cast<T*>(out.mutable_bytes());
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    const std::array<Dims, 2> st{broadcast_strides(a.dims(), out_dims),
                                 broadcast_strides(b.dims(), out_dims)};
    for_each_broadcast(out_dims, st, [&](int64_t o, const std::array<int64_t, 2>& k) {
        dst[o] = op(pa[k[0]], pb[k[1]]);
    });
    return out;
}

enum class Fold { kSum, kMean, kMax, kMin };

template <Fold F>
KernelFn make_variadic(const Attrs&, int64_t) {
    return half_via_float([](KernelContext& ctx) {
        const size_t n = ctx.num_inputs();
        if (n == 0) fail("variadic op needs at least one input");
        Tensor acc = ctx.input(0);
        for (size_t i = 1; i < n; ++i)
            if (ctx.input(i).dtype() != acc.dtype()) fail("inputs have different types");
        dispatch_numeric(acc.dtype(), "Sum/Mean/Max/Min", [&]<typename T>() {
            for (size_t i = 1; i < n; ++i) {
                if constexpr (F == Fold::kMax)
                    acc = fold_step<T>(acc, ctx.input(i), max_op<T>, ctx.pool());
                else if constexpr (F == Fold::kMin)
                    acc = fold_step<T>(acc, ctx.input(i), min_op<T>, ctx.pool());
                else
                    acc = fold_step<T>(
                        acc, ctx.input(i), [](T a, T b) { return static_cast<T>(a + b); },
                        ctx.pool());
            }
            if constexpr (F == Fold::kMean) {
                Tensor out = Tensor::zeros(acc.dtype(), acc.dims());
                T* dst = reinterpret_cast<T*>(out.mutable_bytes());
                for (uint64_t i = 0; i < acc.numel(); ++i)
                    dst[i] = static_cast<T>(acc.data<T>()[i] / static_cast<T>(n));
                acc = std::move(out);
            }
        });
        ctx.set_output(0, std::move(acc));
    });
}

}  // namespace

// Called from register_cast_ops (cast.cc).
void register_select_ops(OpTable& t) {
    using C = NumericContract;
    t.add("Where", 9, C::kExact, make_where);
    t.add("Sum", 1, C::kApproximate, make_variadic<Fold::kSum>);
    t.add("Mean", 1, C::kApproximate, make_variadic<Fold::kMean>);
    t.add("Max", 1, C::kExact, make_variadic<Fold::kMax>);
    t.add("Min", 1, C::kExact, make_variadic<Fold::kMin>);
}

}  // namespace pg::ops
