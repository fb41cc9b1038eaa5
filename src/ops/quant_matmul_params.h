// Zero points and scales of MatMulInteger's and QLinearMatMul's operands, in every form the ONNX
// spec allows: a scalar (per tensor); for `a`, one value per row ([M], or [..., M, 1]); for `b`,
// one value per column ([N], or [..., 1, N]). N-D forms broadcast over the batch dims as numpy
// does. Anything else (a shape that does not broadcast to the operand, or values that vary along
// the summed K axis) is kInvalidInput naming the op.
#pragma once

#include <cstdint>
#include <vector>

#include "tensor/tensor.h"

namespace pg::ops {

// Which operand a parameter belongs to.
enum class MatmulSide { kA, kB };

// The operand's values minus its zero point (none: the values as they are).
std::vector<int64_t> matmul_shifted(const Tensor& operand, const Tensor* zero_point,
                                    MatmulSide side, const char* op);

// The requantization multipliers float(a_scale * b_scale / y_scale) of an output of shape
// `out` (MatMul's of a and b): one value when both scales are scalars, else one per output
// element. y_scale must be a single value.
std::vector<double> matmul_multipliers(const Tensor& a, const Tensor& a_scale, const Tensor& b,
                                       const Tensor& b_scale, const Tensor& y_scale,
                                       const std::vector<int64_t>& out, const char* op);

}  // namespace pg::ops
