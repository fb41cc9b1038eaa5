// BatchNormalization whose only reader is a per-channel Mul, then Add, and/or Relu (each optional,
// in that order), run as one kernel: batch_norm_fast with the factors and Relu's arithmetic on
// each value as it is written (one pass, no intermediate tensors), bit-identical to the plain
// kernels one after another (tests/unit/session_fuse_test.cc). The runtime decides what to fuse
// (runtime/fuse_bn.cc).
#pragma once

#include <cstdint>
#include <vector>

#include "ops/kernel.h"

namespace pg::ops {

struct BatchNormChain {
    double epsilon = 1e-5;
    std::vector<int64_t> mul_dims;  // non-empty: a Mul by a factor of these dims follows
    std::vector<int64_t> add_dims;  // non-empty: then an Add of a factor of these dims
    bool relu = false;              // then Relu
};

// The fused kernel: inputs X, scale, B, mean, var (BatchNormalization's, inference), then the
// Mul's and the Add's factors when present (read with any shape holding `channels` values); one
// output, the last op's. Anything but float32 with C-sized parameters and factors broadcasting
// per channel (per_channel_dims) runs `plain`, which must run the unfused kernels on the same
// inputs.
KernelFn make_batch_norm_chain(const BatchNormChain& chain, KernelFn plain);

// A factor of shape `dims` broadcasts one value per channel along axis 1 of a rank-`rank`
// tensor with `channels` channels: right-aligned, it is 1 everywhere but there.
bool per_channel_dims(const std::vector<int64_t>& dims, size_t rank, int64_t channels);

}  // namespace pg::ops
