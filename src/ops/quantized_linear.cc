// Integer linear ops: MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv. Products are
// accumulated exactly in int64 on zero-point-shifted values; QLinear ops then requantize with
// round-half-to-even and saturation, as ONNX's reference does.
#include <cmath>

#include "ir/graph.h"
#include "ops/broadcast.h"
#include "ops/conv_kernels.h"
#include "ops/op_table.h"
#include "ops/quant_matmul_params.h"
#include "ops/quant_util.h"
#include "ops/tensor_util.h"

namespace pg::ops {

namespace {

// Values of t minus a zero point: a scalar, or one value per index of `axis` (a 1-D zp of that
// dim's length); kInvalidInput naming `what` otherwise.
std::vector<int64_t> shifted(const Tensor& t, const Tensor* zp, int64_t axis, const char* what) {
    const bool per_axis = zp && zp->numel() != 1;
    int64_t inner = 1, len = 1;
    if (per_axis) {
        if (zp->rank() != 1 || axis < 0 || axis >= t.rank() ||
            zp->dims()[0] != t.dims()[static_cast<size_t>(axis)])
            fail(std::string(what) + ": a zero point of shape " + dims_text(zp->dims()) +
                 " for an input of shape " + dims_text(t.dims()) +
                 " (a scalar, or one value per index of axis " + std::to_string(axis) + ")");
        len = zp->dims()[0];
        for (size_t k = static_cast<size_t>(axis) + 1; k < t.dims().size(); ++k)
            inner *= t.dims()[k];
    }
    const int64_t z0 = zp && !per_axis ? static_cast<int64_t>(zp->element_as_double(0)) : 0;
    std::vector<int64_t> v(t.numel());
    for (uint64_t i = 0; i < t.numel(); ++i) {
        const int64_t z = per_axis
                              ? static_cast<int64_t>(zp->element_as_double(
                                    static_cast<uint64_t>((static_cast<int64_t>(i) / inner) % len)))
                              : z0;
        v[i] = static_cast<int64_t>(t.element_as_double(i)) - z;
    }
    return v;
}

struct MatmulResult {
    std::vector<int64_t> values;
    std::vector<int64_t> dims;
};

// Batched integer matmul with numpy semantics (1-D operands promoted, batch dims broadcast).
MatmulResult int_matmul(const std::vector<int64_t>& a, Dims ad, const std::vector<int64_t>& b,
                        Dims bd) {
    if (ad.empty() || bd.empty()) fail("MatMul: operands must have rank >= 1");
    const bool a1 = ad.size() == 1, b1 = bd.size() == 1;
    if (a1) ad.insert(ad.begin(), 1);
    if (b1) bd.push_back(1);
    const int64_t M = ad[ad.size() - 2], K = ad.back(), N = bd.back();
    if (bd[bd.size() - 2] != K) fail("MatMul: inner dimensions differ");
    const Dims abatch(ad.begin(), ad.end() - 2), bbatch(bd.begin(), bd.end() - 2);
    const Dims batch = broadcast_shape(abatch, bbatch);
    const Dims sa = broadcast_strides(abatch, batch), sb = broadcast_strides(bbatch, batch);
    MatmulResult r;
    r.dims = batch;
    Dims all = batch;  // the sums' dims, checked before they are allocated
    all.insert(all.end(), {M, N});
    checked_output_count(all, 12, "MatMul: ", "");  // int64 sums, then int32 / 8-bit values
    int64_t nb = 1;
    for (int64_t d : batch) nb *= d;
    r.values.assign(static_cast<size_t>(nb * M * N), 0);
    for_each_broadcast2(batch, sa, sb, [&](int64_t o, int64_t ia, int64_t ib) {
        for (int64_t m = 0; m < M; ++m)
            for (int64_t n = 0; n < N; ++n) {
                int64_t s = 0;
                for (int64_t k = 0; k < K; ++k)
                    s += a[static_cast<size_t>((ia * M + m) * K + k)] *
                         b[static_cast<size_t>((ib * K + k) * N + n)];
                r.values[static_cast<size_t>((o * M + m) * N + n)] = s;
            }
    });
    if (batch.empty()) nb = 1;
    if (!a1) r.dims.push_back(M);
    if (!b1) r.dims.push_back(N);
    return r;
}

Tensor int32_tensor(const std::vector<int64_t>& dims, const std::vector<int64_t>& v) {
    std::vector<int32_t> w(v.begin(), v.end());
    return Tensor::from_values(DataType::kInt32, dims, w);
}

KernelFn make_matmul_integer(const Attrs&, int64_t) {
    return [](KernelContext& ctx) {
        const Tensor& a = ctx.input(0);
        const Tensor& b = ctx.input(1);
        const Tensor* azp = ctx.has_input(2) ? &ctx.input(2) : nullptr;
        const Tensor* bzp = ctx.has_input(3) ? &ctx.input(3) : nullptr;
        auto r = int_matmul(matmul_shifted(a, azp, MatmulSide::kA, "MatMulInteger"), a.dims(),
                            matmul_shifted(b, bzp, MatmulSide::kB, "MatMulInteger"), b.dims());
        ctx.set_output(0, int32_tensor(r.dims, r.values));
    };
}

// Requantizes accumulator values: round(v * multiplier) + zp, saturated to y_zp's type; one
// multiplier, one per index of `channel_axis`, or (channel_axis -1) one per value.
Tensor requantize(const std::vector<int64_t>& acc, const std::vector<int64_t>& dims,
                  const std::vector<double>& mult, int64_t channel_axis, const Tensor& y_zp,
                  const char* op) {
    const bool each = channel_axis < 0 && mult.size() == acc.size();
    const bool per_channel = !each && mult.size() != 1;
    if (per_channel && (channel_axis < 0 || channel_axis >= static_cast<int64_t>(dims.size()) ||
                        static_cast<int64_t>(mult.size()) != dims[size_t(channel_axis)]))
        fail(std::string(op) + ": " + std::to_string(mult.size()) +
             " weight scales for an output of shape " + dims_text(dims));
    const double zp = scalar_value(y_zp, "y_zero_point");
    QuantWriter w(y_zp.dtype(), dims, true);
    // Value i takes multiplier (i / inner) % len.
    int64_t inner = 1, len = each ? static_cast<int64_t>(acc.size()) : 1;
    if (per_channel) {
        for (size_t k = static_cast<size_t>(channel_axis) + 1; k < dims.size(); ++k)
            inner *= dims[k];
        len = dims[static_cast<size_t>(channel_axis)];
    }
    for (size_t i = 0; i < acc.size(); ++i) {
        const double m = mult[static_cast<size_t>((static_cast<int64_t>(i) / inner) % len)];
        w.set(i, static_cast<double>(acc[i]) * m, zp);
    }
    return w.take();
}

// QLinearConv's x_scale * w_scale[k] / y_scale, rounded to float as ONNX's reference computes
// it, per weight scale (x_scale and y_scale are scalars).
std::vector<double> multipliers(const Tensor& x_scale, const Tensor& w_scale,
                                const Tensor& y_scale) {
    const double xs = scalar_value(x_scale, "x_scale"), ys = scalar_value(y_scale, "y_scale");
    std::vector<double> mult;
    for (uint64_t k = 0; k < w_scale.numel(); ++k)
        mult.push_back(
            static_cast<double>(static_cast<float>(xs * w_scale.element_as_double(k) / ys)));
    return mult;
}

KernelFn make_qlinear_matmul(const Attrs&, int64_t) {
    return [](KernelContext& ctx) {
        const Tensor& a = ctx.input(0);
        const Tensor& b = ctx.input(3);
        const char* op = "QLinearMatMul";
        auto r = int_matmul(matmul_shifted(a, &ctx.input(2), MatmulSide::kA, op), a.dims(),
                            matmul_shifted(b, &ctx.input(5), MatmulSide::kB, op), b.dims());
        const auto mult =
            matmul_multipliers(a, ctx.input(1), b, ctx.input(4), ctx.input(6), r.dims, op);
        ctx.set_output(0, requantize(r.values, r.dims, mult, -1, ctx.input(7), op));
    };
}

// The sum of one output position over the window and the group's input channels: x holds the
// image's channels (in_size values each), w the output channel's weights (kernel_size each).
int64_t window_sum(const int64_t* x, const int64_t* w, int64_t channels, const Window& g,
                   const int64_t o[3]) {
    int64_t s = 0;
    for (int64_t c = 0; c < channels; ++c, x += g.in_size(), w += g.kernel_size())
        for (int64_t k0 = 0; k0 < g.kernel[0]; ++k0) {
            const int64_t p0 = o[0] * g.stride[0] + k0 * g.dil[0] - g.pad_begin[0];
            if (p0 < 0 || p0 >= g.in[0]) continue;
            for (int64_t k1 = 0; k1 < g.kernel[1]; ++k1) {
                const int64_t p1 = o[1] * g.stride[1] + k1 * g.dil[1] - g.pad_begin[1];
                if (p1 < 0 || p1 >= g.in[1]) continue;
                for (int64_t k2 = 0; k2 < g.kernel[2]; ++k2) {
                    const int64_t p2 = o[2] * g.stride[2] + k2 * g.dil[2] - g.pad_begin[2];
                    if (p2 < 0 || p2 >= g.in[2]) continue;
                    s += x[(p0 * g.in[1] + p1) * g.in[2] + p2] *
                         w[(k0 * g.kernel[1] + k1) * g.kernel[2] + k2];
                }
            }
        }
    return s;
}

// Direct grouped convolution of shifted integers: [N, M, out...] sums. The shape comes from
// conv_shape, which checks ranks, channels, group and window as Conv's does.
std::vector<int64_t> int_conv(const std::vector<int64_t>& x, const std::vector<int64_t>& w,
                              const ConvShape& s) {
    const Window& g = s.w;
    // Before out_size(): an empty output's spatial sizes may each be up to 2^60.
    if (checked_output_count(conv_output_dims(s), 12, "ConvInteger: ", "") == 0) return {};
    const int64_t cg = s.c / s.group, mg = s.m / s.group, osz = g.out_size();
    std::vector<int64_t> acc(static_cast<size_t>(s.n * s.m * osz), 0);
    int64_t* out = acc.data();
    for (int64_t n = 0; n < s.n; ++n)
        for (int64_t m = 0; m < s.m; ++m) {
            const int64_t* xg = x.data() + (n * s.c + (m / mg) * cg) * g.in_size();
            const int64_t* wm = w.data() + m * cg * g.kernel_size();
            int64_t o[3];
            for (o[0] = 0; o[0] < g.out[0]; ++o[0])
                for (o[1] = 0; o[1] < g.out[1]; ++o[1])
                    for (o[2] = 0; o[2] < g.out[2]; ++o[2]) *out++ = window_sum(xg, wm, cg, g, o);
        }
    return acc;
}

// The shape of ConvInteger / QLinearConv(x, w): Conv's checks (rank, channels, group, window).
ConvShape int_conv_shape(const ConvAttrs& a, const Tensor& x, const Tensor& w, const char* op) {
    if (x.rank() < 3 || w.rank() != x.rank())
        fail(std::string(op) + ": X must have rank >= 3 and W the same rank");
    return conv_shape(a, x, w, nullptr);
}

KernelFn make_conv_integer(const Attrs& a, int64_t) {
    const ConvAttrs attrs = read_conv_attrs(a);
    return [attrs](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        const Tensor& w = ctx.input(1);
        const ConvShape s = int_conv_shape(attrs, x, w, "ConvInteger");
        const auto acc =
            int_conv(shifted(x, ctx.has_input(2) ? &ctx.input(2) : nullptr, 1, "ConvInteger"),
                     shifted(w, ctx.has_input(3) ? &ctx.input(3) : nullptr, 0, "ConvInteger"), s);
        ctx.set_output(0, int32_tensor(conv_output_dims(s), acc));
    };
}

KernelFn make_qlinear_conv(const Attrs& a, int64_t) {
    const ConvAttrs attrs = read_conv_attrs(a);
    return [attrs](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        const Tensor& w = ctx.input(3);
        const ConvShape s = int_conv_shape(attrs, x, w, "QLinearConv");
        auto acc = int_conv(shifted(x, &ctx.input(2), 1, "QLinearConv"),
                            shifted(w, &ctx.input(5), 0, "QLinearConv"), s);
        const Dims dims = conv_output_dims(s);
        if (ctx.has_input(8)) {  // int32 bias per output channel
            const Tensor& bias = ctx.input(8);
            if (bias.numel() != static_cast<uint64_t>(s.m))
                fail("QLinearConv: B must have M = " + std::to_string(s.m) + " values, got " +
                     std::to_string(bias.numel()));
            const int64_t osz = s.w.out_size();
            for (size_t i = 0; i < acc.size(); ++i)
                acc[i] += static_cast<int64_t>(bias.element_as_double(
                    static_cast<uint64_t>((static_cast<int64_t>(i) / osz) % s.m)));
        }
        const auto mult = multipliers(ctx.input(1), ctx.input(4), ctx.input(6));
        ctx.set_output(0, requantize(acc, dims, mult, 1, ctx.input(7), "QLinearConv"));
    };
}

}  // namespace

void register_quantized_linear_ops(OpTable& t) {
    using C = NumericContract;
    t.add("MatMulInteger", 10, C::kExact, make_matmul_integer);
    t.add("ConvInteger", 10, C::kExact, make_conv_integer);
    t.add("QLinearMatMul", 10, C::kRounding, make_qlinear_matmul);
    t.add("QLinearConv", 10, C::kRounding, make_qlinear_conv);
}

}  // namespace pg::ops
