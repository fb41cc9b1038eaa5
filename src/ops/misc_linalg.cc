// Small numeric ops without a family: Shrink (opset 9) and Det (opset 11).
// Shrink: y = x + bias if x < -lambd, x - bias if x > lambd, else 0 (computed in double and
// cast back, so integer inputs truncate as ONNX's reference's astype does).
// Det: determinant of the last two (square) axes by LU decomposition with partial pivoting, in
// double. float16/bfloat16 go through float32 (half_via_float).
#include <cmath>

#include "ir/graph.h"
#include "ops/dispatch.h"
#include "ops/half.h"
#include "ops/op_table.h"

namespace pg::ops {

namespace {

KernelFn make_shrink(const Attrs& a, int64_t) {
    const double bias = a.get_float("bias", 0.0f), lambd = a.get_float("lambd", 0.5f);
    return half_via_float([bias, lambd](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        Tensor out = Tensor::zeros(x.dtype(), x.dims());
        dispatch_numeric(x.dtype(), "Shrink", [&]<typename T>() {
            const T* src = x.data<T>();
            T* dst = reinterpret_cast<T*>(out.mutable_bytes());
            for (uint64_t i = 0; i < x.numel(); ++i) {
                const double v = static_cast<double>(src[i]);
                dst[i] = static_cast<T>(v < -lambd ? v + bias : v > lambd ? v - bias : 0.0);
            }
        });
        ctx.set_output(0, std::move(out));
    });
}

// Determinant of the n x n row-major matrix m (destroyed).
double determinant(std::vector<double>& m, int64_t n) {
    double det = 1;
    for (int64_t k = 0; k < n; ++k) {
        int64_t piv = k;
        for (int64_t i = k + 1; i < n; ++i)
            if (std::fabs(m[size_t(i * n + k)]) > std::fabs(m[size_t(piv * n + k)])) piv = i;
        if (m[size_t(piv * n + k)] == 0) return 0.0;
        if (piv != k) {
            for (int64_t j = 0; j < n; ++j) std::swap(m[size_t(k * n + j)], m[size_t(piv * n + j)]);
            det = -det;
        }
        const double p = m[size_t(k * n + k)];
        det *= p;
        for (int64_t i = k + 1; i < n; ++i) {
            const double f = m[size_t(i * n + k)] / p;
            for (int64_t j = k + 1; j < n; ++j) m[size_t(i * n + j)] -= f * m[size_t(k * n + j)];
        }
    }
    return det;
}

KernelFn make_det(const Attrs&, int64_t) {
    return half_via_float([](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        const int64_t r = x.rank();
        if (r < 2 || x.dims()[size_t(r - 1)] != x.dims()[size_t(r - 2)])
            fail("Det: input must be [*, M, M]");
        const int64_t n = x.dims()[size_t(r - 1)];
        const std::vector<int64_t> out_dims(x.dims().begin(), x.dims().end() - 2);
        Tensor out = Tensor::zeros(x.dtype(), out_dims);
        dispatch_float(x.dtype(), "Det", [&]<typename T>() {
            const T* src = x.data<T>();
            T* dst = reinterpret_cast<T*>(out.mutable_bytes());
            std::vector<double> m(size_t(n * n));
            for (uint64_t b = 0; b < out.numel(); ++b) {
                for (size_t i = 0; i < m.size(); ++i)
                    m[i] = static_cast<double>(src[b * m.size() + i]);
                dst[b] = static_cast<T>(determinant(m, n));
            }
        });
        ctx.set_output(0, std::move(out));
    });
}

}  // namespace

void register_misc_linalg_ops(OpTable& t) {
    using C = NumericContract;
    t.add("Shrink", 9, C::kRounding, make_shrink);
    t.add("Det", 11, C::kApproximate, make_det);
}

}  // namespace pg::ops
