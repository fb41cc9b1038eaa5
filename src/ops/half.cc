#include "ops/half.h"

#include <cstring>

#include "base/float16.h"
#include "ir/graph.h"
#include "ops/dispatch.h"

namespace pg::ops {

bool is_half(DataType dt) {
    return dt == DataType::kFloat16 || dt == DataType::kBFloat16;
}

Tensor widen_half(const Tensor& t) {
    if (!is_half(t.dtype())) return t;
    Tensor out = Tensor::uninitialized(DataType::kFloat32, t.dims());
    float* dst = reinterpret_cast<float*>(out.mutable_bytes());
    const uint16_t* src = t.data<uint16_t>();
    const bool bf = t.dtype() == DataType::kBFloat16;
    for (uint64_t i = 0; i < t.numel(); ++i)
        dst[i] = bf ? bfloat16_bits_to_float(src[i]) : half_bits_to_float(src[i]);
    return out;
}

Tensor narrow_half(const Tensor& t, DataType target) {
    if (!is_half(target) || t.dtype() != DataType::kFloat32) return t;
    Tensor out = Tensor::uninitialized(target, t.dims());
    uint16_t* dst = reinterpret_cast<uint16_t*>(out.mutable_bytes());
    const float* src = t.data<float>();
    const bool bf = target == DataType::kBFloat16;
    for (uint64_t i = 0; i < t.numel(); ++i)
        dst[i] = bf ? float_to_bfloat16_bits(src[i]) : float_to_half_bits(src[i]);
    return out;
}

KernelFn half_via_float(KernelFn kernel) {
    return [kernel = std::move(kernel)](KernelContext& ctx) {
        DataType half = DataType::kUndefined;
        for (size_t i = 0; i < ctx.num_inputs() && half == DataType::kUndefined; ++i)
            if (ctx.has_input(i) && ctx.value(i)->is_tensor() && is_half(ctx.input(i).dtype()))
                half = ctx.input(i).dtype();
        if (half == DataType::kUndefined) return kernel(ctx);
        std::vector<RtValue> widened(ctx.num_inputs());
        std::vector<const RtValue*> ptrs(ctx.num_inputs(), nullptr);
        for (size_t i = 0; i < ctx.num_inputs(); ++i) {
            if (!ctx.value(i)) continue;
            widened[i] =
                ctx.value(i)->is_tensor() ? RtValue::of(widen_half(ctx.input(i))) : *ctx.value(i);
            ptrs[i] = &widened[i];
        }
        KernelContext inner(ctx.node(), std::move(ptrs), ctx.num_outputs(), ctx.pool(), nullptr);
        kernel(inner);
        for (size_t i = 0; i < ctx.num_outputs(); ++i) {
            RtValue& v = inner.outputs()[i];
            if (v.is_tensor())
                ctx.set_output(i, narrow_half(v.tensor(), half));
            else
                ctx.set_output(i, std::move(v));
        }
    };
}

void unsupported_type(const char* op, DataType dt) {
    throw Error(ErrorKind::kUnsupported,
                std::string(op) + " does not support data type " + dtype_name(dt));
}

}  // namespace pg::ops
