// Helpers for quantized ops: reading quantized and float elements as double, writing quantized
// outputs with round-half-to-even and saturation (integers, int4/uint4 packing, float8).
#pragma once

#include <vector>

#include "ops/kernel.h"

namespace pg::ops {

class OpTable;

// A float tensor of type dt (float32, float16, bfloat16, float64) from values.
Tensor float_tensor(DataType dt, const std::vector<int64_t>& dims, const std::vector<double>& v);

// Builds a quantized tensor element by element: value = saturate(round_half_even(x) + zp)
// for integer types; float8 types store x + zp converted with `saturate` (QuantizeLinear passes
// zp 0 for them).
class QuantWriter {
  public:
    QuantWriter(DataType dt, std::vector<int64_t> dims, bool saturate);
    void set(uint64_t i, double x, double zero_point);
    Tensor take() { return std::move(out_); }

  private:
    DataType dt_;
    bool saturate_;
    Tensor out_;
    uint8_t* bytes_;
};

// v rounded to float type dt (float32, float16, bfloat16; float64 leaves it), as a double.
double round_to_float_type(DataType dt, double v);

// Saturating round-half-to-even into [lo, hi].
double round_saturate(double v, double lo, double hi);

// MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv (quantized_linear.cc).
void register_quantized_linear_ops(OpTable& t);

}  // namespace pg::ops
