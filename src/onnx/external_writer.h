// Internal: appends tensor bytes to one external-data file while a model is being exported.
#pragma once

#include <memory>
#include <string>

#include "base/fs.h"

namespace pg::onnx {

class ExternalDataWriter {
public:
    // `location` is what the model records (relative); `full_path` is where the bytes go.
    ExternalDataWriter(std::string location, const std::string& full_path, uint64_t threshold)
        : location_(std::move(location)), file_(full_path), threshold_(threshold) {}

    // True when a tensor of this many bytes goes to the external file.
    bool takes(uint64_t nbytes) const { return nbytes >= threshold_ && nbytes > 0; }
    // Appends bytes (64-byte aligned) and returns their offset.
    uint64_t append(const uint8_t* data, uint64_t size);
    const std::string& location() const { return location_; }
    uint64_t bytes_written() const { return file_.size(); }
    void commit() { file_.commit(); }

private:
    std::string location_;
    AtomicFile file_;
    uint64_t threshold_;
};

}  // namespace pg::onnx
