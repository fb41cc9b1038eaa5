// libFuzzer target: arbitrary bytes loaded as a model and, when they load, run on the reference
// interpreter with Polygraphy's random inputs, as `polygraph run --ref` runs it. Mutated models
// reach attribute parsing, shape inference, planning, fusion and every kernel with shapes and
// attributes nobody wrote a test for. A pg::Error other than kInternal is the expected answer to a
// broken model; kInternal, any other exception, a crash, a sanitizer report, a hang or a large
// allocation is a bug. Tensors and checked working sets are held under a 256 MiB memory ceiling
// (base/heap.h), so a model that asks for more is refused as a user would see it; an allocation
// that bypasses the check shows up as libFuzzer's malloc limit.
// Build and run: `make fuzz FUZZ_TARGET=run_model_fuzz` (tools/fuzz.sh).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "base/error.h"
#include "base/heap.h"
#include "base/log.h"
#include "data/data_loader.h"
#include "onnx/model_io.h"
#include "runners/ref_runner.h"

namespace {

constexpr uint64_t kCeiling = 256ull << 20;  // bytes a model may ask for
constexpr uint64_t kMaxInputElements = 1 << 20;
constexpr size_t kMaxNodes = 256;  // larger graphs only slow the fuzzer down

// Whether the model's inputs, as the data loader will make them, stay small.
bool small_inputs(const std::vector<pg::runners::TensorMeta>& inputs) {
    for (const pg::runners::TensorMeta& in : inputs) {
        if (!in.shape) continue;
        uint64_t n = 1;
        for (const pg::ir::Dim& d : *in.shape) {
            const uint64_t v = d.is_known() && *d.value > 0 ? static_cast<uint64_t>(*d.value) : 1;
            if (v > kMaxInputElements || (n *= v) > kMaxInputElements) return false;
        }
    }
    return true;
}

// Loads, plans and runs once; pg::Errors propagate.
void load_and_run(const uint8_t* data, size_t size) {
    const std::unique_ptr<pg::ir::Model> model = pg::onnx::parse_model(data, size);
    if (model->graph->num_nodes() > kMaxNodes) return;
    pg::runners::RefRunnerOptions options;
    options.session.threads = 1;
    pg::runners::RefRunner runner(*model, options);
    const std::vector<pg::runners::TensorMeta> inputs = runner.input_metadata();
    if (!small_inputs(inputs)) return;
    const pg::data::DataLoader loader(inputs, {});
    std::map<std::string, pg::Tensor> feeds;
    for (auto& [name, tensor] : loader.get(0)) feeds.emplace(name, std::move(tensor));
    runner.infer(feeds);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    pg::logger().set_threshold(pg::Severity::kCritical);  // warnings about odd models are noise
    pg::set_memory_ceiling(kCeiling);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    try {
        load_and_run(data, size);
    } catch (const pg::Error& e) {
        if (e.kind() != pg::ErrorKind::kInternal) return 0;
        std::fprintf(stderr, "internal error on input: %s\n", e.what());
        std::abort();
    }
    return 0;
}
