// Reductions: ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2,
// ReduceLogSum, ReduceLogSumExp, ReduceSumSquare, ArgMax, ArgMin here; TopK and Unique in
// reduce_sort.cc. Each Reduce op is a small struct (init, step, finish) run by one generic
// kernel; float accumulates in double, integers in their own type; float16/bfloat16 compute in
// float32. Reducing an empty set gives the op's identity (0 for sums, -inf for max, ...).
#include <cmath>
#include <limits>
#include <type_traits>

#include "ir/graph.h"
#include "ops/dispatch.h"
#include "ops/half.h"
#include "ops/int_wrap.h"
#include "ops/op_table.h"
#include "ops/tensor_shape_take.h"
#include "ops/tensor_util.h"

namespace pg::ops {

void register_reduce_sort_ops(OpTable& t);  // reduce_sort.cc

namespace {

// Accumulator: double for floats, the type itself for integers.
template <typename T>
using Wide = std::conditional_t<std::is_floating_point_v<T>, double, T>;

struct SumR {
    template <typename T>
    static Wide<T> init() {
        return 0;
    }
    template <typename A, typename T>
    static A step(A a, T v) {
        return wrap_add(a, static_cast<A>(v));
    }
    template <typename T, typename A>
    static T finish(A a, int64_t) {
        return static_cast<T>(a);
    }
};

struct MeanR : SumR {
    template <typename T, typename A>
    static T finish(A a, int64_t n) {
        return static_cast<T>(static_cast<double>(a) / static_cast<double>(n));
    }
};

struct ProdR : SumR {
    template <typename T>
    static Wide<T> init() {
        return 1;
    }
    template <typename A, typename T>
    static A step(A a, T v) {
        return wrap_mul(a, static_cast<A>(v));
    }
};

struct SumSquareR : SumR {
    template <typename A, typename T>
    static A step(A a, T v) {
        return wrap_add(a, wrap_mul(static_cast<A>(v), static_cast<A>(v)));
    }
};

struct L1R : SumR {
    template <typename A, typename T>
    static A step(A a, T v) {
        const A w = static_cast<A>(v);
        if constexpr (std::is_signed_v<T>)
            return wrap_add(a, v < 0 ? wrap_neg(w) : w);
        else
            return wrap_add(a, w);
    }
};

// Sum in double, then a function of the sum.
template <double (*Map)(double), double (*Finish)(double)>
struct DoubleSumR {
    template <typename T>
    static double init() {
        return 0;
    }
    template <typename T>
    static double step(double a, T v) {
        return a + Map(static_cast<double>(v));
    }
    template <typename T>
    static T finish(double a, int64_t) {
        return static_cast<T>(Finish(a));
    }
};
double square(double v) {
    return v * v;
}
double same(double v) {
    return v;
}
double log_of(double v) {
    return std::log(v);
}
double sqrt_of(double v) {
    return std::sqrt(v);
}

// log(sum(exp(v))) with a running maximum, so large inputs do not overflow.
struct LogSumExpR {
    struct Acc {
        double m = -std::numeric_limits<double>::infinity(), s = 0;
    };
    template <typename T>
    static Acc init() {
        return {};
    }
    template <typename T>
    static Acc step(Acc a, T v) {
        const double x = static_cast<double>(v);
        if (x > a.m) {
            a.s = a.s * std::exp(a.m - x) + 1;
            a.m = x;
        } else {
            a.s += x == a.m ? 1 : std::exp(x - a.m);
        }
        return a;
    }
    template <typename T>
    static T finish(Acc a, int64_t) {
        return static_cast<T>(a.m + std::log(a.s));
    }
};

template <bool kMax>
struct ExtremeR {
    static constexpr bool kBool = true;
    template <typename T>
    static T init() {
        if constexpr (std::numeric_limits<T>::has_infinity)
            return kMax ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
        else
            return kMax ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
    }
    template <typename A, typename T>
    static A step(A a, T v) {
        if constexpr (std::is_floating_point_v<T>)
            if (std::isnan(v)) return v;
        return (kMax ? v > a : v < a) ? v : a;
    }
    template <typename T, typename A>
    static T finish(A a, int64_t) {
        return a;
    }
};

template <typename R>
constexpr bool accepts_bool() {
    if constexpr (requires { R::kBool; })
        return R::kBool;
    else
        return false;
}

// Input offsets of each output's first element, and of the reduced elements relative to it.
struct ReducePlan {
    Dims out_dims;
    std::vector<int64_t> bases, offsets;
};

ReducePlan plan_reduce(const Dims& in, const std::vector<bool>& reduced, bool keepdims) {
    const Dims strides = strides_of(in);
    Dims kd, ks, rd, rs;
    ReducePlan p;
    for (size_t i = 0; i < in.size(); ++i) {
        (reduced[i] ? rd : kd).push_back(in[i]);
        (reduced[i] ? rs : ks).push_back(strides[i]);
        if (!reduced[i] || keepdims) p.out_dims.push_back(reduced[i] ? 1 : in[i]);
    }
    p.bases = strided_refs(kd, ks);
    p.offsets = strided_refs(rd, rs);
    return p;
}

template <typename R, typename T>
Tensor run_reduce(const Tensor& x, const ReducePlan& p, ThreadPool* pool) {
    Tensor out = Tensor::zeros(x.dtype(), p.out_dims);
    const T* src = x.data<T>();
    T* dst = reinterpret_cast<T*>(out.mutable_bytes());
    const int64_t n = static_cast<int64_t>(p.offsets.size());
    parallel_ranges(pool, static_cast<int64_t>(p.bases.size()), [&](int64_t b, int64_t e) {
        for (int64_t o = b; o < e; ++o) {
            auto acc = R::template init<T>();
            const T* s = src + p.bases[static_cast<size_t>(o)];
            for (int64_t j = 0; j < n; ++j)
                acc = R::step(acc, s[p.offsets[static_cast<size_t>(j)]]);
            dst[o] = R::template finish<T>(acc, n);
        }
    });
    return out;
}

// Which axes to reduce: the attribute before `input_since`, the optional input 1 from then on
// (with noop_with_empty_axes; an `axes` attribute is then not the op's and is ignored).
template <typename R>
MakeKernel reduction(const char* name, int64_t input_since) {
    return [=](const Attrs& a, int64_t opset) -> KernelFn {
        const bool by_input = opset >= input_since;
        const bool keep = a.get_flag("keepdims", true),
                   noop = by_input && a.get_flag("noop_with_empty_axes", false);
        const Dims attr = by_input ? Dims{} : a.get_ints("axes");
        return half_via_float([=](KernelContext& ctx) {
            const Tensor& x = ctx.input(0);
            const Dims axes = opset < input_since ? attr
                              : ctx.has_input(1)  ? to_int64_vector(ctx.input(1), name)
                                                  : Dims{};
            // noop_with_empty_axes: a reduction over no axis, each element alone (|x| for
            // ReduceL1, x * x for ReduceSumSquare, log x for ReduceLogSum; x for the others), as
            // ONNX's current reference implementation and ONNX Runtime.
            std::vector<bool> red(x.dims().size(), axes.empty() && !noop);
            for (int64_t ax : axes)
                red[static_cast<size_t>(normalize_axis(ax, x.rank(), name))] = true;
            const ReducePlan p = plan_reduce(x.dims(), red, keep);
            if (x.dtype() == DataType::kBool && !accepts_bool<R>())
                unsupported_type(name, x.dtype());
            dispatch_numeric_bool(x.dtype(), name, [&]<typename T>() {
                if constexpr (!std::is_same_v<T, bool> || accepts_bool<R>())
                    ctx.set_output(0, run_reduce<R, T>(x, p, ctx.pool()));
            });
        });
    };
}

template <bool kMax>
MakeKernel arg_reduction(const char* name) {
    return [=](const Attrs& a, int64_t opset) -> KernelFn {
        const int64_t axis_attr = a.get_int("axis", 0);
        const bool keep = a.get_flag("keepdims", true),
                   last = opset >= 12 && a.get_flag("select_last_index", false);
        return half_via_float([=](KernelContext& ctx) {
            const Tensor& x = ctx.input(0);
            const size_t axis = static_cast<size_t>(normalize_axis(axis_attr, x.rank(), name));
            const int64_t n = x.dims()[axis];
            if (n == 0) fail(std::string(name) + ": cannot reduce an empty axis");
            Dims out = x.dims();
            if (keep)
                out[axis] = 1;
            else
                out.erase(out.begin() + static_cast<int64_t>(axis));
            const int64_t inner =
                count_of(Dims(x.dims().begin() + static_cast<int64_t>(axis) + 1, x.dims().end()));
            std::vector<int64_t> res(static_cast<size_t>(count_of(out)));
            dispatch_numeric(x.dtype(), name, [&]<typename T>() {
                for (int64_t l = 0; l < static_cast<int64_t>(res.size()); ++l) {
                    const T* s = x.data<T>() + (l / inner) * n * inner + l % inner;
                    int64_t bi = 0;
                    for (int64_t j = 1; j < n; ++j) {
                        const T v = s[j * inner], best = s[bi * inner];
                        if ((kMax ? v > best : v < best) || (last && v == best)) bi = j;
                    }
                    res[static_cast<size_t>(l)] = bi;
                }
            });
            ctx.set_output(0, Tensor::from_values(DataType::kInt64, out, res));
        });
    };
}

}  // namespace

void register_reduce_ops(OpTable& t) {
    using C = NumericContract;
    t.add("ReduceSum", 1, C::kApproximate, reduction<SumR>("ReduceSum", 13));
    t.add("ReduceMean", 1, C::kApproximate, reduction<MeanR>("ReduceMean", 18));
    t.add("ReduceMax", 1, C::kExact, reduction<ExtremeR<true>>("ReduceMax", 18));
    t.add("ReduceMin", 1, C::kExact, reduction<ExtremeR<false>>("ReduceMin", 18));
    t.add("ReduceProd", 1, C::kApproximate, reduction<ProdR>("ReduceProd", 18));
    t.add("ReduceL1", 1, C::kApproximate, reduction<L1R>("ReduceL1", 18));
    t.add("ReduceL2", 1, C::kApproximate, reduction<DoubleSumR<square, sqrt_of>>("ReduceL2", 18));
    t.add("ReduceLogSum", 1, C::kApproximate,
          reduction<DoubleSumR<same, log_of>>("ReduceLogSum", 18));
    t.add("ReduceLogSumExp", 1, C::kApproximate, reduction<LogSumExpR>("ReduceLogSumExp", 18));
    t.add("ReduceSumSquare", 1, C::kApproximate, reduction<SumSquareR>("ReduceSumSquare", 18));
    t.add("ArgMax", 1, C::kExact, arg_reduction<true>("ArgMax"));
    t.add("ArgMin", 1, C::kExact, arg_reduction<false>("ArgMin"));
    register_reduce_sort_ops(t);
}

}  // namespace pg::ops
