// Ops of the shape family that build or rearrange tensors: Pad, Constant, ConstantOfShape, Range,
// DepthToSpace, SpaceToDepth, Trilu, EyeLike. Registered by register_tensor_shape_ops().
#include <algorithm>
#include <cmath>

#include "ir/graph.h"
#include "ops/dispatch.h"
#include "ops/half.h"
#include "ops/op_table.h"
#include "ops/tensor_shape_take.h"
#include "ops/tensor_util.h"

namespace pg::ops {

namespace {

enum class PadMode { kConstant, kReflect, kEdge, kWrap };

// The input coordinate that output coordinate `o` reads along an axis of `n` elements padded by
// `before` and `after` (either may be negative: that many elements are removed first); -1 means
// the fill value. Edge, reflect and wrap act on what is kept, as in ONNX Runtime and PyTorch: a
// crop at one end and a wrap at the other repeat the kept elements, never the removed ones.
int64_t pad_source(int64_t o, int64_t before, int64_t after, int64_t n, PadMode mode) {
    const int64_t lo = std::max<int64_t>(-before, 0), m = n - lo - std::max<int64_t>(-after, 0);
    int64_t i = o - std::max<int64_t>(before, 0);
    if (i >= 0 && i < m) return lo + i;
    if (mode == PadMode::kConstant) return -1;
    if (m <= 0) fail("Pad: cannot pad an empty axis in reflect/edge/wrap mode");
    if (mode == PadMode::kEdge) return lo + std::clamp(i, int64_t{0}, m - 1);
    if (mode == PadMode::kWrap) return lo + ((i % m) + m) % m;
    if (m == 1) return lo;
    const int64_t p = 2 * (m - 1);
    i = ((i % p) + p) % p;
    return lo + (i < m ? i : p - i);
}

PadMode pad_mode(const std::string& m, int64_t opset) {
    if (m == "constant") return PadMode::kConstant;
    if (m == "reflect") return PadMode::kReflect;
    if (m == "edge") return PadMode::kEdge;
    if (m == "wrap" && opset >= 19) return PadMode::kWrap;
    fail("Pad: unknown mode '" + m + "'");
}

// Per-axis (begin, end) pads from the attribute (before opset 11) or inputs 1 and 3.
std::pair<Dims, Dims> pad_amounts(KernelContext& ctx, const Dims& attr, int64_t opset, int64_t r) {
    const Dims pads = opset < 11 ? attr : to_int64_vector(ctx.input(1), "Pad");
    Dims axes;
    if (opset >= 18 && ctx.has_input(3)) {
        axes = normalize_axes(to_int64_vector(ctx.input(3), "Pad"), r, "Pad");
    } else {
        for (int64_t i = 0; i < r; ++i) axes.push_back(i);
    }
    if (pads.size() != 2 * axes.size())
        fail("Pad: expected " + std::to_string(2 * axes.size()) + " pads, got " +
             std::to_string(pads.size()));
    Dims before(static_cast<size_t>(r), 0), after(static_cast<size_t>(r), 0);
    for (size_t k = 0; k < axes.size(); ++k) {
        before[static_cast<size_t>(axes[k])] = pads[k];
        after[static_cast<size_t>(axes[k])] = pads[k + axes.size()];
    }
    return {before, after};
}

KernelFn make_pad(const Attrs& a, int64_t opset) {
    const PadMode mode = pad_mode(a.get_string("mode", "constant"), opset);
    const Dims attr = opset < 11 ? a.get_ints(opset < 2 ? "paddings" : "pads") : Dims{};
    const float value = a.get_float("value", 0.0f);
    return [=](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        const auto [before, after] = pad_amounts(ctx, attr, opset, x.rank());
        Tensor fill = scalar_of(x.dtype(), opset < 11 ? value : 0.0);
        if (opset >= 11 && ctx.has_input(2) && ctx.input(2).numel() > 0) fill = ctx.input(2);
        Dims out = x.dims();
        for (size_t i = 0; i < out.size(); ++i) {
            if (__builtin_add_overflow(out[i], before[i], &out[i]) ||
                __builtin_add_overflow(out[i], after[i], &out[i]))
                fail("Pad: pads of " + std::to_string(before[i]) + " and " +
                     std::to_string(after[i]) + " overflow axis " + std::to_string(i));
            if (out[i] < 0) fail("Pad: negative pads remove more than the whole axis");
        }
        std::vector<int64_t> refs = ref_table(out);  // refuses a hostile size before the maps
        std::vector<Dims> maps(out.size());
        for (size_t i = 0; i < out.size(); ++i)
            for (int64_t o = 0; o < out[i]; ++o)
                maps[i].push_back(pad_source(o, before[i], after[i], x.dims()[i], mode));
        const Dims strides = strides_of(x.dims());
        for_each_coord(out, [&](int64_t i, const Dims& c) {
            int64_t off = 0;
            for (size_t k = 0; k < c.size() && off >= 0; ++k) {
                const int64_t s = maps[k][static_cast<size_t>(c[k])];
                off = s < 0 ? -1 : off + s * strides[k];
            }
            refs[static_cast<size_t>(i)] = off < 0 ? src_ref(1, 0) : off;
        });
        ctx.set_output(0, take({&x, &fill}, out, refs, ctx.pool(), "Pad"));
    };
}

Tensor constant_value(const Attrs& a) {
    // ONNX: exactly one value attribute. With two, runtimes pick different ones (the ONNX Runtime
    // differential suite found it), so the model has no one meaning.
    std::string found;
    for (const char* name : {"value", "sparse_value", "value_float", "value_floats", "value_int",
                             "value_ints", "value_string", "value_strings"})
        if (a.has(name)) {
            if (!found.empty())
                fail("Constant: one value attribute allowed; found '" + found + "' and '" + name +
                     "'");
            found = name;
        }
    if (a.has("sparse_value"))
        unsupported("Constant: sparse_value (sparse tensors) is not supported");
    if (const Tensor* t = a.get_tensor("value")) return *t;
    if (a.has("value_float"))
        return Tensor::from_values<float>(DataType::kFloat32, {}, {a.get_float("value_float", 0)});
    if (a.has("value_int")) return make_scalar_int64(a.get_int("value_int", 0));
    if (a.has("value_string")) return Tensor::from_strings({}, {a.get_string("value_string", "")});
    if (a.has("value_floats")) {
        const auto v = a.get_floats("value_floats");
        return Tensor::from_values(DataType::kFloat32, {static_cast<int64_t>(v.size())}, v);
    }
    if (a.has("value_ints")) {
        const auto v = a.get_ints("value_ints");
        return Tensor::from_values(DataType::kInt64, {static_cast<int64_t>(v.size())}, v);
    }
    if (a.has("value_strings")) {
        auto v = a.get_strings("value_strings");
        const int64_t n = static_cast<int64_t>(v.size());
        return Tensor::from_strings({n}, std::move(v));
    }
    fail("Constant: no value attribute");
}

KernelFn make_constant(const Attrs& a, int64_t) {
    const Tensor value = constant_value(a);
    return [value](KernelContext& ctx) { ctx.set_output(0, value); };
}

KernelFn make_constant_of_shape(const Attrs& a, int64_t) {
    const Tensor* v = a.get_tensor("value");
    const Tensor value = v ? *v : Tensor::from_values<float>(DataType::kFloat32, {}, {0.0f});
    if (value.numel() != 1) fail("ConstantOfShape: value must hold one element");
    return [value](KernelContext& ctx) {
        const Dims dims = to_int64_vector(ctx.input(0), "ConstantOfShape");
        for (int64_t d : dims)
            if (d < 0) fail("ConstantOfShape: negative dim " + std::to_string(d));
        ctx.set_output(0, take1(value, dims, ref_table(dims), ctx.pool(), "ConstantOfShape"));
    };
}

KernelFn make_range(const Attrs&, int64_t) {
    return half_via_float([](KernelContext& ctx) {
        const Tensor& s = ctx.input(0);
        if (ctx.input(1).dtype() != s.dtype() || ctx.input(2).dtype() != s.dtype())
            fail("Range: start, limit and delta must have the same type");
        for (size_t i = 0; i < 3; ++i)
            if (ctx.input(i).numel() != 1)
                fail("Range: start, limit and delta must be scalars, input " + std::to_string(i) +
                     " has shape " + dims_text(ctx.input(i).dims()));
        dispatch_numeric(s.dtype(), "Range", [&]<typename T>() {
            const T start = s.data<T>()[0], limit = ctx.input(1).data<T>()[0],
                    delta = ctx.input(2).data<T>()[0];
            if (delta == T(0)) fail("Range: delta is zero");
            const double n = std::ceil((static_cast<double>(limit) - static_cast<double>(start)) /
                                       static_cast<double>(delta));
            if (std::isnan(n)) fail("Range: start, limit or delta is NaN");
            if (n > 9e18) fail("Range would produce " + std::to_string(n) + " elements");
            // Under the memory ceiling before anything is allocated (a window function's expanded
            // body ran Range up to int32's maximum: 8 GiB, faulted in for a minute).
            const std::vector<int64_t> dims{static_cast<int64_t>(std::max(n, 0.0))};
            checked_output_count(dims, sizeof(T), "Range: ", "");
            Tensor out = Tensor::uninitialized(s.dtype(), dims);
            T* v = reinterpret_cast<T*>(out.mutable_bytes());
            for (uint64_t i = 0; i < out.numel(); ++i)
                v[i] = static_cast<T>(start + static_cast<T>(i) * delta);
            ctx.set_output(0, std::move(out));
        });
    });
}

// DepthToSpace / SpaceToDepth as reshape-transpose-reshape: `six` are the 6-D transposed dims,
// `strides` the input strides read along them.
void rearrange(KernelContext& ctx, const Tensor& x, const Dims& six, const Dims& strides, Dims out,
               const char* op) {
    ctx.set_output(
        0, with_dims(take1(x, six, strided_refs(six, strides), ctx.pool(), op), std::move(out)));
}

KernelFn make_depth_to_space(const Attrs& a, int64_t) {
    const int64_t b = a.require_int("blocksize");
    const bool crd = a.get_string("mode", "DCR") == "CRD";
    return [=](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        int64_t bb = 0;  // blocksize^2 (2^40 squared wrapped to 0: a division by zero)
        if (x.rank() != 4 || b <= 0 || __builtin_mul_overflow(b, b, &bb) || x.dims()[1] % bb != 0)
            fail("DepthToSpace: input must be NCHW with C divisible by blocksize^2");
        const int64_t n = x.dims()[0], c = x.dims()[1] / bb, h = x.dims()[2], w = x.dims()[3];
        int64_t hb = 0, wb = 0;  // (C = 0 divides by any blocksize)
        if (__builtin_mul_overflow(h, b, &hb) || __builtin_mul_overflow(w, b, &wb))
            fail("DepthToSpace: the output's height or width overflows int64");
        const Dims six = {n, c, h, b, w, b};
        const Dims s = crd ? strides_of({n, c, b, b, h, w}) : strides_of({n, b, b, c, h, w});
        const Dims st = crd ? Dims{s[0], s[1], s[4], s[2], s[5], s[3]}
                            : Dims{s[0], s[3], s[4], s[1], s[5], s[2]};
        rearrange(ctx, x, six, st, {n, c, hb, wb}, "DepthToSpace");
    };
}

KernelFn make_space_to_depth(const Attrs& a, int64_t) {
    const int64_t b = a.require_int("blocksize");
    return [=](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        if (x.rank() != 4 || b <= 0 || x.dims()[2] % b != 0 || x.dims()[3] % b != 0)
            fail("SpaceToDepth: input must be NCHW with H and W divisible by blocksize");
        const int64_t n = x.dims()[0], c = x.dims()[1], h = x.dims()[2] / b, w = x.dims()[3] / b;
        int64_t cbb = 0;  // (H = W = 0 divide by any blocksize)
        if (__builtin_mul_overflow(c, b, &cbb) || __builtin_mul_overflow(cbb, b, &cbb))
            fail("SpaceToDepth: the output's channels overflow int64");
        const Dims s = strides_of({n, c, h, b, w, b});
        rearrange(ctx, x, {n, b, b, c, h, w}, {s[0], s[3], s[5], s[1], s[2], s[4]}, {n, cbb, h, w},
                  "SpaceToDepth");
    };
}

KernelFn make_trilu(const Attrs& a, int64_t) {
    const bool upper = a.get_flag("upper", true);
    return [=](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        if (x.rank() < 2) fail("Trilu: input must have rank >= 2");
        const int64_t k = ctx.has_input(1) ? scalar_int64(ctx.input(1), "Trilu") : 0;
        const int64_t h = x.dims()[x.dims().size() - 2], w = x.dims().back();
        const Tensor zero = scalar_of(x.dtype(), 0);
        std::vector<int64_t> refs(x.numel());
        for (int64_t i = 0; i < static_cast<int64_t>(refs.size()); ++i) {
            const int64_t d = i % w - (i / w) % h;
            refs[static_cast<size_t>(i)] = (upper ? d >= k : d <= k) ? i : src_ref(1, 0);
        }
        ctx.set_output(0, take({&x, &zero}, x.dims(), refs, ctx.pool(), "Trilu"));
    };
}

KernelFn make_eye_like(const Attrs& a, int64_t) {
    const int64_t dtype = a.get_int("dtype", 0);
    const int64_t k = a.get_int("k", 0);
    return [=](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        if (x.rank() != 2) fail("EyeLike: input must be 2-D");
        const DataType dt = dtype ? static_cast<DataType>(dtype) : x.dtype();
        const Tensor zero = scalar_of(dt, 0), one = scalar_of(dt, 1);
        const int64_t w = x.dims()[1];
        std::vector<int64_t> refs(x.numel());
        for (int64_t i = 0; i < static_cast<int64_t>(refs.size()); ++i)
            refs[static_cast<size_t>(i)] = (i % w - i / w == k) ? src_ref(1, 0) : 0;
        ctx.set_output(0, take({&zero, &one}, x.dims(), refs, ctx.pool(), "EyeLike"));
    };
}

}  // namespace

void register_tensor_shape_build_ops(OpTable& t) {
    using C = NumericContract;
    t.add("Pad", 1, C::kExact, make_pad);
    t.add("Constant", 1, C::kExact, make_constant);
    t.add("ConstantOfShape", 9, C::kExact, make_constant_of_shape);
    t.add("Range", 11, C::kRounding, make_range);
    t.add("DepthToSpace", 1, C::kExact, make_depth_to_space);
    t.add("SpaceToDepth", 1, C::kExact, make_space_to_depth);
    t.add("Trilu", 14, C::kExact, make_trilu);
    t.add("EyeLike", 9, C::kExact, make_eye_like);
}

}  // namespace pg::ops
