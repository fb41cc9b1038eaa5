// A runner executes a model on some backend: the reference interpreter (--ref), ONNX Runtime
// (--onnxrt), later the emulator and GPU backends. `run` compares runners through this
// interface only. Implementations live beside it, one file each.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/model.h"
#include "ir/type.h"
#include "tensor/tensor.h"

namespace pg::runners {

struct TensorMeta {
    std::string name;
    DataType dtype = DataType::kUndefined;
    std::optional<ir::Shape> shape;  // nullopt when the rank is unknown
};

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

// Receives the tensors of a streaming run as they are produced, in execution order.
class TensorSink {
  public:
    virtual ~TensorSink() = default;
    // `producer` is the node that produced `name` (its name; may be empty).
    virtual void on_tensor(const std::string& producer, const std::string& name,
                           const Tensor& t) = 0;
};

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

    // Layer-wise comparison: a runner either streams every intermediate tensor to a sink as it
    // is produced (in-process runners), or can be rebuilt with chosen intermediates marked as
    // outputs (external runtimes). Both default to "not supported".
    virtual bool can_stream() const { return false; }
    // Runs once, handing every tensor produced by a top-level node to `sink`; returns the outputs.
    virtual NamedTensors infer_streaming(const std::map<std::string, Tensor>& feeds,
                                         TensorSink& sink);
    // A new runner on the same model whose outputs are exactly `names` (graph outputs or
    // intermediate tensors), or nullptr when this runner cannot mark outputs.
    virtual std::unique_ptr<Runner> with_outputs(const std::vector<std::string>& names) const;
    // A runner of the same kind and options on another model (which must outlive it), or
    // nullptr when not supported. Used to re-run single nodes (--attribute-error).
    virtual std::unique_ptr<Runner> for_model(const ir::Model& model) const;
};

// "<prefix>-N<count>-<MM/DD/YY>-<HH:MM:SS>", counting per prefix within the process.
std::string make_runner_name(const std::string& prefix);

}  // namespace pg::runners
