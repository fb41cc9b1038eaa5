// Shape inference by running the model (Polygraphy's fallback shape inference, polygraphy-spec.md
// §2.9, §8.1 step 4): the model is run once with the reference interpreter on synthetic inputs,
// and the dtype and shape of every tensor a main-graph node produces is written into that value's
// type. Shapes become static: they are the shapes of this one run.
//
// Synthetic inputs (values chosen to avoid run-time errors, not to be realistic): floating-point
// inputs are filled with 0.5, integer inputs with 1 (a valid index into any non-empty axis of
// size > 1, and never a zero divisor), bool inputs with true; other types are zero-filled.
// Dynamic dims come from `input_shapes`, else they become 1 with Polygraphy's data-loader warning.
// To record more (sequence types, subgraph values): extend the hook in infer_shapes.cc.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/model.h"

namespace pg::runtime {

struct InferShapesReport {
    // The shape each fed input had, by name.
    std::map<std::string, std::vector<int64_t>> input_shapes;
    // Inputs whose dynamic dims were set to 1 (no shape given for them).
    std::vector<std::string> defaulted_inputs;
    // Values whose type was written (intermediates and graph outputs).
    size_t values_typed = 0;
};

// Runs `m` once and records the dtype and shape of every produced tensor of the main graph:
// intermediate values get `in_value_info = true`, graph outputs keep their place in the outputs.
// Graph inputs are left as they are. Throws kUnsupported listing ops without a kernel, and the
// failing node's error (with "while running node ..." context) when a kernel fails.
//   before: x [float32, ('N', 4)] -> Relu -> r (no type) -> Neg -> y (no type)
//   after (input_shapes {x: [2, 4]}): r [float32, (2, 4)] in value_info, y [float32, (2, 4)]
InferShapesReport infer_shapes_by_running(
    ir::Model& m, const std::map<std::string, std::vector<int64_t>>& input_shapes = {});

}  // namespace pg::runtime
