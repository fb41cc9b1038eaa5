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

KernelFn make_quantize(const Attrs& a, int64_t opset) {
    const int64_t axis = a.get_int("axis", 1), block = a.get_int("block_size", 0);
    const bool saturate = a.get_flag("saturate", true);
    const int64_t output_dtype = a.get_int("output_dtype", 0);
    return [=](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        const Tensor& scale = ctx.input(1);
        const DataType qt = quantized_type(ctx, output_dtype);
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
            // The division happens in the input's precision (float32 unless float64), as ONNX does.
            w.set(i,
                  x.dtype() == DataType::kFloat64
                      ? xs / sc
                      : static_cast<double>(static_cast<float>(xs) / static_cast<float>(sc)),
                  zp);
        }
        ctx.set_output(0, w.take());
    };
}

KernelFn make_dequantize(const Attrs& a, int64_t) {
    const int64_t axis = a.get_int("axis", 1), block = a.get_int("block_size", 0);
    return [=](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        const Tensor& scale = ctx.input(1);
        const ScaleIndexer ix = make_indexer(x, scale, axis, block, "DequantizeLinear");
        const DataType out_type = scale.dtype();
        std::vector<double> v(x.numel());
        for (uint64_t i = 0; i < x.numel(); ++i) {
            const int64_t s = ix(static_cast<int64_t>(i));
            const double zp =
                ctx.has_input(2) ? ctx.input(2).element_as_double(static_cast<uint64_t>(s)) : 0.0;
            v[i] = (x.element_as_double(static_cast<uint64_t>(i)) - zp) *
                   scale.element_as_double(static_cast<uint64_t>(s));
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
