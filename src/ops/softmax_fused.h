// A Softmax or LogSoftmax whose input is a Mul or Div by one float32 constant (attention's
// scores scaled by 1 / sqrt(d)) run as one kernel, instead of the whole scaled tensor being
// written and read back: a Softmax's rows go through softmax_row_scaled, which scales each value
// as it reads it; a LogSoftmax's rows are scaled into a row buffer, then normalized from there
// while it is in L1. Each scaled value is the Mul's (x * s) or the Div's (x / s), and the row
// kernels do softmax_row_fast's operations, so the values are bit-identical to the two plain
// kernels (tests/unit/session_fuse_test.cc). The runtime decides what to fuse
// (runtime/fuse_softmax.cc).
#pragma once

#include <cstdint>

#include "ops/kernel.h"

namespace pg::ops {

// What the fused step computes: the Softmax's axis attribute and opset (before 13 the input is
// coerced to 2-D at the axis), LogSoftmax or not, and whether the constant divides.
struct ScaledSoftmax {
    int64_t axis = -1;
    int64_t opset = 13;
    bool log = false;
    bool divide = false;
};

// The fused kernel: inputs x and the constant (one element), one output, the Softmax's. The fast
// path needs float32 x and constant and a softmax axis along contiguous rows (the last axis, or
// any axis before opset 13); anything else runs `plain`, which must run the two unfused kernels
// on the same inputs.
KernelFn make_scaled_softmax(ScaledSoftmax spec, KernelFn plain);

// Tests and benches: a Softmax's rows are scaled as they are read (softmax_row_scaled: on, the
// default) or through the row buffer as a LogSoftmax's (off); the same values. Returns the
// previous setting.
bool set_softmax_scaled_rows(bool on);

}  // namespace pg::ops
