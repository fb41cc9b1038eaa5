// Sorting reductions: TopK (ties go to the lower index) and Unique (all four outputs, with or
// without an axis). Registered by register_reduce_ops(). NaN sorts above every number.
#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

#include "ir/graph.h"
#include "ops/dispatch.h"
#include "ops/half.h"
#include "ops/op_table.h"
#include "ops/tensor_shape_take.h"
#include "ops/tensor_util.h"

namespace pg::ops {

namespace {

// -1, 0, 1 comparing a and b; NaN is larger than numbers and equal to NaN.
template <typename T>
int compare3(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(a) || std::isnan(b)) return std::isnan(a) - std::isnan(b);
    }
    return a < b ? -1 : (b < a ? 1 : 0);
}

KernelFn make_topk(const Attrs& a, int64_t opset) {
    const int64_t axis_attr = a.get_int("axis", -1), k_attr = a.get_int("k", -1);
    const bool largest = a.get_flag("largest", true);
    // sorted = 0 leaves the order to the runtime: this kernel sorts either way (the flag is
    // still checked to be 0 or 1).
    a.get_flag("sorted", true);
    return half_via_float([=](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        const size_t axis = static_cast<size_t>(normalize_axis(axis_attr, x.rank(), "TopK"));
        const int64_t n = x.dims()[axis];
        const int64_t k = opset < 10 ? k_attr : scalar_int64(ctx.input(1), "TopK");
        if (k < 0 || k > n)
            fail("TopK: k = " + std::to_string(k) + " is out of range for an axis of " +
                 std::to_string(n));
        Dims out = x.dims();
        out[axis] = k;
        const int64_t inner =
            count_of(Dims(x.dims().begin() + static_cast<int64_t>(axis) + 1, x.dims().end()));
        const int64_t lines = count_of(out) / std::max<int64_t>(k, 1) * (k > 0);
        Tensor values = Tensor::zeros(x.dtype(), out);
        std::vector<int64_t> indices(static_cast<size_t>(count_of(out)));
        dispatch_numeric(x.dtype(), "TopK", [&]<typename T>() {
            T* vo = reinterpret_cast<T*>(values.mutable_bytes());
            parallel_ranges(ctx.pool(), lines, [&](int64_t b, int64_t e) {
                std::vector<int64_t> order(static_cast<size_t>(n));
                for (int64_t l = b; l < e; ++l) {
                    const int64_t base = (l / inner) * n * inner + l % inner;
                    const T* s = x.data<T>() + base;
                    std::iota(order.begin(), order.end(), int64_t{0});
                    std::partial_sort(order.begin(), order.begin() + k, order.end(),
                                      [&](int64_t i, int64_t j) {
                                          const int c = compare3(s[i * inner], s[j * inner]);
                                          return c != 0 ? (largest ? c > 0 : c < 0) : i < j;
                                      });
                    const int64_t ob = (l / inner) * k * inner + l % inner;
                    for (int64_t j = 0; j < k; ++j) {
                        vo[ob + j * inner] = s[order[static_cast<size_t>(j)] * inner];
                        indices[static_cast<size_t>(ob + j * inner)] =
                            order[static_cast<size_t>(j)];
                    }
                }
            });
        });
        ctx.set_output(0, std::move(values));
        ctx.set_output(1, Tensor::from_values(DataType::kInt64, out, indices));
    });
}

// Three-way comparison of elements at two offsets of t, for any element type.
std::function<int(int64_t, int64_t)> element_comparator(const Tensor& t) {
    if (t.is_string())
        return [&t](int64_t a, int64_t b) {
            return t.strings()[static_cast<size_t>(a)].compare(t.strings()[static_cast<size_t>(b)]);
        };
    if (!dtype_is_integer(t.dtype()) && t.dtype() != DataType::kFloat32 &&
        t.dtype() != DataType::kFloat64)
        return [&t](int64_t a, int64_t b) {
            return compare3(t.element_as_double(static_cast<uint64_t>(a)),
                            t.element_as_double(static_cast<uint64_t>(b)));
        };
    std::function<int(int64_t, int64_t)> f;
    dispatch_numeric(t.dtype(), "Unique", [&]<typename T>() {
        const T* p = t.data<T>();
        f = [p](int64_t a, int64_t b) { return compare3(p[a], p[b]); };
    });
    return f;
}

struct UniqueGroups {
    std::vector<int64_t> first, inverse, counts;  // per unique slice; per input slice
};

// Groups the n slices of x (outer x n x inner) into equal ones, sorted or by first occurrence.
UniqueGroups unique_groups(const Tensor& x, int64_t outer, int64_t n, int64_t inner, bool sorted) {
    const auto cmp = element_comparator(x);
    auto slice_cmp = [&](int64_t s, int64_t t) {
        for (int64_t o = 0; o < outer; ++o)
            for (int64_t i = 0; i < inner; ++i)
                if (int c = cmp((o * n + s) * inner + i, (o * n + t) * inner + i)) return c;
        return 0;
    };
    std::vector<int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), int64_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t s, int64_t t) { return slice_cmp(s, t) < 0; });
    UniqueGroups g;
    std::vector<int64_t> group_of(static_cast<size_t>(n));
    for (size_t j = 0; j < order.size(); ++j) {
        if (j == 0 || slice_cmp(order[j - 1], order[j]) != 0) g.first.push_back(order[j]);
        group_of[static_cast<size_t>(order[j])] = static_cast<int64_t>(g.first.size()) - 1;
    }
    std::vector<int64_t> rank(g.first.size());
    std::iota(rank.begin(), rank.end(), int64_t{0});
    if (!sorted) {
        std::vector<int64_t> by_first(g.first.size());
        std::iota(by_first.begin(), by_first.end(), int64_t{0});
        std::sort(by_first.begin(), by_first.end(), [&](int64_t a, int64_t b) {
            return g.first[static_cast<size_t>(a)] < g.first[static_cast<size_t>(b)];
        });
        for (size_t r = 0; r < by_first.size(); ++r)
            rank[static_cast<size_t>(by_first[r])] = static_cast<int64_t>(r);
        std::vector<int64_t> first(g.first.size());
        for (size_t u = 0; u < first.size(); ++u) first[static_cast<size_t>(rank[u])] = g.first[u];
        g.first = first;
    }
    g.counts.assign(g.first.size(), 0);
    for (int64_t s = 0; s < n; ++s) {
        g.inverse.push_back(rank[static_cast<size_t>(group_of[static_cast<size_t>(s)])]);
        ++g.counts[static_cast<size_t>(g.inverse.back())];
    }
    return g;
}

KernelFn make_unique(const Attrs& a, int64_t) {
    const bool sorted = a.get_flag("sorted", true), has_axis = a.has("axis");
    const int64_t axis_attr = a.get_int("axis", 0);
    return [=](KernelContext& ctx) {
        const Tensor& x0 = ctx.input(0);
        const Tensor x = has_axis ? x0 : with_dims(x0, {static_cast<int64_t>(x0.numel())});
        const size_t axis = static_cast<size_t>(normalize_axis(axis_attr, x.rank(), "Unique"));
        const Dims& d = x.dims();
        const int64_t n = d[axis],
                      outer = count_of(Dims(d.begin(), d.begin() + static_cast<int64_t>(axis)));
        const int64_t inner = count_of(Dims(d.begin() + static_cast<int64_t>(axis) + 1, d.end()));
        const UniqueGroups g = unique_groups(x, outer, n, inner, sorted);
        const int64_t u = static_cast<int64_t>(g.first.size());
        Dims out = d;
        out[axis] = u;
        std::vector<int64_t> refs;
        for (int64_t o = 0; o < outer; ++o)
            for (int64_t f : g.first)
                for (int64_t i = 0; i < inner; ++i) refs.push_back((o * n + f) * inner + i);
        ctx.set_output(0, take1(x, out, refs, ctx.pool(), "Unique"));
        ctx.set_output(1, Tensor::from_values(DataType::kInt64, {u}, g.first));
        ctx.set_output(2, Tensor::from_values(DataType::kInt64, {n}, g.inverse));
        ctx.set_output(3, Tensor::from_values(DataType::kInt64, {u}, g.counts));
    };
}

}  // namespace

void register_reduce_sort_ops(OpTable& t) {
    using C = NumericContract;
    t.add("TopK", 1, C::kExact, make_topk);
    t.add("Unique", 11, C::kExact, make_unique);
}

}  // namespace pg::ops
