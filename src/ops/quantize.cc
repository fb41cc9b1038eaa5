// Quantization: QuantizeLinear, DequantizeLinear (per tensor, per axis, blocked; int8/uint8,
// int16/uint16, int32, int4/uint4, float8 formats), DynamicQuantizeLinear.
#include <cmath>
#include <limits>

#include "base/float16.h"
#include "base/float8.h"
#include "ir/graph.h"
#include "ops/op_table.h"
#include "ops/quant_util.h"
#include "ops/tensor_util.h"

namespace pg::ops {

namespace {

// For element i of x: the index of its scale / zero point (per tensor, per axis, or blocked).
struct ScaleIndexer {
    int64_t axis = 0, block = 0, axis_len = 1, inner = 1, scale_axis_len = 1;
    bool per_tensor = true;
    int64_t operator()(int64_t i) const {
        if (per_tensor) return 0;
        const int64_t a = (i / inner) % axis_len;
        const int64_t outer = i / (inner * axis_len);
        if (block == 0) return a;
        return (outer * scale_axis_len + a / block) * inner + i % inner;
    }
};

ScaleIndexer make_indexer(const Tensor& x, const Tensor& scale, int64_t axis, int64_t block,
                          const char* op) {
    ScaleIndexer ix;
    if (scale.numel() == 1 && scale.rank() <= 1 && block == 0) return ix;
    ix.per_tensor = false;
    ix.axis = normalize_axis(axis, x.rank(), op);
    ix.axis_len = x.dims()[static_cast<size_t>(ix.axis)];
    for (size_t k = static_cast<size_t>(ix.axis) + 1; k < x.dims().size(); ++k)
        ix.inner *= x.dims()[k];
    if (block < 0) fail(std::string(op) + ": block_size must not be negative");
    ix.block = block;
    if (block == 0) {
        if (scale.rank() != 1 || scale.dims()[0] != ix.axis_len)
            fail(std::string(op) + ": per-axis scale must be 1-D with " +
                 std::to_string(ix.axis_len) + " values");
        return ix;
    }
    if (scale.rank() != x.rank())
        fail(std::string(op) + ": blocked scale must have the rank of the input");
    ix.scale_axis_len = scale.dims()[static_cast<size_t>(ix.axis)];
    if (ix.axis_len / block + (ix.axis_len % block != 0) != ix.scale_axis_len)
        fail(std::string(op) + ": scale does not match block_size");
    return ix;
}

DataType quantized_type(KernelContext& ctx, int64_t output_dtype) {
    if (ctx.has_input(2)) return ctx.input(2).dtype();
    if (output_dtype != 0) return static_cast<DataType>(output_dtype);
    return DataType::kUInt8;
}

// A float type attribute (DequantizeLinear's output_dtype, QuantizeLinear's precision): 0 when
// absent, else float32, float16 or bfloat16.
DataType float_type_attr(const Attrs& a, const char* name, const char* op) {
    const int64_t v = a.get_int(name, 0);
    const auto dt = static_cast<DataType>(v);
    if (v != 0 && dt != DataType::kFloat32 && dt != DataType::kFloat16 && dt != DataType::kBFloat16)
        fail(std::string(op) + ": " + name + " " + std::to_string(v) +
             " is not float, float16 or bfloat16");
    return dt;
}

// QuantizeLinear's attributes by version: axis from 13, saturate from 19, block_size and
// output_dtype from 21, precision (the division's type) from 23.
struct QuantizeAttrs {
    int64_t axis = 1, block = 0, output_dtype = 0;
    bool saturate = true;
    DataType precision = DataType::kUndefined;
};

QuantizeAttrs quantize_attrs(const Attrs& a, int64_t opset) {
    QuantizeAttrs q;
    if (opset >= 13) q.axis = a.get_int("axis", 1);
    if (opset >= 19) q.saturate = a.get_flag("saturate", true);
    if (opset >= 21) {
        q.block = a.get_int("block_size", 0);
        q.output_dtype = a.get_int("output_dtype", 0);
    }
    if (opset >= 23) q.precision = float_type_attr(a, "precision", "QuantizeLinear");
    return q;
}

// x / scale as QuantizeLinear divides: in `precision` when given (both rounded to it, the
// quotient too), else in x's precision (float32 unless float64), as ONNX does.
double quantize_quotient(const Tensor& x, double xs, double sc, DataType precision) {
    if (precision != DataType::kUndefined)
        return round_to_float_type(
            precision, round_to_float_type(precision, xs) / round_to_float_type(precision, sc));
    return x.dtype() == DataType::kFloat64
               ? xs / sc
               : static_cast<double>(static_cast<float>(xs) / static_cast<float>(sc));
}

KernelFn make_quantize(const Attrs& a, int64_t opset) {
    const QuantizeAttrs q = quantize_attrs(a, opset);
    const int64_t axis = q.axis, block = q.block, output_dtype = q.output_dtype;
    const bool saturate = q.saturate;
    return [=](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        const Tensor& scale = ctx.input(1);
        const DataType qt = quantized_type(ctx, output_dtype);
        if (output_dtype != 0 && ctx.has_input(2) && static_cast<DataType>(output_dtype) != qt)
            fail("QuantizeLinear: output_dtype " + std::to_string(output_dtype) +
                 " differs from the zero point's type " + dtype_name(qt));
        const ScaleIndexer ix = make_indexer(x, scale, axis, block, "QuantizeLinear");
        QuantWriter w(qt, x.dims(), saturate);
        // A float8 zero point is not added (ONNX's reference and ONNX Runtime; FLOAT4E2M1's is).
        const bool add_zp = ctx.has_input(2) && !(dtype_bits(qt) == 8 && minifloat_format(qt));
        for (uint64_t i = 0; i < x.numel(); ++i) {
            const int64_t s = ix(static_cast<int64_t>(i));
            const double zp =
                add_zp ? ctx.input(2).element_as_double(static_cast<uint64_t>(s)) : 0.0;
            const double xs = x.element_as_double(i),
                         sc = scale.element_as_double(static_cast<uint64_t>(s));
            w.set(i, quantize_quotient(x, xs, sc, q.precision), zp);
        }
        ctx.set_output(0, w.take());
    };
}

// DequantizeLinear's attributes by version: axis from 13, block_size from 21, output_dtype from
// 23 (the output's type, and the multiplication's: the scale is rounded to it first).
KernelFn make_dequantize(const Attrs& a, int64_t opset) {
    const int64_t axis = opset >= 13 ? a.get_int("axis", 1) : 1;
    const int64_t block = opset >= 21 ? a.get_int("block_size", 0) : 0;
    const DataType output_dtype =
        opset >= 23 ? float_type_attr(a, "output_dtype", "DequantizeLinear") : DataType::kUndefined;
    return [=](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        const Tensor& scale = ctx.input(1);
        const ScaleIndexer ix = make_indexer(x, scale, axis, block, "DequantizeLinear");
        const bool retyped = output_dtype != DataType::kUndefined && output_dtype != scale.dtype();
        const DataType out_type = retyped ? output_dtype : scale.dtype();
        std::vector<double> v(x.numel());
        for (uint64_t i = 0; i < x.numel(); ++i) {
            const int64_t s = ix(static_cast<int64_t>(i));
            const double zp =
                ctx.has_input(2) ? ctx.input(2).element_as_double(static_cast<uint64_t>(s)) : 0.0;
            const double sc = scale.element_as_double(static_cast<uint64_t>(s));
            v[i] = (x.element_as_double(static_cast<uint64_t>(i)) - zp) *
                   (retyped ? round_to_float_type(out_type, sc) : sc);
        }
        ctx.set_output(0, float_tensor(out_type, x.dims(), v));
    };
}

KernelFn make_dynamic_quantize(const Attrs&, int64_t) {
    return [](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        float lo = 0, hi = 0;
        for (uint64_t i = 0; i < x.numel(); ++i) {
            lo = std::min(lo, static_cast<float>(x.element_as_double(i)));
            hi = std::max(hi, static_cast<float>(x.element_as_double(i)));
        }
        const float scale = (hi - lo) / 255.0f;
        const float zp_f =
            scale == 0 ? 0.0f : std::nearbyint(std::clamp(-lo / scale, 0.0f, 255.0f));
        QuantWriter w(DataType::kUInt8, x.dims(), true);
        for (uint64_t i = 0; i < x.numel(); ++i)
            w.set(i,
                  scale == 0
                      ? 0.0
                      : static_cast<double>(static_cast<float>(x.element_as_double(i)) / scale),
                  zp_f);
        ctx.set_output(0, w.take());
        ctx.set_output(1, Tensor::from_values<float>(DataType::kFloat32, {}, {scale}));
        ctx.set_output(
            2, Tensor::from_values<uint8_t>(DataType::kUInt8, {}, {static_cast<uint8_t>(zp_f)}));
    };
}

}  // namespace

void register_quantize_ops(OpTable& t) {
    using C = NumericContract;
    t.add("QuantizeLinear", 10, C::kRounding, make_quantize);
    t.add("DequantizeLinear", 10, C::kRounding, make_dequantize);
    t.add("DynamicQuantizeLinear", 11, C::kRounding, make_dynamic_quantize);
    register_quantized_linear_ops(t);
}

}  // namespace pg::ops
