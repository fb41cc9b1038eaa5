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

// The taps k of [0, kernel) whose index start + k * dil lies in [begin, end): [*lo, *hi), both 0
// when none. Closed form, so a window of 2^40 taps costs no more than one of 3 (make_window has
// checked that start + (kernel - 1) * dil stays inside int64).
inline void taps_between(int64_t start, int64_t dil, int64_t kernel, int64_t begin, int64_t end,
                         int64_t* lo, int64_t* hi) {
    const auto floor_div = [](int64_t a, int64_t b) { return a / b - (a % b < 0); };
    // k >= ceil((begin - start) / dil) and k <= floor((end - 1 - start) / dil)
    const int64_t first = begin <= start ? 0 : -floor_div(start - begin, dil);
    const int64_t last = end - 1 < start ? -1 : floor_div(end - 1 - start, dil);
    *lo = std::min(first, kernel), *hi = std::min(last + 1, kernel);
    if (*hi <= *lo) *lo = 0, *hi = 0;
}

inline AxisTaps axis_taps(const Window& g, int a) {
    AxisTaps t;
    for (int64_t o = 0; o < g.out[a]; ++o) {
        const int64_t start = o * g.stride[a] - g.pad_begin[a];
        int64_t lo = 0, hi = 0, plo = 0, padded = 0;
        taps_between(start, g.dil[a], g.kernel[a], 0, g.in[a], &lo, &hi);
        // taps before the end of the padded input (every tap starts at or after its beginning)
        taps_between(start, g.dil[a], g.kernel[a], start, g.in[a] + g.pad_end[a], &plo, &padded);
        t.start.push_back(start), t.lo.push_back(lo), t.hi.push_back(hi);
        t.padded.push_back(padded);
    }
    return t;
}

}  // namespace pg::ops
