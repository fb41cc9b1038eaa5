// Choosing graph outputs (`--outputs NAME... | mark all`, `--exclude-outputs`; polygraphy-spec.md
// §2.10). Newly marked outputs keep whatever type the model records for them (possibly none).
#pragma once

#include <string>
#include <vector>

namespace pg::ir {
class Graph;
}

namespace pg::passes {

struct OutputsReport {
    std::vector<std::string> outputs;  // graph outputs after the pass, in order
};

// Replaces the graph outputs by the named values. Throws kInvalidInput listing every unknown name.
//   before: outputs {y}   set_outputs({"t", "y"})   after: outputs {t, y}
OutputsReport set_outputs(ir::Graph& g, const std::vector<std::string>& names);

// Marks every output of every non-Constant node, in node order, once each.
//   before: [Constant -> c, Add(x, c) -> t, Relu(t) -> y], outputs {y}   after: outputs {t, y}
OutputsReport mark_all_outputs(ir::Graph& g);

// Removes the named values from the graph outputs. Throws kInvalidInput for a name that is not
// an output.  before: outputs {t, y}   exclude_outputs({"t"})   after: outputs {y}
OutputsReport exclude_outputs(ir::Graph& g, const std::vector<std::string>& names);

}  // namespace pg::passes
