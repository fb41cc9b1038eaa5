// MatMulInteger / QLinearMatMul zero points and scales: see quant_matmul_params.h.
#include "ops/quant_matmul_params.h"

#include <string>

#include "ops/broadcast.h"
#include "ops/kernel.h"
#include "ops/tensor_util.h"

namespace pg::ops {

namespace {

// The dims a non-scalar parameter of `operand` (rank >= 2) is read with: a 1-D one per row of
// `a` ([M] as [M, 1]) or per column of `b` ([N] as [1, N]); an N-D one as it is, which must
// broadcast to the operand and hold one value along K.
Dims param_dims(const Tensor& p, const Dims& operand, MatmulSide side, const char* op,
                const char* what) {
    const bool a = side == MatmulSide::kA;
    Dims pd = p.dims();
    if (pd.size() == 1) pd = a ? Dims{pd[0], 1} : Dims{1, pd[0]};
    bool ok = operand.size() >= 2 && pd.size() >= 2 && pd.size() <= operand.size();
    for (size_t k = 0; ok && k < pd.size(); ++k) {
        const int64_t pk = pd[pd.size() - 1 - k], dk = operand[operand.size() - 1 - k];
        ok = pk == 1 || pk == dk;
    }
    if (ok && pd[pd.size() - (a ? 1 : 2)] == 1) return pd;
    fail(std::string(op) + ": a " + what + " of shape " + dims_text(p.dims()) + " for input " +
         (a ? "A" : "B") + " of shape " + dims_text(operand) + " (a scalar, or one value per " +
         (a ? "row: [M] or [..., M, 1])" : "column: [N] or [..., 1, N])"));
}

// The strides a parameter is read with over `out`: all 0 for a scalar.
Dims param_strides(const Tensor& p, const Dims& operand, const Dims& out, MatmulSide side,
                   const char* op) {
    if (p.numel() == 1) return Dims(out.size(), 0);
    return broadcast_strides(param_dims(p, operand, side, op, "scale"), out);
}

}  // namespace

std::vector<int64_t> matmul_shifted(const Tensor& operand, const Tensor* zero_point,
                                    MatmulSide side, const char* op) {
    std::vector<int64_t> v(operand.numel());
    for (uint64_t i = 0; i < operand.numel(); ++i)
        v[i] = static_cast<int64_t>(operand.element_as_double(i));
    if (!zero_point) return v;
    const Tensor& zp = *zero_point;
    if (zp.numel() == 1) {
        const int64_t z = static_cast<int64_t>(zp.element_as_double(0));
        for (int64_t& x : v) x -= z;
        return v;
    }
    const Dims& d = operand.dims();
    const Dims zs = broadcast_strides(param_dims(zp, d, side, op, "zero point"), d);
    for_each_broadcast2(d, broadcast_strides(d, d), zs, [&](int64_t o, int64_t, int64_t iz) {
        v[static_cast<size_t>(o)] -= static_cast<int64_t>(zp.element_as_double(uint64_t(iz)));
    });
    return v;
}

std::vector<double> matmul_multipliers(const Tensor& a, const Tensor& a_scale, const Tensor& b,
                                       const Tensor& b_scale, const Tensor& y_scale,
                                       const std::vector<int64_t>& out, const char* op) {
    const double ys = scalar_value(y_scale, "y_scale");
    const auto one = [ys](double as, double bs) {
        return static_cast<double>(static_cast<float>(as * bs / ys));
    };
    if (a_scale.numel() == 1 && b_scale.numel() == 1)
        return {one(scalar_value(a_scale, "a_scale"), scalar_value(b_scale, "b_scale"))};
    Dims full = out;  // with the M or N axis a 1-D operand dropped
    if (b.rank() == 1) full.push_back(1);
    if (a.rank() == 1) full.insert(full.end() - 1, 1);
    const Dims sa = param_strides(a_scale, a.dims(), full, MatmulSide::kA, op);
    const Dims sb = param_strides(b_scale, b.dims(), full, MatmulSide::kB, op);
    const std::string prefix = std::string(op) + ": ";
    std::vector<double> mult(
        static_cast<size_t>(checked_output_count(full, 8, prefix.c_str(), "")));
    for_each_broadcast2(full, sa, sb, [&](int64_t o, int64_t ia, int64_t ib) {
        mult[static_cast<size_t>(o)] = one(a_scale.element_as_double(static_cast<uint64_t>(ia)),
                                           b_scale.element_as_double(static_cast<uint64_t>(ib)));
    });
    return mult;
}

}  // namespace pg::ops
