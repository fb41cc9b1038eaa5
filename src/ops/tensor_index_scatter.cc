// Scatter ops (Scatter, ScatterElements, ScatterND with reduction none/add/mul/max/min) and
// CumSum. Registered by register_tensor_index_ops(). Plain scatters are ref maps over
// {data, updates} (every element type); reductions compute numerically, float16/bfloat16 in
// float32. Updates are applied in order, so with duplicate indices the last one wins.
#include <algorithm>
#include <numeric>

#include "ir/graph.h"
#include "ops/dispatch.h"
#include "ops/half.h"
#include "ops/int_wrap.h"
#include "ops/op_table.h"
#include "ops/tensor_shape_take.h"
#include "ops/tensor_util.h"

namespace pg::ops {

std::vector<int64_t> scatter_element_offsets(const Tensor& data, const Tensor& ind, int64_t axis,
                                             const char* op);  // tensor_index.cc

namespace {

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

Reduction parse_reduction(const Attrs& a, const char* op) {
    const std::string r = a.get_string("reduction", "none");
    if (r == "none") return Reduction::kNone;
    if (r == "add") return Reduction::kAdd;
    if (r == "mul") return Reduction::kMul;
    if (r == "max") return Reduction::kMax;
    if (r == "min") return Reduction::kMin;
    fail(std::string(op) + ": unknown reduction '" + r + "'");
}

template <typename T>
T combine(Reduction r, T a, T b) {
    switch (r) {
        case Reduction::kAdd:
            return static_cast<T>(a + b);
        case Reduction::kMul:
            return static_cast<T>(a * b);
        case Reduction::kMax:
            return std::max(a, b);
        case Reduction::kMin:
            return std::min(a, b);
        default:
            return b;
    }
}

// Writes update i into data element targets[i], in order.
Tensor apply_scatter(const Tensor& data, const Tensor& upd, const std::vector<int64_t>& targets,
                     Reduction red, ThreadPool* pool, const char* op) {
    if (red == Reduction::kNone) {
        std::vector<int64_t> refs(data.numel());
        std::iota(refs.begin(), refs.end(), int64_t{0});
        for (size_t i = 0; i < targets.size(); ++i)
            refs[static_cast<size_t>(targets[i])] = src_ref(1, static_cast<int64_t>(i));
        return take({&data, &upd}, data.dims(), refs, pool, op);
    }
    if (data.dtype() != upd.dtype())
        fail(std::string(op) + ": data and updates have different types");
    Tensor out = copy_tensor(widen_half(data));
    const Tensor u = widen_half(upd);
    dispatch_numeric(out.dtype(), op, [&]<typename T>() {
        T* o = reinterpret_cast<T*>(out.mutable_bytes());
        for (size_t i = 0; i < targets.size(); ++i)
            o[targets[i]] = combine(red, o[targets[i]], u.data<T>()[i]);
    });
    return narrow_half(out, data.dtype());
}

KernelFn make_scatter_elements(const Attrs& a, int64_t, const char* op) {
    const int64_t axis = a.get_int("axis", 0);
    const Reduction red = parse_reduction(a, op);
    return [=](KernelContext& ctx) {
        const Tensor& data = ctx.input(0);
        const Tensor& ind = ctx.input(1);
        const Tensor& upd = ctx.input(2);
        if (ind.dims() != upd.dims())
            fail(std::string(op) + ": indices and updates must have the same shape");
        const auto targets = scatter_element_offsets(data, ind, axis, op);
        ctx.set_output(0, apply_scatter(data, upd, targets, red, ctx.pool(), op));
    };
}

KernelFn make_scatter_nd(const Attrs& a, int64_t) {
    const Reduction red = parse_reduction(a, "ScatterND");
    return [=](KernelContext& ctx) {
        const Tensor& data = ctx.input(0);
        const Tensor& ind = ctx.input(1);
        const Tensor& upd = ctx.input(2);
        const Dims &dd = data.dims(), &id = ind.dims();
        if (id.empty()) fail("ScatterND: indices must have rank >= 1");
        const int64_t k = id.back();
        if (k < 0 || k > data.rank())
            fail("ScatterND: last indices dim is larger than data's rank");
        Dims expect(id.begin(), id.end() - 1);
        expect.insert(expect.end(), dd.begin() + k, dd.end());
        if (upd.dims() != expect) fail("ScatterND: updates have the wrong shape");
        const Dims idx = to_int64_vector(ind, "ScatterND"), ds = strides_of(dd);
        const int64_t tuples = count_of(Dims(id.begin(), id.end() - 1));
        const int64_t slice = count_of(Dims(dd.begin() + k, dd.end()));
        std::vector<int64_t> targets(static_cast<size_t>(tuples * slice));
        for (int64_t t = 0; t < tuples; ++t) {
            int64_t base = 0;
            for (int64_t j = 0; j < k; ++j)
                base += wrap_index(idx[static_cast<size_t>(t * k + j)], dd[static_cast<size_t>(j)],
                                   "ScatterND") *
                        ds[static_cast<size_t>(j)];
            for (int64_t s = 0; s < slice; ++s)
                targets[static_cast<size_t>(t * slice + s)] = base + s;
        }
        ctx.set_output(0, apply_scatter(data, upd, targets, red, ctx.pool(), "ScatterND"));
    };
}

template <typename T>
void cumsum_line(const T* x, T* y, int64_t n, int64_t stride, bool exclusive, bool reverse) {
    T acc = T(0);
    for (int64_t j = 0; j < n; ++j) {
        const int64_t p = (reverse ? n - 1 - j : j) * stride;
        if (exclusive) {
            y[p] = acc;
            acc = wrap_add(acc, x[p]);
        } else {
            acc = wrap_add(acc, x[p]);
            y[p] = acc;
        }
    }
}

KernelFn make_cumsum(const Attrs& a, int64_t) {
    const bool exclusive = a.get_flag("exclusive", false), reverse = a.get_flag("reverse", false);
    return half_via_float([=](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        const size_t axis = static_cast<size_t>(
            normalize_axis(scalar_int64(ctx.input(1), "CumSum"), x.rank(), "CumSum"));
        const int64_t n = x.dims()[axis];
        const int64_t inner =
            count_of(Dims(x.dims().begin() + static_cast<int64_t>(axis) + 1, x.dims().end()));
        const int64_t lines = n ? static_cast<int64_t>(x.numel()) / n : 0;
        Tensor out = Tensor::zeros(x.dtype(), x.dims());
        dispatch_numeric(x.dtype(), "CumSum", [&]<typename T>() {
            const T* src = x.data<T>();
            T* dst = reinterpret_cast<T*>(out.mutable_bytes());
            parallel_ranges(ctx.pool(), lines, [&](int64_t b, int64_t e) {
                for (int64_t l = b; l < e; ++l) {
                    const int64_t off = (l / inner) * n * inner + l % inner;
                    cumsum_line(src + off, dst + off, n, inner, exclusive, reverse);
                }
            });
        });
        ctx.set_output(0, std::move(out));
    });
}

}  // namespace

void register_tensor_index_scatter_ops(OpTable& t) {
    using C = NumericContract;
    auto elements = [](const char* op) {
        return [op](const Attrs& a, int64_t opset) { return make_scatter_elements(a, opset, op); };
    };
    t.add("Scatter", 9, C::kExact, elements("Scatter"));
    t.add("ScatterElements", 11, C::kRounding, elements("ScatterElements"));
    t.add("ScatterND", 11, C::kRounding, make_scatter_nd);
    t.add("CumSum", 11, C::kApproximate, make_cumsum);
}

}  // namespace pg::ops
