// Indexing ops: Slice, Gather, GatherElements, GatherND, OneHot, NonZero, Compress,
// ReverseSequence here; Scatter, ScatterElements, ScatterND and CumSum in
// tensor_index_scatter.cc. Gathers build a ref map (tensor_shape_take.h), so every element type
// works. Indices are int32 or int64, negative ones wrap, out-of-range ones are kInvalidInput.
#include <algorithm>

#include "ir/graph.h"
#include "ops/dispatch.h"
#include "ops/op_table.h"
#include "ops/tensor_shape_take.h"
#include "ops/tensor_util.h"

namespace pg::ops {

void register_tensor_index_scatter_ops(OpTable& t);  // tensor_index_scatter.cc

namespace {

struct SliceArgs {
    Dims starts, ends, axes, steps;
};

SliceArgs slice_args(KernelContext& ctx, const SliceArgs& attr, int64_t opset) {
    SliceArgs s = attr;
    if (opset >= 10) {
        s.starts = to_int64_vector(ctx.input(1), "Slice");
        s.ends = to_int64_vector(ctx.input(2), "Slice");
        s.axes = ctx.has_input(3) ? to_int64_vector(ctx.input(3), "Slice") : Dims{};
        s.steps = ctx.has_input(4) ? to_int64_vector(ctx.input(4), "Slice") : Dims{};
    }
    if (s.axes.empty())
        for (size_t i = 0; i < s.starts.size(); ++i) s.axes.push_back(static_cast<int64_t>(i));
    if (s.steps.empty()) s.steps.assign(s.starts.size(), 1);
    if (s.ends.size() != s.starts.size() || s.axes.size() != s.starts.size() ||
        s.steps.size() != s.starts.size())
        fail("Slice: starts, ends, axes and steps must have the same length");
    return s;
}

KernelFn make_slice(const Attrs& a, int64_t opset) {
    const SliceArgs attr{a.get_ints("starts"), a.get_ints("ends"), a.get_ints("axes"), {}};
    return [=](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        const SliceArgs s = slice_args(ctx, attr, opset);
        const Dims in_strides = strides_of(x.dims());
        Dims out = x.dims(), strides = in_strides;
        std::vector<bool> seen(out.size(), false);
        int64_t base = 0;
        for (size_t k = 0; k < s.axes.size(); ++k) {
            const size_t ax = static_cast<size_t>(normalize_axis(s.axes[k], x.rank(), "Slice"));
            if (seen[ax]) fail("Slice: axis " + std::to_string(s.axes[k]) + " is repeated");
            seen[ax] = true;
            const int64_t n = x.dims()[ax];
            // |step| beyond the axis selects one element: clamp it so no arithmetic overflows.
            const int64_t step =
                std::clamp(s.steps[k], -std::max<int64_t>(n, 1), std::max<int64_t>(n, 1));
            if (s.steps[k] == 0) fail("Slice: step is zero");
            int64_t b = s.starts[k] < 0 ? s.starts[k] + n : s.starts[k];
            int64_t e = s.ends[k] < 0 ? s.ends[k] + n : s.ends[k];
            const int64_t lo = step > 0 ? 0 : -1, hi = step > 0 ? n : n - 1;
            b = std::clamp(b, lo, hi);
            e = std::clamp(e, lo, hi);
            const int64_t len = step > 0 ? (e > b ? (e - b + step - 1) / step : 0)
                                         : (b > e ? (b - e - step - 1) / -step : 0);
            out[ax] = len;
            if (len > 0) base += b * in_strides[ax];
            strides[ax] = in_strides[ax] * step;
        }
        ctx.set_output(0, take1(x, out, strided_refs(out, strides, base), ctx.pool(), "Slice"));
    };
}

KernelFn make_gather(const Attrs& a, int64_t) {
    const int64_t axis_attr = a.get_int("axis", 0);
    return [=](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        const Tensor& ind = ctx.input(1);
        const size_t axis = static_cast<size_t>(normalize_axis(axis_attr, x.rank(), "Gather"));
        const int64_t n = x.dims()[axis];
        Dims idx = to_int64_vector(ind, "Gather");
        for (int64_t& i : idx) i = wrap_index(i, n, "Gather");
        const Dims& d = x.dims();
        Dims out(d.begin(), d.begin() + static_cast<int64_t>(axis));
        out.insert(out.end(), ind.dims().begin(), ind.dims().end());
        out.insert(out.end(), d.begin() + static_cast<int64_t>(axis) + 1, d.end());
        const int64_t outer = count_of(Dims(d.begin(), d.begin() + static_cast<int64_t>(axis)));
        const int64_t inner = count_of(Dims(d.begin() + static_cast<int64_t>(axis) + 1, d.end()));
        const int64_t m = static_cast<int64_t>(idx.size());
        std::vector<int64_t> refs = ref_table(out);
        for (int64_t o = 0; o < outer; ++o)
            for (int64_t j = 0; j < m; ++j)
                for (int64_t k = 0; k < inner; ++k)
                    refs[static_cast<size_t>((o * m + j) * inner + k)] =
                        (o * n + idx[static_cast<size_t>(j)]) * inner + k;
        ctx.set_output(0, take1(x, out, refs, ctx.pool(), "Gather"));
    };
}

// Offsets into `data` for each element of `ind` along `axis` (GatherElements, ScatterElements).
std::vector<int64_t> element_offsets(const Tensor& data, const Tensor& ind, int64_t axis_attr,
                                     const char* op) {
    if (ind.rank() != data.rank()) fail(std::string(op) + ": indices must have the rank of data");
    const size_t axis = static_cast<size_t>(normalize_axis(axis_attr, data.rank(), op));
    for (size_t d = 0; d < data.dims().size(); ++d)
        if (d != axis && ind.dims()[d] > data.dims()[d])
            fail(std::string(op) + ": indices dim " + std::to_string(d) + " is larger than data's");
    const Dims idx = to_int64_vector(ind, op);
    const Dims strides = strides_of(data.dims());
    std::vector<int64_t> offs(idx.size());
    for_each_coord(ind.dims(), [&](int64_t i, const Dims& c) {
        int64_t off = 0;
        for (size_t d = 0; d < c.size(); ++d)
            off += (d == axis ? wrap_index(idx[static_cast<size_t>(i)], data.dims()[axis], op)
                              : c[d]) *
                   strides[d];
        offs[static_cast<size_t>(i)] = off;
    });
    return offs;
}

KernelFn make_gather_elements(const Attrs& a, int64_t) {
    const int64_t axis = a.get_int("axis", 0);
    return [=](KernelContext& ctx) {
        const Tensor& ind = ctx.input(1);
        const auto offs = element_offsets(ctx.input(0), ind, axis, "GatherElements");
        ctx.set_output(0, take1(ctx.input(0), ind.dims(), offs, ctx.pool(), "GatherElements"));
    };
}

KernelFn make_gather_nd(const Attrs& a, int64_t) {
    const int64_t b = a.get_int("batch_dims", 0);
    return [=](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        const Tensor& ind = ctx.input(1);
        const Dims &xd = x.dims(), &id = ind.dims();
        const int64_t q = ind.rank(), r = x.rank();
        if (q < 1 || b < 0 || b >= std::min(q, r)) fail("GatherND: invalid batch_dims or ranks");
        const int64_t k = id.back();
        if (k < 0 || k > r - b) fail("GatherND: last indices dim is larger than data's rank");
        for (int64_t i = 0; i < b; ++i)
            if (id[static_cast<size_t>(i)] != xd[static_cast<size_t>(i)])
                fail("GatherND: batch dims differ");
        Dims out(id.begin(), id.end() - 1);
        out.insert(out.end(), xd.begin() + b + k, xd.end());
        const Dims idx = to_int64_vector(ind, "GatherND"), xs = strides_of(xd);
        const int64_t tuples = count_of(Dims(id.begin(), id.end() - 1));
        const int64_t per_batch = count_of(Dims(id.begin() + b, id.end() - 1));
        const int64_t slice = count_of(Dims(xd.begin() + b + k, xd.end()));
        const int64_t batch_stride = count_of(Dims(xd.begin() + b, xd.end()));
        std::vector<int64_t> refs = ref_table(out);
        for (int64_t t = 0; t < tuples; ++t) {
            int64_t base = (t / per_batch) * batch_stride;
            for (int64_t j = 0; j < k; ++j)
                base += wrap_index(idx[static_cast<size_t>(t * k + j)],
                                   xd[static_cast<size_t>(b + j)], "GatherND") *
                        xs[static_cast<size_t>(b + j)];
            for (int64_t s = 0; s < slice; ++s) refs[static_cast<size_t>(t * slice + s)] = base + s;
        }
        ctx.set_output(0, take1(x, out, refs, ctx.pool(), "GatherND"));
    };
}

// Types element_as_double reads (others would read as NaN).
void check_numeric_view(const Tensor& t, const char* op) {
    const DataType dt = t.dtype();
    if (dt != DataType::kBool && dt != DataType::kFloat16 && dt != DataType::kBFloat16 &&
        dt != DataType::kFloat32 && dt != DataType::kFloat64 &&
        !(dtype_is_integer(dt) && dtype_bits(dt) >= 8))
        unsupported_type(op, dt);
}

// Out-of-range indices give all-off rows (ONNX's OneHot rule), so they are not errors here.
KernelFn make_one_hot(const Attrs& a, int64_t) {
    const int64_t axis_attr = a.get_int("axis", -1);
    return [=](KernelContext& ctx) {
        const Tensor& ind = ctx.input(0);
        const Tensor& values = ctx.input(2);
        check_numeric_view(ind, "OneHot");
        const int64_t depth = scalar_int64(ctx.input(1), "OneHot");
        if (depth < 1) fail("OneHot: depth must be positive");
        if (values.numel() != 2) fail("OneHot: values must hold [off_value, on_value]");
        const int64_t axis = normalize_axis(axis_attr, ind.rank() + 1, "OneHot");
        Dims out = ind.dims();
        out.insert(out.begin() + axis, depth);
        const int64_t outer = count_of(Dims(ind.dims().begin(), ind.dims().begin() + axis));
        const int64_t inner = count_of(Dims(ind.dims().begin() + axis, ind.dims().end()));
        std::vector<int64_t> refs = ref_table(out);
        for (int64_t o = 0; o < outer; ++o)
            for (int64_t i = 0; i < inner; ++i) {
                int64_t v = static_cast<int64_t>(
                    ind.element_as_double(static_cast<uint64_t>(o * inner + i)));
                if (v < 0) v += depth;
                for (int64_t d = 0; d < depth; ++d)
                    refs[static_cast<size_t>((o * depth + d) * inner + i)] = v == d;
            }
        ctx.set_output(0, take1(values, out, refs, ctx.pool(), "OneHot"));
    };
}

bool is_nonzero(const Tensor& t, uint64_t i) {
    return t.is_string() ? !t.strings()[i].empty() : t.element_as_double(i) != 0;
}

KernelFn make_non_zero(const Attrs&, int64_t) {
    return [](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        if (!x.is_string()) check_numeric_view(x, "NonZero");
        const Dims dims = x.rank() == 0 ? Dims{1} : x.dims();
        std::vector<int64_t> flat;
        for (uint64_t i = 0; i < x.numel(); ++i)
            if (is_nonzero(x, i)) flat.push_back(static_cast<int64_t>(i));
        const int64_t nnz = static_cast<int64_t>(flat.size()),
                      r = static_cast<int64_t>(dims.size());
        std::vector<int64_t> out(static_cast<size_t>(r * nnz));
        for (int64_t j = 0; j < nnz; ++j) {
            int64_t f = flat[static_cast<size_t>(j)];
            for (int64_t d = r; d-- > 0;) {
                out[static_cast<size_t>(d * nnz + j)] = f % dims[static_cast<size_t>(d)];
                f /= dims[static_cast<size_t>(d)];
            }
        }
        ctx.set_output(0, Tensor::from_values(DataType::kInt64, {r, nnz}, out));
    };
}

KernelFn make_compress(const Attrs& a, int64_t) {
    const bool has_axis = a.has("axis");
    const int64_t axis_attr = a.get_int("axis", 0);
    return [=](KernelContext& ctx) {
        const Tensor& x0 = ctx.input(0);
        const Tensor& cond = ctx.input(1);
        check_numeric_view(cond, "Compress");
        const Tensor x = has_axis ? x0 : with_dims(x0, {static_cast<int64_t>(x0.numel())});
        const size_t axis =
            static_cast<size_t>(normalize_axis(has_axis ? axis_attr : 0, x.rank(), "Compress"));
        const int64_t n = x.dims()[axis];
        Dims sel;
        for (uint64_t i = 0; i < cond.numel(); ++i)
            if (is_nonzero(cond, i)) {
                if (static_cast<int64_t>(i) >= n)
                    fail("Compress: condition selects index " + std::to_string(i) +
                         " beyond the axis");
                sel.push_back(static_cast<int64_t>(i));
            }
        Dims out = x.dims();
        out[axis] = static_cast<int64_t>(sel.size());
        const int64_t outer = count_of(Dims(out.begin(), out.begin() + static_cast<int64_t>(axis)));
        const int64_t inner =
            count_of(Dims(out.begin() + static_cast<int64_t>(axis) + 1, out.end()));
        std::vector<int64_t> refs;
        for (int64_t o = 0; o < outer; ++o)
            for (int64_t s : sel)
                for (int64_t k = 0; k < inner; ++k) refs.push_back((o * n + s) * inner + k);
        ctx.set_output(0, take1(x, out, refs, ctx.pool(), "Compress"));
    };
}

KernelFn make_reverse_sequence(const Attrs& a, int64_t) {
    const int64_t batch_attr = a.get_int("batch_axis", 1), time_attr = a.get_int("time_axis", 0);
    return [=](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        const size_t b =
            static_cast<size_t>(normalize_axis(batch_attr, x.rank(), "ReverseSequence"));
        const size_t t =
            static_cast<size_t>(normalize_axis(time_attr, x.rank(), "ReverseSequence"));
        if (b == t) fail("ReverseSequence: batch_axis and time_axis are the same");
        const Dims lens = to_int64_vector(ctx.input(1), "ReverseSequence");
        if (static_cast<int64_t>(lens.size()) != x.dims()[b])
            fail("ReverseSequence: sequence_lens must have one value per batch");
        for (int64_t l : lens)
            if (l < 0 || l > x.dims()[t])
                fail("ReverseSequence: sequence length " + std::to_string(l) + " is out of range");
        const int64_t ts = strides_of(x.dims())[t];
        std::vector<int64_t> refs(x.numel());
        for_each_coord(x.dims(), [&](int64_t i, const Dims& c) {
            const int64_t l = lens[static_cast<size_t>(c[b])];
            refs[static_cast<size_t>(i)] = c[t] < l ? i + (l - 1 - 2 * c[t]) * ts : i;
        });
        ctx.set_output(0, take1(x, x.dims(), refs, ctx.pool(), "ReverseSequence"));
    };
}

}  // namespace

// Shared with tensor_index_scatter.cc.
std::vector<int64_t> scatter_element_offsets(const Tensor& data, const Tensor& ind, int64_t axis,
                                             const char* op) {
    return element_offsets(data, ind, axis, op);
}

void register_tensor_index_ops(OpTable& t) {
    using C = NumericContract;
    t.add("Slice", 1, C::kExact, make_slice);
    t.add("Gather", 1, C::kExact, make_gather);
    t.add("GatherElements", 11, C::kExact, make_gather_elements);
    t.add("GatherND", 11, C::kExact, make_gather_nd);
    t.add("OneHot", 9, C::kExact, make_one_hot);
    t.add("NonZero", 9, C::kExact, make_non_zero);
    t.add("Compress", 9, C::kExact, make_compress);
    t.add("ReverseSequence", 10, C::kExact, make_reverse_sequence);
    register_tensor_index_scatter_ops(t);
}

}  // namespace pg::ops
