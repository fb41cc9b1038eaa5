// One generated array, drawn from a numpy RandomState exactly as Polygraphy's default data
// loader draws it (polygraphy-spec §5.1-5.2): floats via random_sample() * (hi - lo) + lo then
// astype(dtype); integers and bool via randint(lo, hi + 1, dtype). To support a new dtype, add a
// case to random_tensor() that matches what numpy does for it.
#pragma once

#include <cstdint>
#include <vector>

#include "data/numpy_random.h"
#include "tensor/tensor.h"

namespace pg::data {

// An inclusive value range as the user wrote it (cast per dtype when used).
struct ValRange {
    double lo = 0.0;
    double hi = 1.0;
};

// Draws a tensor of `dtype` and `dims` from `rs`, in C order. Floats use [lo, hi); integers use
// [int(lo), int(hi)] (truncated, as Python's int()); bool uses [bool(lo), bool(hi)].
// Throws kUsage for ranges numpy rejects and kUnsupported for dtypes numpy cannot generate.
Tensor random_tensor(NumpyRandomState& rs, DataType dtype, const std::vector<int64_t>& dims,
                     const ValRange& range);

}  // namespace pg::data
