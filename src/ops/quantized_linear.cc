// Integer linear ops: MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv. Products are
// accumulated exactly in int64 on zero-point-shifted values; QLinear ops then requantize with
// round-half-to-even and saturation, as ONNX's reference does.
#include <cmath>

#include "ir/graph.h"
#include "ops/broadcast.h"
#include "ops/op_table.h"
#include "ops/quant_util.h"
#include "ops/tensor_util.h"

namespace pg::ops {

namespace {

// Values of t minus a zero point (scalar, or per index `axis` of length zp.numel()).
std::vector<int64_t> shifted(const Tensor& t, const Tensor* zp, int64_t axis) {
    std::vector<int64_t> v(t.numel());
    int64_t inner = 1, len = 1;
    if (zp && zp->numel() > 1) {
        len = t.dims()[static_cast<size_t>(axis)];
        for (size_t k = static_cast<size_t>(axis) + 1; k < t.dims().size(); ++k)
            inner *= t.dims()[k];
    }
    for (uint64_t i = 0; i < t.numel(); ++i) {
        const int64_t zi = zp && zp->numel() > 1 ? (static_cast<int64_t>(i) / inner) % len : 0;
        v[i] = static_cast<int64_t>(t.element_as_double(static_cast<uint64_t>(i))) -
               (zp ? static_cast<int64_t>(zp->element_as_double(static_cast<uint64_t>(zi))) : 0);
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
        auto r = int_matmul(shifted(a, azp, a.rank() - 2), a.dims(), shifted(b, bzp, b.rank() - 1),
                            b.dims());
        ctx.set_output(0, int32_tensor(r.dims, r.values));
    };
}

// Requantizes accumulator values: round(v * multiplier[channel]) + zp, saturated to `dt`.
Tensor requantize(const std::vector<int64_t>& acc, const std::vector<int64_t>& dims,
                  const std::vector<double>& mult, int64_t channel_axis, const Tensor& y_zp) {
    QuantWriter w(y_zp.dtype(), dims, true);
    int64_t inner = 1;
    for (size_t k = static_cast<size_t>(channel_axis) + 1; k < dims.size(); ++k) inner *= dims[k];
    const int64_t len = mult.size() > 1 ? dims[static_cast<size_t>(channel_axis)] : 1;
    const double zp = y_zp.element_as_double(0);
    for (size_t i = 0; i < acc.size(); ++i) {
        const double m =
            mult[mult.size() > 1 ? static_cast<size_t>((static_cast<int64_t>(i) / inner) % len)
                                 : 0];
        w.set(i, static_cast<double>(acc[i]) * m, zp);
    }
    return w.take();
}

KernelFn make_qlinear_matmul(const Attrs&, int64_t) {
    return [](KernelContext& ctx) {
        const Tensor& a = ctx.input(0);
        const Tensor& b = ctx.input(3);
        auto r = int_matmul(shifted(a, &ctx.input(2), a.rank() - 2), a.dims(),
                            shifted(b, &ctx.input(5), b.rank() - 1), b.dims());
        const Tensor& bs = ctx.input(4);
        std::vector<double> mult;
        for (uint64_t k = 0; k < bs.numel(); ++k)
            mult.push_back(static_cast<double>(static_cast<float>(
                ctx.input(1).element_as_double(0) * bs.element_as_double(static_cast<uint64_t>(k)) /
                ctx.input(6).element_as_double(0))));
        ctx.set_output(0, requantize(r.values, r.dims, mult,
                                     static_cast<int64_t>(r.dims.size()) - 1, ctx.input(7)));
    };
}

struct ConvGeometry {
    std::vector<int64_t> kernel, strides, dilations, pads;  // pads: begins then ends
    int64_t group = 1;
    std::string auto_pad = "NOTSET";
};

ConvGeometry conv_geometry(const Attrs& a) {
    return {a.get_ints("kernel_shape"), a.get_ints("strides"), a.get_ints("dilations"),
            a.get_ints("pads"),         a.get_int("group", 1), a.get_string("auto_pad", "NOTSET")};
}

// Resolves defaults and auto_pad for input spatial dims `in` and kernel dims `k`; returns out dims.
std::vector<int64_t> resolve_geometry(ConvGeometry& g, const std::vector<int64_t>& in,
                                      const std::vector<int64_t>& k) {
    const size_t n = in.size();
    g.kernel = k;
    if (g.strides.empty()) g.strides.assign(n, 1);
    if (g.dilations.empty()) g.dilations.assign(n, 1);
    if (g.pads.empty()) g.pads.assign(2 * n, 0);
    std::vector<int64_t> out(n);
    for (size_t i = 0; i < n; ++i) {
        const int64_t span = g.dilations[i] * (k[i] - 1) + 1;
        if (g.auto_pad == "SAME_UPPER" || g.auto_pad == "SAME_LOWER") {
            out[i] = (in[i] + g.strides[i] - 1) / g.strides[i];
            const int64_t total = std::max<int64_t>(0, (out[i] - 1) * g.strides[i] + span - in[i]);
            g.pads[i] = g.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
            g.pads[n + i] = total - g.pads[i];
        } else {
            if (g.auto_pad == "VALID") g.pads[i] = g.pads[n + i] = 0;
            out[i] = (in[i] + g.pads[i] + g.pads[n + i] - span) / g.strides[i] + 1;
        }
    }
    return out;
}

// Direct N-D grouped convolution on shifted integers. Returns [N, M, out...] accumulators.
std::vector<int64_t> int_conv(const std::vector<int64_t>& x, const Dims& xd,
                              const std::vector<int64_t>& w, const Dims& wd, ConvGeometry& g,
                              Dims* out_dims) {
    const Dims in(xd.begin() + 2, xd.end()), k(wd.begin() + 2, wd.end());
    const Dims out = resolve_geometry(g, in, k);
    const int64_t N = xd[0], C = xd[1], M = wd[0], cg = C / g.group, mg = M / g.group;
    if (wd[1] != cg) fail("ConvInteger: weight channels do not match input channels / group");
    int64_t osz = 1, isz = 1, ksz = 1;
    for (size_t i = 0; i < in.size(); ++i) osz *= out[i], isz *= in[i], ksz *= k[i];
    std::vector<int64_t> acc(static_cast<size_t>(N * M * osz), 0);
    std::vector<int64_t> opos(in.size()), kpos(in.size());
    for (int64_t n = 0; n < N; ++n)
        for (int64_t m = 0; m < M; ++m)
            for (int64_t o = 0; o < osz; ++o) {
                for (int64_t r = o, d = static_cast<int64_t>(in.size()) - 1; d >= 0; --d)
                    opos[static_cast<size_t>(d)] = r % out[static_cast<size_t>(d)],
                    r /= out[static_cast<size_t>(d)];
                int64_t s = 0;
                for (int64_t c = 0; c < cg; ++c)
                    for (int64_t kk = 0; kk < ksz; ++kk) {
                        int64_t xi = 0;
                        bool inside = true;
                        for (int64_t r = kk, d = static_cast<int64_t>(in.size()) - 1; d >= 0; --d) {
                            const size_t dd = static_cast<size_t>(d);
                            kpos[dd] = r % k[dd];
                            r /= k[dd];
                        }
                        for (size_t d = 0; d < in.size(); ++d) {
                            const int64_t p =
                                opos[d] * g.strides[d] + kpos[d] * g.dilations[d] - g.pads[d];
                            if (p < 0 || p >= in[d]) inside = false;
                            xi = xi * in[d] + p;
                        }
                        if (!inside) continue;
                        const int64_t ch = (m / mg) * cg + c;
                        s += x[static_cast<size_t>((n * C + ch) * isz + xi)] *
                             w[static_cast<size_t>((m * cg + c) * ksz + kk)];
                    }
                acc[static_cast<size_t>((n * M + m) * osz + o)] = s;
            }
    *out_dims = {N, M};
    out_dims->insert(out_dims->end(), out.begin(), out.end());
    return acc;
}

KernelFn make_conv_integer(const Attrs& a, int64_t) {
    const ConvGeometry geom = conv_geometry(a);
    return [geom](KernelContext& ctx) {
        ConvGeometry g = geom;
        const Tensor& x = ctx.input(0);
        const Tensor& w = ctx.input(1);
        Dims dims;
        auto acc =
            int_conv(shifted(x, ctx.has_input(2) ? &ctx.input(2) : nullptr, 1), x.dims(),
                     shifted(w, ctx.has_input(3) ? &ctx.input(3) : nullptr, 0), w.dims(), g, &dims);
        ctx.set_output(0, int32_tensor(dims, acc));
    };
}

KernelFn make_qlinear_conv(const Attrs& a, int64_t) {
    const ConvGeometry geom = conv_geometry(a);
    return [geom](KernelContext& ctx) {
        ConvGeometry g = geom;
        const Tensor& x = ctx.input(0);
        const Tensor& w = ctx.input(3);
        Dims dims;
        auto acc = int_conv(shifted(x, &ctx.input(2), 1), x.dims(), shifted(w, &ctx.input(5), 0),
                            w.dims(), g, &dims);
        if (ctx.has_input(8)) {  // int32 bias per output channel
            const Tensor& bias = ctx.input(8);
            const int64_t osz = static_cast<int64_t>(acc.size()) / (dims[0] * dims[1]);
            for (size_t i = 0; i < acc.size(); ++i)
                acc[i] += static_cast<int64_t>(bias.element_as_double(
                    static_cast<uint64_t>((static_cast<int64_t>(i) / osz) % dims[1])));
        }
        const Tensor& ws = ctx.input(4);
        std::vector<double> mult;
        for (uint64_t k = 0; k < ws.numel(); ++k)
            mult.push_back(static_cast<double>(static_cast<float>(
                ctx.input(1).element_as_double(0) * ws.element_as_double(static_cast<uint64_t>(k)) /
                ctx.input(6).element_as_double(0))));
        ctx.set_output(0, requantize(acc, dims, mult, 1, ctx.input(7)));
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
