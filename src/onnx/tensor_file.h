// Single values stored as protobuf files, as ONNX's test data folders hold them
// (test_data_set_N/input_K.pb): a TensorProto, a SequenceProto of tensors, or an OptionalProto.
#pragma once

#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace pg::onnx {

enum class StoredKind { kTensor, kSequence, kNone };

// A value read from a .pb file: its name (may be empty) and contents.
struct StoredValue {
    std::string name;
    StoredKind kind = StoredKind::kTensor;
    Tensor tensor;                // kTensor
    std::vector<Tensor> sequence; // kSequence
};

// Reads a .pb file. `hint` says which message to expect: "tensor", "sequence" or "optional"
// (ONNX's test data does not record it; ask the model's input type). Throws kInvalidInput.
StoredValue read_value_pb(const std::string& path, const std::string& hint = "tensor");

// Writes a tensor as a TensorProto file (raw_data), atomically.
void write_tensor_pb(const std::string& path, const std::string& name, const Tensor& t);

}  // namespace pg::onnx
