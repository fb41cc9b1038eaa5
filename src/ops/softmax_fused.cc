// The scaled Softmax kernel (softmax_fused.h).
#include "ops/softmax_fused.h"

#include <algorithm>
#include <atomic>
#include <utility>
#include <vector>

#include "ops/gemm_kernels.h"
#include "ops/softmax_kernels.h"

namespace pg::ops {

namespace {

std::atomic<bool> g_scaled_rows{true};  // set_softmax_scaled_rows

constexpr int64_t kGrain = 16384;  // elements per part at least, as the plain Softmax's

// The row length of x's softmax under `spec` when its rows are contiguous; 0 when they are not
// (or the axis is out of range, which the plain kernel reports).
int64_t contiguous_row(const Tensor& x, const ScaledSoftmax& spec) {
    const int64_t rank = x.rank();
    const int64_t axis = spec.axis < 0 ? spec.axis + rank : spec.axis;
    const bool coerce_2d = spec.opset < 13;
    if (axis < 0 || axis > rank || (!coerce_2d && axis != rank - 1)) return 0;
    int64_t n = 1;
    for (int64_t d = axis; d < rank; ++d) n *= x.dims()[d];
    return n;
}

}  // namespace

bool set_softmax_scaled_rows(bool on) {
    return g_scaled_rows.exchange(on);
}

KernelFn make_scaled_softmax(ScaledSoftmax spec, KernelFn plain) {
    return [spec, plain = std::move(plain)](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        const Tensor& s = ctx.input(1);
        const bool fits = x.dtype() == DataType::kFloat32 && s.dtype() == DataType::kFloat32 &&
                          s.numel() == 1 && s.rank() <= x.rank() && x.numel() > 0;
        const int64_t n = fits ? contiguous_row(x, spec) : 0;
        if (n <= 0) return plain(ctx);
        const float scale = s.data<float>()[0];
        Tensor y = Tensor::uninitialized(DataType::kFloat32, x.dims());
        float* dst = reinterpret_cast<float*>(y.mutable_bytes());
        const float* src = x.data<float>();
        const int64_t rows = static_cast<int64_t>(x.numel()) / n;
        const bool scaled_rows = !spec.log && g_scaled_rows.load(std::memory_order_relaxed);
        const auto run = [&](int64_t b, int64_t e) {
            if (scaled_rows) {
                for (int64_t r = b; r < e; ++r)
                    softmax_row_scaled(src + r * n, scale, spec.divide, dst + r * n, n);
                return;
            }
            // The scaled row, which LogSoftmax reads again after the exponentials are written.
            thread_local std::vector<float> row;
            row.resize(static_cast<size_t>(n));
            for (int64_t r = b; r < e; ++r) {
                const float* in = src + r * n;
                if (spec.divide)
                    for (int64_t j = 0; j < n; ++j) row[static_cast<size_t>(j)] = in[j] / scale;
                else
                    for (int64_t j = 0; j < n; ++j) row[static_cast<size_t>(j)] = in[j] * scale;
                softmax_row_fast(row.data(), dst + r * n, n, spec.log);
            }
        };
        const int64_t grain = std::max<int64_t>(1, kGrain / n);
        run_affine(rows * n > kGrain ? ctx.pool() : nullptr, rows, grain, run);
        ctx.set_output(0, std::move(y));
    };
}

}  // namespace pg::ops
