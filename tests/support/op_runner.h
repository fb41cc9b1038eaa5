// Runs one ONNX node on given tensors through the reference runtime (unit tests of kernels).
//   auto out = test::run_op("Add", {a, b});            // -> vector<Tensor>
//   auto out = test::run_op("Softmax", {x}, ir::attrs(ir::Attribute::make_int("axis", 1)), 13);
#pragma once

#include <string>
#include <vector>

#include "ir/attribute.h"
#include "tensor/tensor.h"

namespace pg::test {

// Builds a one-node model (inputs x0, x1, ...; an empty Tensor with kUndefined dtype = omitted
// input) at `opset`, runs it with `threads` threads (single-threaded by default) and returns the
// tensor outputs.
std::vector<Tensor> run_op(const std::string& op_type, const std::vector<Tensor>& inputs,
                           std::vector<ir::Attribute> attrs = {}, int64_t opset = 17,
                           size_t num_outputs = 1, int threads = 1);

// A float32 tensor from values.
Tensor f32(std::vector<int64_t> dims, std::vector<float> values);
// An int64 tensor from values.
Tensor i64(std::vector<int64_t> dims, std::vector<int64_t> values);
// Values of a float32 tensor.
std::vector<float> values_f32(const Tensor& t);

}  // namespace pg::test
