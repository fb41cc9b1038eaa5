// What `inspect model` prints: Polygraphy's text layout (polygraphy-spec.md §9.1) and a JSON
// summary for machines.
#pragma once

#include <string>

#include "ir/model.h"

namespace pg::cli {

struct ShowOptions {
    bool layers = false;
    bool attrs = false;
    bool weights = false;
};

// The body logged under "==== ONNX Model ====".
std::string model_text(const ir::Model& m, const ShowOptions& show);

// The JSON summary (pretty-printed, 2-space indent).
std::string model_json(const ir::Model& m);

}  // namespace pg::cli
