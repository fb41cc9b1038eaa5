// float16 / bfloat16 support for kernels written for float: such ops are computed in float32 and
// their float outputs rounded back to the input's 16-bit type (round to nearest even).
#pragma once

#include "ops/kernel.h"

namespace pg::ops {

// A float32 copy of a float16 / bfloat16 tensor (other tensors are returned as they are).
Tensor widen_half(const Tensor& t);
// `t` (float32) rounded to `target` (float16 or bfloat16); other targets return t.
Tensor narrow_half(const Tensor& t, DataType target);
bool is_half(DataType dt);

// Wraps a float kernel so that float16 / bfloat16 inputs are widened before it runs and its
// float32 outputs narrowed back to the half type of the first half input.
KernelFn half_via_float(KernelFn kernel);

}  // namespace pg::ops
