// Shape and data-movement ops: Reshape, Transpose, Concat, Split, Squeeze, Unsqueeze, Flatten,
// Expand, Tile, Shape, Size, Identity here; Pad, Constant, ConstantOfShape, Range,
// DepthToSpace, SpaceToDepth, Trilu, EyeLike in tensor_shape_build.cc. Every kernel builds a
// ref map (tensor_shape_take.h), so all element types move the same way, strings included.
#include <algorithm>

#include "ir/graph.h"
#include "ops/op_table.h"
#include "ops/tensor_shape_take.h"
#include "ops/tensor_util.h"

namespace pg::ops {

void register_tensor_shape_build_ops(OpTable& t);  // tensor_shape_build.cc

namespace {

std::string dims_str(const Dims& d) {
    std::string s = "[";
    for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
    return s + "]";
}

}  // namespace

Dims reshape_dims(const Dims& in, Dims shape, bool allowzero) {
    int64_t infer = -1, known = 1;
    for (size_t i = 0; i < shape.size(); ++i) {
        if (shape[i] == 0 && !allowzero) {
            if (i >= in.size())
                fail("Reshape: 0 at position " + std::to_string(i) + " has no input dim");
            shape[i] = in[i];
        }
        if (shape[i] == -1) {
            if (infer >= 0) fail("Reshape: more than one -1 in shape " + dims_str(shape));
            infer = static_cast<int64_t>(i);
        } else if (shape[i] < 0) {
            fail("Reshape: invalid dim in shape " + dims_str(shape));
        } else {
            known = saturating_mul(known, shape[i]);  // past int64: no input has as many
        }
    }
    const int64_t total = count_of(in);
    if (infer >= 0) {
        if (known == 0 || total % known != 0)
            fail("Reshape: cannot infer -1 reshaping " + dims_str(in) + " to " + dims_str(shape));
        shape[static_cast<size_t>(infer)] = total / known;
    }
    if (count_of(shape) != total)
        fail("Reshape: cannot reshape " + dims_str(in) + " to " + dims_str(shape));
    return shape;
}

namespace {

KernelFn make_reshape(const Attrs& a, int64_t opset) {
    const bool allowzero = opset >= 14 && a.get_flag("allowzero", false);
    const bool attr_shape = opset < 5;
    const Dims attr = attr_shape ? a.get_ints("shape") : Dims{};
    return [=](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        const Dims shape = attr_shape ? attr : to_int64_vector(ctx.input(1), "Reshape");
        ctx.set_output(0, with_dims(x, reshape_dims(x.dims(), shape, allowzero)));
    };
}

KernelFn make_transpose(const Attrs& a, int64_t) {
    const Dims attr_perm = a.get_ints("perm");
    return [=](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        const int64_t r = x.rank();
        Dims perm = attr_perm;
        if (perm.empty())
            for (int64_t i = r; i-- > 0;) perm.push_back(i);
        Dims sorted = perm;
        std::sort(sorted.begin(), sorted.end());
        for (int64_t i = 0; i < static_cast<int64_t>(sorted.size()); ++i)
            if (sorted[static_cast<size_t>(i)] != i || static_cast<int64_t>(perm.size()) != r)
                fail("Transpose: perm " + dims_str(perm) + " is not a permutation of rank " +
                     std::to_string(r));
        ctx.set_output(0, transpose_fast(x, perm, ctx.pool()));
    };
}

KernelFn make_concat(const Attrs& a, int64_t opset) {
    const int64_t axis_attr = a.get_int("axis", opset < 4 ? 1 : 0);
    if (opset >= 4 && !a.has("axis")) fail("Concat: attribute 'axis' is required");
    return [=](KernelContext& ctx) {
        std::vector<const Tensor*> in;
        for (size_t i = 0; i < ctx.num_inputs(); ++i) in.push_back(&ctx.input(i));
        if (in.empty()) fail("Concat: no inputs");
        const int64_t r = in[0]->rank();
        const size_t axis = static_cast<size_t>(normalize_axis(axis_attr, r, "Concat"));
        Dims out = in[0]->dims();
        out[axis] = 0;
        for (const Tensor* t : in) {
            Dims d = t->dims();
            if (static_cast<int64_t>(d.size()) != r) fail("Concat: inputs have different ranks");
            out[axis] += d[axis];
            d[axis] = out[axis];
            if (d != out) fail("Concat: input shapes differ outside the axis");
        }
        ctx.set_output(0, concat_fast(in, out, axis, ctx.pool()));
    };
}

// The parts of a `dim`-long axis for Split.
Dims split_sizes(KernelContext& ctx, const Dims& attr, int64_t num_outputs_attr, int64_t opset,
                 int64_t dim) {
    Dims sizes = attr;
    if ((opset >= 13 || sizes.empty()) && ctx.has_input(1))
        sizes = to_int64_vector(ctx.input(1), "Split");
    if (!sizes.empty()) {
        int64_t sum = 0;
        for (int64_t s : sizes) {
            if (s < 0) fail("Split: negative split size");
            if (__builtin_add_overflow(sum, s, &sum)) fail("Split: split sizes overflow int64");
        }
        if (sum != dim)
            fail("Split: split sizes add up to " + std::to_string(sum) + ", not " +
                 std::to_string(dim));
        if (sizes.size() != ctx.num_outputs())
            fail("Split: split has a different length than the outputs");
        return sizes;
    }
    const int64_t n =
        num_outputs_attr > 0 ? num_outputs_attr : static_cast<int64_t>(ctx.num_outputs());
    if (n <= 0) fail("Split: no outputs");
    if (num_outputs_attr <= 0 && dim % n != 0)
        fail("Split: axis of " + std::to_string(dim) + " cannot be split evenly");
    if (num_outputs_attr > 0 && static_cast<size_t>(n) != ctx.num_outputs())
        fail("Split: num_outputs is " + std::to_string(n) + " but the node has " +
             std::to_string(ctx.num_outputs()) + " outputs");
    // ONNX's parts: n - 1 of ceil(dim / n), the rest last (none left over: empty).
    const int64_t chunk = (dim + n - 1) / n, last = dim - chunk * (n - 1);
    if (last < 0)
        fail("Split: an axis of " + std::to_string(dim) + " has no " + std::to_string(n) +
             " parts of ceil(" + std::to_string(dim) + " / " + std::to_string(n) + ") = " +
             std::to_string(chunk) + " (the last would hold " + std::to_string(last) + ")");
    sizes.assign(static_cast<size_t>(n - 1), chunk);
    sizes.push_back(last);
    return sizes;
}

KernelFn make_split(const Attrs& a, int64_t opset) {
    const int64_t axis_attr = a.get_int("axis", 0);
    const Dims split_attr = opset < 13 ? a.get_ints("split") : Dims{};
    const int64_t num_outputs = opset >= 18 ? a.get_int("num_outputs", 0) : 0;
    if (opset >= 18 && a.has("num_outputs") && num_outputs < 1)
        fail("Split: num_outputs is " + std::to_string(num_outputs) + "; it must be at least 1");
    return [=](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        if (num_outputs > 0 && ctx.has_input(1))
            fail("Split: both the split input and the num_outputs attribute are given");
        const size_t axis = static_cast<size_t>(normalize_axis(axis_attr, x.rank(), "Split"));
        const Dims sizes = split_sizes(ctx, split_attr, num_outputs, opset, x.dims()[axis]);
        const Dims strides = strides_of(x.dims());
        int64_t start = 0;
        for (size_t k = 0; k < sizes.size(); ++k) {
            Dims out = x.dims();
            out[axis] = sizes[k];
            ctx.set_output(k, take1(x, out, strided_refs(out, strides, start * strides[axis]),
                                    ctx.pool(), "Split"));
            start += sizes[k];
        }
    };
}

// Axes from the attribute (before `input_since`) or the optional input 1.
Dims axes_of(KernelContext& ctx, const Dims& attr, int64_t opset, int64_t input_since,
             const char* op) {
    if (opset < input_since) return attr;
    return ctx.has_input(1) ? to_int64_vector(ctx.input(1), op) : Dims{};
}

KernelFn make_squeeze(const Attrs& a, int64_t opset) {
    const Dims attr = opset < 13 ? a.get_ints("axes") : Dims{};
    return [=](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        const Dims axes = axes_of(ctx, attr, opset, 13, "Squeeze");
        std::vector<bool> drop(x.dims().size(), false);
        for (int64_t ax : axes) {
            const size_t i = static_cast<size_t>(normalize_axis(ax, x.rank(), "Squeeze"));
            if (x.dims()[i] != 1)
                fail("Squeeze: axis " + std::to_string(ax) + " has size " +
                     std::to_string(x.dims()[i]) + ", not 1");
            drop[i] = true;
        }
        Dims out;
        for (size_t i = 0; i < drop.size(); ++i)
            if (!(axes.empty() ? x.dims()[i] == 1 : drop[i])) out.push_back(x.dims()[i]);
        ctx.set_output(0, with_dims(x, out));
    };
}

KernelFn make_unsqueeze(const Attrs& a, int64_t opset) {
    const Dims attr = opset < 13 ? a.get_ints("axes") : Dims{};
    return [=](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        const Dims axes = axes_of(ctx, attr, opset, 13, "Unsqueeze");
        const int64_t r = x.rank() + static_cast<int64_t>(axes.size());
        std::vector<bool> ins(static_cast<size_t>(r), false);
        for (int64_t ax : axes) {
            const size_t i = static_cast<size_t>(normalize_axis(ax, r, "Unsqueeze"));
            if (ins[i]) fail("Unsqueeze: axis " + std::to_string(ax) + " is repeated");
            ins[i] = true;
        }
        Dims out;
        size_t k = 0;
        for (size_t i = 0; i < ins.size(); ++i) out.push_back(ins[i] ? 1 : x.dims()[k++]);
        ctx.set_output(0, with_dims(x, out));
    };
}

KernelFn make_flatten(const Attrs& a, int64_t) {
    const int64_t axis_attr = a.get_int("axis", 1);
    return [=](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        const int64_t r = x.rank();
        if (axis_attr < -r || axis_attr > r)
            fail("Flatten: axis " + std::to_string(axis_attr) + " is out of range");
        const int64_t axis = axis_attr < 0 ? axis_attr + r : axis_attr;
        const Dims& d = x.dims();
        const int64_t outer = count_of(Dims(d.begin(), d.begin() + axis));
        ctx.set_output(0, with_dims(x, {outer, count_of(Dims(d.begin() + axis, d.end()))}));
    };
}

KernelFn make_expand(const Attrs&, int64_t) {
    return [](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        const Dims out = broadcast_shape(x.dims(), to_int64_vector(ctx.input(1), "Expand"));
        ctx.set_output(0, take1(x, out, strided_refs(out, broadcast_strides(x.dims(), out)),
                                ctx.pool(), "Expand"));
    };
}

KernelFn make_tile(const Attrs&, int64_t) {
    return [](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        const Dims reps = to_int64_vector(ctx.input(1), "Tile");
        if (static_cast<int64_t>(reps.size()) != x.rank())
            fail("Tile: repeats must have one value per axis");
        Dims out = x.dims();
        for (size_t i = 0; i < out.size(); ++i) {
            if (reps[i] < 0) fail("Tile: negative repeat");
            if (__builtin_mul_overflow(out[i], reps[i], &out[i]))
                fail("Tile: " + std::to_string(reps[i]) + " repeats overflow axis " +
                     std::to_string(i));
        }
        const Dims strides = strides_of(x.dims());
        std::vector<int64_t> refs = ref_table(out);
        for_each_coord(out, [&](int64_t i, const Dims& c) {
            int64_t off = 0;
            for (size_t k = 0; k < c.size(); ++k) off += (c[k] % x.dims()[k]) * strides[k];
            refs[static_cast<size_t>(i)] = off;
        });
        ctx.set_output(0, take1(x, out, refs, ctx.pool(), "Tile"));
    };
}

// Shape-15 added start and end.
KernelFn make_shape(const Attrs& a, int64_t opset) {
    const int64_t start_attr = opset >= 15 ? a.get_int("start", 0) : 0;
    const std::optional<int64_t> end_attr = opset >= 15 && a.has("end")
                                                ? std::optional<int64_t>(a.get_int("end", 0))
                                                : std::nullopt;
    return [=](KernelContext& ctx) {
        const Dims& d = ctx.input(0).dims();
        const int64_t r = static_cast<int64_t>(d.size());
        auto clamp = [r](int64_t v) { return std::clamp(v < 0 ? v + r : v, int64_t{0}, r); };
        const int64_t s = clamp(start_attr), e = std::max(s, clamp(end_attr.value_or(r)));
        const Dims out(d.begin() + s, d.begin() + e);
        ctx.set_output(
            0, Tensor::from_values(DataType::kInt64, {static_cast<int64_t>(out.size())}, out));
    };
}

KernelFn make_size(const Attrs&, int64_t) {
    return [](KernelContext& ctx) {
        ctx.set_output(0, make_scalar_int64(static_cast<int64_t>(ctx.input(0).numel())));
    };
}

// Tensors, sequences and optionals pass through.
KernelFn make_identity(const Attrs&, int64_t) {
    return [](KernelContext& ctx) {
        const RtValue* v = ctx.value(0);
        if (!v) fail("Identity: input is missing");
        ctx.set_output(0, *v);
    };
}

}  // namespace

void register_tensor_shape_ops(OpTable& t) {
    using C = NumericContract;
    t.add("Reshape", 1, C::kExact, make_reshape);
    t.add("Transpose", 1, C::kExact, make_transpose);
    t.add("Concat", 1, C::kExact, make_concat);
    t.add("Split", 1, C::kExact, make_split);
    t.add("Squeeze", 1, C::kExact, make_squeeze);
    t.add("Unsqueeze", 1, C::kExact, make_unsqueeze);
    t.add("Flatten", 1, C::kExact, make_flatten);
    t.add("Expand", 8, C::kExact, make_expand);
    t.add("Tile", 6, C::kExact, make_tile);
    t.add("Shape", 1, C::kExact, make_shape);
    t.add("Size", 1, C::kExact, make_size);
    t.add("Identity", 1, C::kExact, make_identity);
    register_tensor_shape_build_ops(t);
}

}  // namespace pg::ops
