// Loading and saving ONNX model files. This is the only public header of the onnx layer:
// protobuf types never leave it. Loading checks structure (names, producers, cycles, tensor
// sizes, external-data paths) and never needs kernels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "ir/model.h"

namespace pg::onnx {

struct LoadOptions {
    // Folder that external-data locations are relative to; empty = the model's folder.
    std::string external_data_dir;
    // Load the structure only: externally stored tensors become placeholders that keep their
    // reference (and are written back as references when saved).
    bool ignore_external_data = false;
};

// Reads and checks a model file. Throws pg::Error (kIo, kInvalidInput, kUnsupported) naming the
// file and the problem.
std::unique_ptr<ir::Model> load_model(const std::string& path, const LoadOptions& options = {});

// Parses a model from memory. External data, if any, is read relative to
// options.external_data_dir (refused when that is empty).
std::unique_ptr<ir::Model> parse_model(const uint8_t* data, size_t size,
                                       const LoadOptions& options = {});

struct SaveOptions {
    // Store tensors as external data in this file, relative to the model's folder.
    std::optional<std::string> external_data_path;
    // Tensors smaller than this stay inside the model file (with external data on).
    uint64_t external_data_size_threshold = 1024;
};

// Model files larger than this are saved with external data automatically.
constexpr uint64_t kAutoExternalDataBytes = uint64_t{1800} << 20;

// Writes the model (and its external data file) atomically: temporary names, then rename.
void save_model(const ir::Model& model, const std::string& path, const SaveOptions& options = {});

// Serializes a model with every tensor inline. Throws kUnsupported past protobuf's 2 GiB limit.
std::string serialize_model(const ir::Model& model);

}  // namespace pg::onnx
