// ONNX type constraints that tie inputs of one op to one element type: both inputs of Add are
// "T", Gemm's A, B and C are "T", Where's X and Y are "T". Kernels that compute float16 and
// bfloat16 in float32 (half.h) see such inputs after widening, so Add(float16, float32) looked
// like float32 + float32 to them and ran, where ONNX (and ONNX Runtime) refuse the model. The
// session wraps each op-table kernel with with_type_groups, which checks the inputs as given.
#pragma once

#include <string>

#include "ops/kernel.h"

namespace pg::ops {

// `kernel` for an op of `domain` / `op_type` at `opset`, refusing (kInvalidInput, naming the op,
// the inputs and their types) a call whose present tensor inputs of one type group differ in
// element type. Ops without such a group get `kernel` back as it is.
KernelFn with_type_groups(const std::string& domain, const std::string& op_type, int64_t opset,
                          KernelFn kernel);

}  // namespace pg::ops
