// Internal: splits a model file into a small "skeleton" for protobuf and the large raw_data
// payloads of the main graph's initializers, read straight from the file into buffers of their
// exact size. Protobuf grows a long string read from a stream by doubling it, so a 400 MB
// tensor briefly needs 800 MB; the split avoids that (load peak ~ the weights). Only the path
// ModelProto.graph.initializer[i].raw_data is split; everything else is copied verbatim.
// To split more fields (e.g. Constant attributes), extend the rewrite in model_split.cc.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace pg::onnx {

// One split payload: `size` bytes in a buffer at a cache line (base/aligned.h), which the
// initializer's tensor adopts, so that kernels reading weights as vectors read whole lines.
struct SplitPayload {
    std::shared_ptr<uint8_t[]> bytes;
    uint64_t size = 0;
};

struct SplitModel {
    // The file with each split raw_data replaced by an empty raw_data field.
    std::string skeleton;
    // Initializer index (in order of appearance, as protobuf merges them) -> its raw_data bytes.
    std::map<int, SplitPayload> payloads;
};

// Reads the open file `fd` of `size` bytes, splitting out raw_data payloads of at least
// `min_payload` bytes. Returns nullopt when the wire format is not plainly well formed
// (truncated, groups, bad tags); the caller then parses the file as is, which reports the error.
std::optional<SplitModel> split_model_file(int fd, uint64_t size, uint64_t min_payload);

}  // namespace pg::onnx
