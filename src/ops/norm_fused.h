// BatchNormalization whose only reader is Relu, run as one kernel: batch_norm_fast with Relu's
// arithmetic on each value as it is written (one pass and one tensor less), bit-identical to
// the two plain kernels one after another (tests/unit/session_fuse_test.cc). The runtime decides
// what to fuse (runtime/fuse_bn.cc).
#pragma once

#include "ops/kernel.h"

namespace pg::ops {

// The fused kernel: inputs X, scale, B, mean, var (BatchNormalization's, inference); one output,
// Relu's. Anything but float32 with C-sized parameters runs `plain`, which must run the two
// unfused kernels on the same inputs.
KernelFn make_batch_norm_relu(double epsilon, KernelFn plain);

}  // namespace pg::ops
