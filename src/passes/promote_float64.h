// Promotion of a float32 model to float64 end to end: the golden reference behind
// `--ref-precision fp64`. Types, initializers, constant attributes and Cast targets that say
// float32 become float64, in every graph, subgraph and function.
#pragma once

#include <cstddef>

namespace pg::ir {
struct Model;
}

namespace pg::passes {

struct PromoteFloat64Report {
    size_t values = 0;        // value types changed
    size_t initializers = 0;  // initializers converted
    size_t attributes = 0;    // attributes changed (tensors, Cast 'to', value_float(s))
};

// Rewrites `m` in place. Throws kUnsupported for a BitCast of float32 (its result depends on
// float32's bits), before changing anything in that graph.
//   before: x:float32 -> Cast(to=FLOAT) -> Add(w:float32)   after: x:float64 -> Cast(to=DOUBLE) -> Add(w:float64)
PromoteFloat64Report promote_to_float64(ir::Model& m);

}  // namespace pg::passes
