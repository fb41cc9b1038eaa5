// Cast's conversion to the narrow types, for code outside the op table that must encode values
// exactly as Cast does (reading bfloat16 / float8 inputs saved as float32: data/npy.cc).
#pragma once

#include "base/float8.h"
#include "tensor/tensor.h"

namespace pg::ops {

// Cast's options for narrow targets: saturate (float8 / float4 overflow clamps to the largest
// finite value) and FLOAT8E8M0's rounding.
struct CastOptions {
    bool saturate = true;
    E8M0Rounding round = E8M0Rounding::kUp;
};

// A native (float32, float64, integer, bool) tensor cast to float16 / bfloat16 / float8 /
// float4 / float8e8m0 / 4- and 2-bit integers: each value encoded from double with one rounding
// to nearest even, packed as ONNX packs sub-byte types.
Tensor cast_to_narrow(const Tensor& src, DataType target, const CastOptions& o);

}  // namespace pg::ops
