// Internal helpers of the onnx layer for carrying unknown protobuf fields through the IR.
#pragma once

#include <google/protobuf/unknown_field_set.h>

#include <string>

namespace pg::onnx {

// The message's unknown fields, serialized ("" when there are none).
template <typename Message>
std::string unknown_fields_of(const Message& m) {
    std::string out;
    if (m.unknown_fields().field_count() > 0) m.unknown_fields().SerializeToString(&out);
    return out;
}

// Puts serialized unknown fields back onto a message.
template <typename Message>
void restore_unknown_fields(Message* m, const std::string& bytes) {
    if (!bytes.empty()) m->MergeFromString(bytes);
}

}  // namespace pg::onnx
