// Subgraph extraction (`surgeon extract`, polygraphy-spec.md §8.1): the named tensors become the
// graph's inputs and outputs, their producers are cut off, and everything not needed is removed.
// Types come from the caller or from what the model already records (value_info, inputs,
// initializers); shape inference is not run (it comes with the reference interpreter).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/dtype.h"
#include "ir/type.h"

namespace pg::ir {
class Graph;
}

namespace pg::passes {

// A tensor named on the command line, with the metadata the user gave (nullopt = `auto`).
struct TensorSpec {
    std::string name;
    std::optional<DataType> dtype;
    std::optional<ir::Shape> shape;
};

struct ExtractOptions {
    // New graph inputs, in order; empty keeps the current inputs.
    std::vector<TensorSpec> inputs;
    // New graph outputs, in order; empty keeps the current outputs.
    std::vector<TensorSpec> outputs;
    // Leave metadata the model does not record unknown instead of failing (override_input_shapes
    // uses this for the inputs it does not change).
    bool allow_missing_types = false;
};

struct ExtractReport {
    size_t nodes_removed = 0;
    size_t values_removed = 0;
    // Values read by the remaining nodes that nothing defines: the cut is incomplete.
    std::vector<std::string> unbound;
};

// Fills a spec's missing dtype and shape from the model (inputs need both, outputs a dtype).
// Throws kInvalidInput for an unknown name; kUnsupported when the model does not record enough
// and `strict` is set.
TensorSpec resolve_spec(const ir::Graph& g, const TensorSpec& spec, bool is_input,
                        bool strict = true);

// Cuts g down to the part between options.inputs and options.outputs.
//   before: [Mul(a, x1) -> m, Add(m, b) -> s, Add(x0, s) -> Y]   inputs {x1}, outputs {s}
//   after:  [Mul(a, x1) -> m, Add(m, b) -> s], inputs {x1}, outputs {s}
ExtractReport extract(ir::Graph& g, const ExtractOptions& options);

}  // namespace pg::passes
