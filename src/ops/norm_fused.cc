// The fused BatchNormalization + per-channel Mul / Add + Relu kernel (see norm_fused.h).
#include "ops/norm_fused.h"

#include "ops/normalization_kernels.h"

namespace pg::ops {

namespace {

bool f32_with(const KernelContext& ctx, size_t i, uint64_t count) {
    return ctx.has_input(i) && ctx.input(i).dtype() == DataType::kFloat32 &&
           ctx.input(i).numel() == count;
}

}  // namespace

KernelFn make_batch_norm_chain(const BatchNormChain& chain, KernelFn plain) {
    return [chain, plain = std::move(plain)](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        bool fits = x.dtype() == DataType::kFloat32 && x.rank() >= 2 && ctx.num_outputs() == 1;
        const uint64_t c = fits ? static_cast<uint64_t>(x.dims()[1]) : 0;
        for (size_t i = 1; fits && i < 5; ++i) fits = f32_with(ctx, i, c);
        size_t next = 5;
        const float* factor[2] = {nullptr, nullptr};
        for (int f = 0; f < 2 && fits; ++f) {
            const std::vector<int64_t>& dims = f == 0 ? chain.mul_dims : chain.add_dims;
            if (dims.empty()) continue;
            fits =
                f32_with(ctx, next, c) && per_channel_dims(dims, x.rank(), static_cast<int64_t>(c));
            if (fits) factor[f] = ctx.input(next++).data<float>();
        }
        if (!fits) return plain(ctx);
        Tensor y = Tensor::uninitialized(x.dtype(), x.dims());
        batch_norm_fast(x, ctx.input(1).data<float>(), ctx.input(2).data<float>(),
                        ctx.input(3).data<float>(), ctx.input(4).data<float>(), chain.epsilon,
                        reinterpret_cast<float*>(y.mutable_bytes()), ctx.pool(), chain.relu,
                        factor[0], factor[1]);
        ctx.set_output(0, std::move(y));
    };
}

bool per_channel_dims(const std::vector<int64_t>& dims, size_t rank, int64_t channels) {
    if (dims.empty() || dims.size() > rank || rank - dims.size() > 1) return false;
    const size_t lead = rank - dims.size();  // axes the broadcast adds in front (0 or 1)
    for (size_t i = 0; i < dims.size(); ++i)
        if (dims[i] != (lead + i == 1 ? channels : 1)) return false;
    return true;
}

}  // namespace pg::ops
