// The fused MatMul + bias Add kernel (see matmul_fused.h).
#include "ops/matmul_fused.h"

#include "base/thread_pool.h"

#include "ops/gemm_kernels.h"

namespace pg::ops {

namespace {

// The bias broadcasts as one value per output column: [..., 1, N] with N = n.
bool bias_row(const Tensor& bias, int64_t n) {
    const auto& d = bias.dims();
    if (d.empty() || d.back() != n) return false;
    for (size_t i = 0; i + 1 < d.size(); ++i)
        if (d[i] != 1) return false;
    return true;
}

}  // namespace

void matmul_gemm_f32(const GemmArgs<float>& g, ThreadPool* pool) {
    if (g.m * g.n * g.k >= kGemmFastThreshold) return gemm_fast(g, pool);
    gemm_plain(g);
}

bool matmul_products_per_thread(int64_t items, int64_t mnk, const ThreadPool* pool) {
    const int64_t threads = pool ? pool->num_threads() : 1;
    return items > 1 && (mnk < (1 << 18) || items >= 2 * threads);
}

KernelFn make_matmul_bias(KernelFn plain) {
    return [plain = std::move(plain)](KernelContext& ctx) {
        const Tensor& a = ctx.input(0);
        const Tensor& b = ctx.input(1);
        const Tensor& bias = ctx.input(2);
        const bool fits = a.dtype() == DataType::kFloat32 && b.dtype() == DataType::kFloat32 &&
                          bias.dtype() == DataType::kFloat32 && a.rank() >= 2 && b.rank() == 2 &&
                          a.dims().back() == b.dims()[0] && bias_row(bias, b.dims()[1]) &&
                          bias.rank() <= a.rank();
        const int64_t k = fits ? a.dims().back() : 0, n = fits ? b.dims()[1] : 0;
        const int64_t m = k > 0 ? static_cast<int64_t>(a.numel()) / k : 0;
        if (!fits || m * n * k < kGemmFastThreshold) return plain(ctx);
        std::vector<int64_t> dims = a.dims();
        dims.back() = n;
        Tensor y = Tensor::uninitialized(DataType::kFloat32, dims);
        float* out = reinterpret_cast<float*>(y.mutable_bytes());
        GemmEpilogue ep;
        ep.col_bias = bias.data<float>(), ep.col_origin = out, ep.col_ldc = n;
        GemmArgs<float> g;
        g.m = m, g.n = n, g.k = k;
        g.a = a.data<float>(), g.lda = k, g.b = b.data<float>(), g.ldb = n;
        g.c = out, g.ldc = n, g.epilogue = &ep;
        gemm_fast(g, ctx.pool());
        ctx.set_output(0, std::move(y));
    };
}

}  // namespace pg::ops
