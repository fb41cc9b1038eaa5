// Convolutions: Conv, ConvTranspose. Geometry and kernels live in conv_kernels.{h,cc}; float32
// Conv runs the im2col + GEMM fast path, other types the plain reference. float16/bfloat16 are
// computed in float32 (half_via_float).
#include <algorithm>
#include <type_traits>

#include "ir/graph.h"
#include "ops/concat_slice.h"
#include "ops/conv_kernels.h"
#include "ops/dispatch.h"
#include "ops/half.h"
#include "ops/op_table.h"

namespace pg::ops {

namespace {

using Dims = std::vector<int64_t>;

struct ConvInputs {
    const Tensor* x;
    const Tensor* w;
    const Tensor* b;  // nullptr when omitted
};

ConvInputs conv_inputs(KernelContext& ctx, const char* op) {
    ConvInputs in{&ctx.input(0), &ctx.input(1), ctx.has_input(2) ? &ctx.input(2) : nullptr};
    if (in.x->rank() < 3 || in.w->rank() != in.x->rank())
        fail(std::string(op) + ": X must have rank >= 3 and W the same rank");
    if (in.w->dtype() != in.x->dtype() || (in.b && in.b->dtype() != in.x->dtype()))
        fail(std::string(op) + ": inputs have different types");
    return in;
}

Dims output_dims(const ConvShape& s) {
    Dims out{s.n, s.m};
    for (int i = 3 - s.w.nd; i < 3; ++i) out.push_back(s.w.out[i]);
    return out;
}

// Runs conv (fast for float32) or conv-transpose on the typed buffers.
void run_conv(const ConvShape& s, const ConvInputs& in, bool transpose, KernelContext& ctx) {
    // A Conv may write into a Concat's output (ops/concat_slice.h).
    const Dims dims = output_dims(s);
    OutputSpace y = output_space(transpose ? nullptr : ctx.concat_slice(), in.x->dtype(), dims);
    // An empty output (a batch or channels of 0) is done; its spatial sizes may be any size up to
    // 2^60 each, which the kernels' plane arithmetic would multiply past int64.
    if (std::find(dims.begin(), dims.end(), 0) != dims.end()) {
        ctx.set_output(0, std::move(y.tensor));
        return;
    }
    dispatch_float(in.x->dtype(), transpose ? "ConvTranspose" : "Conv", [&]<typename T>() {
        const T* b = in.b ? in.b->data<T>() : nullptr;
        T* py = reinterpret_cast<T*>(y.data);
        if (transpose)
            conv_transpose_reference<T>(s, in.x->data<T>(), in.w->data<T>(), b, py);
        else if constexpr (std::is_same_v<T, float>)
            conv_fast(s, in.x->data<T>(), in.w->data<T>(), b, py, ctx.pool());
        else
            conv_reference<T>(s, in.x->data<T>(), in.w->data<T>(), b, py);
    });
    ctx.set_output(0, std::move(y.tensor));
}

Dims kernel_dims(const WindowAttrs& wa, const Tensor& w, const char* op) {
    const Dims from_w(w.dims().begin() + 2, w.dims().end());
    if (!wa.kernel_shape.empty() && wa.kernel_shape != from_w)
        fail(std::string(op) + ": kernel_shape differs from the weights' shape");
    return from_w;
}

KernelFn make_conv(const Attrs& at, int64_t) {
    const ConvAttrs ca = read_conv_attrs(at);
    return half_via_float([ca](KernelContext& ctx) {
        const ConvInputs in = conv_inputs(ctx, "Conv");
        run_conv(conv_shape(ca, *in.x, *in.w, in.b), in, false, ctx);
    });
}

// Python-style floor division (total padding can be negative).
int64_t floor_half(int64_t v) {
    return v / 2 - (v % 2 < 0);
}

// ConvTranspose output size and pads per axis: from output_shape or SAME (pads derived from the
// total padding), else from explicit pads.
void transpose_geometry(const WindowAttrs& wa, const Dims& out_pad, Dims out_shape, Window& w) {
    const int nd = w.nd, off = 3 - nd;
    if (out_shape.size() == static_cast<size_t>(nd + 2))
        out_shape.erase(out_shape.begin(), out_shape.begin() + 2);
    if (!out_shape.empty() && out_shape.size() != static_cast<size_t>(nd))
        fail("ConvTranspose: output_shape has the wrong length");
    if (!out_pad.empty() && out_pad.size() != static_cast<size_t>(nd))
        fail("ConvTranspose: output_padding has the wrong length");
    if (!wa.pads.empty() && wa.pads.size() != static_cast<size_t>(2 * nd))
        fail("ConvTranspose: 'pads' has the wrong length");  // (read past its end before)
    const bool same = wa.auto_pad == "SAME_UPPER" || wa.auto_pad == "SAME_LOWER";
    for (int i = 0; i < nd; ++i) {
        const int j = off + i;
        const char* name = "ConvTranspose";
        const int64_t op = out_pad.empty() ? 0 : out_pad[i];
        check_window_bound(op, name);
        const int64_t full =  // stride * (in - 1) + output_padding + the kernel's extent
            window_arith(
                w.stride[j], w.in[j] - 1,
                window_arith(1, op, window_arith(w.kernel[j] - 1, w.dil[j], 1, name), name), name);
        check_window_bound(full, name);
        if (!out_shape.empty() || same) {
            w.out[j] =
                out_shape.empty() ? window_arith(w.in[j], w.stride[j], 0, name) : out_shape[i];
            check_window_bound(w.out[j], name);
            const int64_t total = full - w.out[j];
            const bool upper = wa.auto_pad == "SAME_UPPER";
            w.pad_begin[j] = upper ? floor_half(total) : total - floor_half(total);
            w.pad_end[j] = total - w.pad_begin[j];
        } else {
            if (!wa.pads.empty()) w.pad_begin[j] = wa.pads[i], w.pad_end[j] = wa.pads[i + nd];
            check_window_bound(w.pad_begin[j], name), check_window_bound(w.pad_end[j], name);
            w.out[j] = full - w.pad_begin[j] - w.pad_end[j];
        }
        if (w.out[j] < 1) fail("ConvTranspose: output size is not positive");
    }
}

KernelFn make_conv_transpose(const Attrs& at, int64_t) {
    WindowAttrs wa = read_window_attrs(at);
    const int64_t group = at.get_int("group", 1);
    const Dims out_pad = at.get_ints("output_padding"), out_shape = at.get_ints("output_shape");
    return half_via_float([=](KernelContext& ctx) {
        const ConvInputs in = conv_inputs(ctx, "ConvTranspose");
        ConvShape s;
        s.n = in.x->dims()[0], s.c = in.x->dims()[1], s.group = group;
        if (group < 1 || s.c != in.w->dims()[0] || s.c % group != 0 ||
            __builtin_mul_overflow(in.w->dims()[1], group, &s.m))
            fail("ConvTranspose: channels do not match the weights and group");
        if (in.b && in.b->numel() != static_cast<uint64_t>(s.m))
            fail("ConvTranspose: B must have M elements");
        const Dims spatial(in.x->dims().begin() + 2, in.x->dims().end());
        WindowAttrs geometry = wa;  // strides / dilations checked and read by make_window
        geometry.auto_pad = "VALID", geometry.pads.clear(), geometry.ceil_mode = false;
        Window w = make_window(geometry, spatial, kernel_dims(wa, *in.w, "ConvTranspose"),
                               "ConvTranspose", false);
        transpose_geometry(wa, out_pad, out_shape, w);
        s.w = w;
        run_conv(s, in, true, ctx);
    });
}

}  // namespace

ConvAttrs read_conv_attrs(const Attrs& at) {
    ConvAttrs ca;
    ca.window = read_window_attrs(at);
    ca.window.ceil_mode = false;
    ca.group = at.get_int("group", 1);
    return ca;
}

ConvShape conv_shape(const ConvAttrs& ca, const Tensor& x, const Tensor& w, const Tensor* b) {
    ConvShape s;
    s.n = x.dims()[0], s.c = x.dims()[1], s.m = w.dims()[0], s.group = ca.group;
    int64_t c = 0;  // the weights' input channels times group, overflow-checked
    if (ca.group < 1 || __builtin_mul_overflow(w.dims()[1], ca.group, &c) || s.c != c ||
        s.m % ca.group != 0)
        fail("Conv: channels do not match the weights and group");
    if (b && b->numel() != static_cast<uint64_t>(s.m)) fail("Conv: B must have M elements");
    const Dims spatial(x.dims().begin() + 2, x.dims().end());
    s.w = make_window(ca.window, spatial, kernel_dims(ca.window, w, "Conv"), "Conv");
    return s;
}

std::vector<int64_t> conv_output_dims(const ConvShape& s) {
    return output_dims(s);
}

void register_conv_ops(OpTable& t) {
    using C = NumericContract;
    t.add("Conv", 1, C::kApproximate, make_conv);
    t.add("ConvTranspose", 1, C::kApproximate, make_conv_transpose);
}

}  // namespace pg::ops
