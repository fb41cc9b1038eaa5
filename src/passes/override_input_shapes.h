// Overriding input shapes (`surgeon sanitize --override-input-shapes`, polygraphy-spec.md §8.2):
// the graph inputs take the given shapes and every other recorded shape is cleared, since it
// may no longer hold. Implemented as an extraction whose inputs are the current inputs.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ir/type.h"

namespace pg::ir {
class Graph;
}

namespace pg::passes {

struct OverrideInputShapesReport {
    std::vector<std::string> inputs;  // graph inputs after the pass, in order
    size_t shapes_cleared = 0;        // values (intermediates and outputs) whose shape was dropped
};

// Sets the shapes of the named inputs (symbolic dims allowed) and clears non-input shapes. A
// name that is not yet an input becomes one, as in Polygraphy; an unknown name is kInvalidInput.
//   before: x: float32 (1, 1, 2, 2) -> Identity -> y: float32 (1, 1, 2, 2)
//   override {x: ('batch', 1, 2, 2)}
//   after:  x: float32 ('batch', 1, 2, 2) -> Identity -> y: float32 (shape unknown)
OverrideInputShapesReport override_input_shapes(
    ir::Graph& g, const std::vector<std::pair<std::string, ir::Shape>>& shapes);

}  // namespace pg::passes
