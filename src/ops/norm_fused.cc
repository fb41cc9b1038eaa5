// The fused BatchNormalization + Relu kernel (see norm_fused.h).
#include "ops/norm_fused.h"

#include "ops/normalization_kernels.h"

namespace pg::ops {

KernelFn make_batch_norm_relu(double epsilon, KernelFn plain) {
    return [epsilon, plain = std::move(plain)](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        bool fits = x.dtype() == DataType::kFloat32 && x.rank() >= 2 && ctx.num_outputs() == 1;
        for (size_t i = 1; fits && i < 5; ++i)
            fits = ctx.has_input(i) && ctx.input(i).dtype() == DataType::kFloat32 &&
                   ctx.input(i).numel() == static_cast<uint64_t>(x.dims()[1]);
        if (!fits) return plain(ctx);
        Tensor y = Tensor::uninitialized(x.dtype(), x.dims());
        batch_norm_fast(x, ctx.input(1).data<float>(), ctx.input(2).data<float>(),
                        ctx.input(3).data<float>(), ctx.input(4).data<float>(), epsilon,
                        reinterpret_cast<float*>(y.mutable_bytes()), ctx.pool(), true);
        ctx.set_output(0, std::move(y));
    };
}

}  // namespace pg::ops
