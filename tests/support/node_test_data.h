// Reading the data sets of ONNX's backend node tests (test_data_set_N/input_K.pb), shared by the
// conformance suite and the type sweep.
#pragma once

#include <string>

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

}  // namespace pg::test
