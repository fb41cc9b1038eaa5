// Internal to the pooling kernels (pool_kernels.cc, nchwc_pool.cc): the taps inside the input
// per output position along one axis, so the blocked pools visit what the plain ones visit.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "ops/conv_kernels.h"

namespace pg::ops {

// Per output position along one axis: the input index of tap 0, the taps [lo, hi) inside the
// input and the number of taps inside the padded input (visit_window's count).
struct AxisTaps {
    std::vector<int64_t> start, lo, hi, padded;
};

inline AxisTaps axis_taps(const Window& g, int a) {
    AxisTaps t;
    for (int64_t o = 0; o < g.out[a]; ++o) {
        const int64_t start = o * g.stride[a] - g.pad_begin[a];
        int64_t lo = g.kernel[a], hi = 0, padded = 0;
        for (int64_t k = 0; k < g.kernel[a]; ++k) {
            const int64_t i = start + k * g.dil[a];
            if (i >= 0 && i < g.in[a]) lo = std::min(lo, k), hi = k + 1;
            if (i < g.in[a] + g.pad_end[a]) padded = k + 1;
        }
        t.start.push_back(start), t.lo.push_back(std::min(lo, hi)), t.hi.push_back(hi);
        t.padded.push_back(padded);
    }
    return t;
}

}  // namespace pg::ops
