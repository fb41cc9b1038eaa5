// A runner executes a model on some backend: the reference interpreter (--ref), ONNX Runtime
// (--onnxrt), later the emulator and GPU backends. `run` compares runners through this
// interface only. Implementations live beside it, one file each.
#pragma once

#include <map>
#include <optional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ir/type.h"
#include "tensor/tensor.h"

namespace pg::runners {

struct TensorMeta {
    std::string name;
    DataType dtype = DataType::kUndefined;
    std::optional<ir::Shape> shape;  // nullopt when the rank is unknown
};

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

class Runner {
public:
    virtual ~Runner() = default;
    // Polygraphy-style runner name, e.g. "onnxrt-runner-N0-11/29/26-15:04:05".
    virtual const std::string& name() const = 0;
    // The model inputs the runner expects (initializer-backed inputs excluded).
    virtual std::vector<TensorMeta> input_metadata() const = 0;
    // Runs once. `feeds` maps input names to tensors; returns every output in graph order.
    virtual NamedTensors infer(const std::map<std::string, Tensor>& feeds) = 0;
    // Wall time of the last infer() call, in seconds.
    virtual double last_inference_time() const = 0;
};

// "<prefix>-N<count>-<MM/DD/YY>-<HH:MM:SS>", counting per prefix within the process.
std::string make_runner_name(const std::string& prefix);

}  // namespace pg::runners
