// Reading the data sets of ONNX's backend node tests (test_data_set_N/input_K.pb,
// output_K.pb), shared by the conformance suite, the sweeps and the fp64 suite.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "onnx/tensor_file.h"
#include "ops/rt_value.h"

namespace pg::test {

// The read_value_pb hint for a value of v's declared type: "sequence", "optional" or "tensor"
// (also when v is nullptr or untyped).
std::string pb_hint_for(const ir::Value* v);

// A stored value as the session takes it (an empty optional: RtValue()).
ops::RtValue to_rt_value(const onnx::StoredValue& v);

// The .pb file at `path`, read as the input `v` (may be nullptr) declares it.
ops::RtValue read_node_test_input(const std::string& path, const ir::Value* v);

// "" when every value of `actual` is within rtol 1e-3, atol 1e-5 of `expected`'s (NaN matching
// NaN), whatever their types; else the first difference.
std::string values_differ(const Tensor& expected, const Tensor& actual);

// A run's outputs (name and tensor, nullptr for a sequence or optional; in g's output order)
// against data/output_K.pb: "" when all agree (values_differ), else the first difference. Only
// outputs stored as the type g declares are compared (older test sets store bfloat16 as uint16).
std::string outputs_differ(const ir::Graph& g, const std::string& data,
                           const std::vector<std::pair<std::string, const Tensor*>>& outputs);

}  // namespace pg::test
