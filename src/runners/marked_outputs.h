// `--onnx-outputs` with a single runner (Polygraphy's `run --onnxrt --onnx-outputs mark all
// --validate` / `--save-outputs`): the runner's outputs become exactly the chosen tensors, which
// then go through the ordinary run (validation, saved outputs, comparison with loaded ones).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runners/runner.h"

namespace pg::runners {

// A runner whose infer() returns exactly `names`, in that order: runner.with_outputs(names)
// where the runner can mark outputs (ONNX Runtime), else a view of `runner` (which must outlive
// it) that streams a run and keeps the named tensors (the reference and the emulator). A name
// the run does not produce (a graph input, an initializer) is left out. kUnsupported when the
// runner can do neither.
std::unique_ptr<Runner> with_marked_outputs(Runner& runner, const std::vector<std::string>& names);

}  // namespace pg::runners
