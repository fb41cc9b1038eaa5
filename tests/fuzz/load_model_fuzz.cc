// libFuzzer target: pg::onnx::parse_model on arbitrary bytes. A pg::Error is the expected answer
// to broken input; an internal error (kInternal, which is also what with_context turns stray
// std::exceptions into), any other exception, a crash, a sanitizer report, a hang or a huge
// allocation is a bug. A model that loads must also survive a save/load round trip.
// Build and run: `make fuzz` (tools/fuzz.sh).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "base/error.h"
#include "base/log.h"
#include "onnx/model_io.h"

namespace {

// Serializes a loaded model and loads it again: what we accept, we must be able to write back.
void round_trip(const pg::ir::Model& model) {
    std::string bytes;
    try {
        bytes = pg::onnx::serialize_model(model);
    } catch (const pg::Error& e) {
        if (e.kind() == pg::ErrorKind::kUnsupported) return;  // e.g. past protobuf's 2 GiB
        throw;
    }
    try {
        pg::onnx::parse_model(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    } catch (const pg::Error& e) {
        std::fprintf(stderr, "a loaded model did not load again after saving: %s\n", e.what());
        std::abort();
    }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    pg::logger().set_threshold(pg::Severity::kCritical);  // warnings about odd models are noise
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::unique_ptr<pg::ir::Model> model;
    try {
        model = pg::onnx::parse_model(data, size);
    } catch (const pg::Error& e) {
        if (e.kind() != pg::ErrorKind::kInternal) return 0;
        std::fprintf(stderr, "internal error on input: %s\n", e.what());
        std::abort();
    }
    round_trip(*model);
    return 0;
}
