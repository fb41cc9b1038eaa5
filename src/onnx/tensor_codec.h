// Internal: conversion between TensorProto and NamedTensor, including external data.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "base/fs.h"
#include "ir/attribute.h"
#include "onnx/model_split.h"
#include "onnx/onnx.pb.h"

namespace pg::onnx {

// Opens external-data files once per load and checks every reference against them.
class ExternalDataReader {
  public:
    ExternalDataReader(std::string base_dir, bool ignore)
        : base_dir_(std::move(base_dir)), ignore_(ignore) {}
    // Zero-copy view of a tensor's external bytes. Throws kInvalidInput on a bad reference.
    Tensor read(const onnxpb::TensorProto& tp, ir::ExternalRef* ref);
    // The raw_data of `tp`, split out of the file (onnx/model_split.h; its field in `tp` left
    // empty): handed over once, to the tensor decoded from `tp`.
    void add_split(const onnxpb::TensorProto* tp, SplitPayload payload) {
        split_[tp] = std::move(payload);
    }
    std::optional<SplitPayload> take_split(const onnxpb::TensorProto* tp);

  private:
    std::map<const onnxpb::TensorProto*, SplitPayload> split_;
    std::string base_dir_;
    bool ignore_ = false;
    std::map<std::string, std::shared_ptr<MappedFile>> files_;
};

// Decodes a TensorProto (raw, typed fields or external). Steals raw_data from `tp`.
ir::NamedTensor import_tensor(onnxpb::TensorProto& tp, ExternalDataReader& ext);

// Where export_tensor writes bytes that go to external data (null = keep everything inline).
class ExternalDataWriter;

// Encodes a tensor into `tp`: raw_data (string_data for STRING), or external data when `ext`
// takes it.
void export_tensor(const ir::NamedTensor& t, onnxpb::TensorProto* tp, ExternalDataWriter* ext);

}  // namespace pg::onnx
