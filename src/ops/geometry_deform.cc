// DeformConv (opset 19, 22), 2-D: a grouped convolution whose kernel taps are moved by learned
// offsets (and scaled by an optional mask). Each tap samples X bilinearly with zero padding at
// (top - pad + i * stride + kh * dilation + dy, ...), which is what ONNX's reference gets from
// GridSample with align_corners=1. Computed in double; float16/bfloat16 via float32.
#include <cmath>

#include "base/thread_pool.h"
#include "ir/graph.h"
#include "ops/dispatch.h"
#include "ops/half.h"
#include "ops/op_table.h"

namespace pg::ops {

namespace {

struct DeformConfig {
    std::vector<int64_t> dilations, kernel_shape, pads, strides;
    int64_t group = 1, offset_group = 1;
};

// Bilinear sample of an h x w plane at (y, x); pixels outside read as zero.
double bilinear_zero(const double* p, int64_t h, int64_t w, double y, double x) {
    // Outside (-1, h) x (-1, w) every tap is padding (and the casts below would overflow for a
    // huge or NaN offset).
    if (!(y > -1 && y < static_cast<double>(h) && x > -1 && x < static_cast<double>(w))) return 0;
    const double y0 = std::floor(y), x0 = std::floor(x);
    const int64_t iy = static_cast<int64_t>(y0), ix = static_cast<int64_t>(x0);
    const double fy = y - y0, fx = x - x0;
    double acc = 0;
    for (int dy = 0; dy < 2; ++dy)
        for (int dx = 0; dx < 2; ++dx) {
            const int64_t yy = iy + dy, xx = ix + dx;
            if (yy < 0 || yy >= h || xx < 0 || xx >= w) continue;
            acc += (dy ? fy : 1 - fy) * (dx ? fx : 1 - fx) * p[yy * w + xx];
        }
    return acc;
}

struct DeformShapes {
    int64_t n, ic, ih, iw, oc, icg, kh, kw, oh, ow;
};

DeformShapes deform_shapes(KernelContext& ctx, const DeformConfig& c) {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    const Tensor& off = ctx.input(2);
    if (x.rank() != 4 || w.rank() != 4 || off.rank() != 4)
        unsupported("DeformConv: only 2-D convolutions (4-D X, W and offset) are supported");
    DeformShapes s{x.dims()[0], x.dims()[1], x.dims()[2], x.dims()[3],   w.dims()[0],
                   w.dims()[1], w.dims()[2], w.dims()[3], off.dims()[2], off.dims()[3]};
    if (!c.kernel_shape.empty() &&
        (c.kernel_shape.size() != 2 || c.kernel_shape[0] != s.kh || c.kernel_shape[1] != s.kw))
        fail("DeformConv: kernel_shape does not match W");
    int64_t ic = 0;  // the weights' input channels times group, overflow-checked
    if (c.group < 1 || __builtin_mul_overflow(s.icg, c.group, &ic) || s.ic != ic ||
        s.oc % c.group != 0)
        fail("DeformConv: channels do not match group");
    if (c.offset_group < 1 || s.ic % c.offset_group != 0)
        fail("DeformConv: input channels must be divisible by offset_group");
    if (off.dims()[0] != s.n || off.dims()[1] != c.offset_group * s.kh * s.kw * 2)
        fail("DeformConv: offset must have shape [N, offset_group * kH * kW * 2, oH, oW]");
    const auto out_len = [&](int64_t in, int64_t k, size_t a) {
        return (in + c.pads[a] + c.pads[a + 2] - ((k - 1) * c.dilations[a] + 1)) / c.strides[a] + 1;
    };
    if (s.oh != out_len(s.ih, s.kh, 0) || s.ow != out_len(s.iw, s.kw, 1))
        fail("DeformConv: offset's spatial shape does not match the convolution's output");
    if (ctx.has_input(3) && ctx.input(3).numel() != static_cast<uint64_t>(s.oc))
        fail("DeformConv: B must have M elements");
    if (ctx.has_input(4) &&
        ctx.input(4).dims() != std::vector<int64_t>{s.n, c.offset_group * s.kh * s.kw, s.oh, s.ow})
        fail("DeformConv: mask must have shape [N, offset_group * kH * kW, oH, oW]");
    return s;
}

std::vector<double> doubles(const Tensor& t) {
    std::vector<double> v(t.numel());
    for (uint64_t i = 0; i < t.numel(); ++i) v[i] = t.element_as_double(i);
    return v;
}

// Output element (n, o, i, j).
double deform_at(const DeformShapes& s, const DeformConfig& c, const std::vector<double>& x,
                 const std::vector<double>& w, const std::vector<double>& off,
                 const std::vector<double>* mask, int64_t n, int64_t o, int64_t i, int64_t j) {
    const int64_t ocg = s.oc / c.group, g = o / ocg, icpo = s.ic / c.offset_group;
    const int64_t taps = s.kh * s.kw, plane = s.oh * s.ow;
    double acc = 0;
    for (int64_t ci = 0; ci < s.icg; ++ci) {
        const int64_t ic = g * s.icg + ci, og = ic / icpo;
        const double* xp = x.data() + (n * s.ic + ic) * s.ih * s.iw;  // x may be empty
        for (int64_t t = 0; t < taps; ++t) {
            const int64_t ki = t / s.kw, kj = t % s.kw;
            const int64_t ob = ((n * c.offset_group + og) * taps + t) * 2;
            const double dy = off[static_cast<size_t>(ob * plane + i * s.ow + j)];
            const double dx = off[static_cast<size_t>((ob + 1) * plane + i * s.ow + j)];
            const double y = double(i * c.strides[0] - c.pads[0] + ki * c.dilations[0]) + dy;
            const double xx = double(j * c.strides[1] - c.pads[1] + kj * c.dilations[1]) + dx;
            double v = bilinear_zero(xp, s.ih, s.iw, y, xx);
            if (mask)
                v *= (*mask)[static_cast<size_t>(((n * c.offset_group + og) * taps + t) * plane +
                                                 i * s.ow + j)];
            acc += v * w[static_cast<size_t>((o * s.icg + ci) * taps + t)];
        }
    }
    return acc;
}

KernelFn make_deform_conv(const Attrs& a, int64_t) {
    DeformConfig c;
    c.dilations = a.get_ints("dilations", {1, 1});
    c.kernel_shape = a.get_ints("kernel_shape");
    c.pads = a.get_ints("pads", {0, 0, 0, 0});
    c.strides = a.get_ints("strides", {1, 1});
    c.group = a.get_int("group", 1);
    c.offset_group = a.get_int("offset_group", 1);
    if (c.dilations.size() != 2 || c.pads.size() != 4 || c.strides.size() != 2)
        unsupported("DeformConv: only 2-D convolutions are supported");
    // Bounded so that the output sizes and sample positions stay inside int64 (a stride of 0
    // was a division by zero).
    constexpr int64_t kMax = int64_t{1} << 40;
    for (const int64_t v : c.strides)
        if (v < 1 || v > kMax) fail("DeformConv: strides must lie in [1, 2^40]");
    for (const int64_t v : c.dilations)
        if (v < 1 || v > kMax) fail("DeformConv: dilations must lie in [1, 2^40]");
    for (const int64_t v : c.pads)
        if (v < 0 || v > kMax) fail("DeformConv: pads must lie in [0, 2^40]");
    return half_via_float([c](KernelContext& ctx) {
        const DeformShapes s = deform_shapes(ctx, c);
        const std::vector<double> x = doubles(ctx.input(0)), w = doubles(ctx.input(1)),
                                  off = doubles(ctx.input(2));
        const std::vector<double> b =
            ctx.has_input(3) ? doubles(ctx.input(3)) : std::vector<double>{};
        const std::vector<double> mask =
            ctx.has_input(4) ? doubles(ctx.input(4)) : std::vector<double>{};
        Tensor out = Tensor::zeros(ctx.input(0).dtype(), {s.n, s.oc, s.oh, s.ow});
        const std::vector<double>* m = ctx.has_input(4) ? &mask : nullptr;
        dispatch_float(out.dtype(), "DeformConv", [&]<typename T>() {
            T* dst = reinterpret_cast<T*>(out.mutable_bytes());
            const auto rows = [&](int64_t begin, int64_t end) {  // rows (n, o, i) of the output
                for (int64_t row = begin; row < end; ++row) {
                    const int64_t n = row / (s.oc * s.oh), o = row / s.oh % s.oc, i = row % s.oh;
                    const double bias = b.empty() ? 0.0 : b[static_cast<size_t>(o)];
                    for (int64_t j = 0; j < s.ow; ++j)
                        dst[row * s.ow + j] =
                            static_cast<T>(bias + deform_at(s, c, x, w, off, m, n, o, i, j));
                }
            };
            const int64_t total = s.n * s.oc * s.oh;
            if (ctx.pool() && total * s.ow * s.icg * s.kh * s.kw > (1 << 14))
                ctx.pool()->parallel_for(total, 4, rows);
            else
                rows(0, total);
        });
        ctx.set_output(0, std::move(out));
    });
}

}  // namespace

void register_deform_conv_ops(OpTable& t) {
    t.add("DeformConv", 19, NumericContract::kApproximate, make_deform_conv);
}

}  // namespace pg::ops
