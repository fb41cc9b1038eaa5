// Internal to the pooling kernels (pool_kernels.cc, nchwc_pool.cc): the taps of one output
// position in the order the plain pools visit them, so the blocked pools give their values.
#pragma once

#include <cstdint>

#include "ops/conv_kernels.h"

namespace pg::ops {

// Calls f(spatial index) for each tap of output position o that lies inside the input and
// returns the number of taps inside the padded input.
template <typename F>
inline int64_t visit_window(const Window& g, int64_t o, F&& f) {
    const int64_t pos[3] = {o / (g.out[1] * g.out[2]), o / g.out[2] % g.out[1], o % g.out[2]};
    int64_t start[3], padded = 1;
    int64_t lo[3], hi[3];  // tap ranges inside the padded input
    for (int a = 0; a < 3; ++a) {
        start[a] = pos[a] * g.stride[a] - g.pad_begin[a];
        lo[a] = 0, hi[a] = 0;
        for (int64_t k = 0; k < g.kernel[a]; ++k) {
            const int64_t i = start[a] + k * g.dil[a];
            if (i < g.in[a] + g.pad_end[a]) hi[a] = k + 1;
        }
        padded *= hi[a] - lo[a];
    }
    for (int64_t kd = 0; kd < hi[0]; ++kd) {
        const int64_t id = start[0] + kd * g.dil[0];
        if (id < 0 || id >= g.in[0]) continue;
        for (int64_t kh = 0; kh < hi[1]; ++kh) {
            const int64_t ih = start[1] + kh * g.dil[1];
            if (ih < 0 || ih >= g.in[1]) continue;
            for (int64_t kw = 0; kw < hi[2]; ++kw) {
                const int64_t iw = start[2] + kw * g.dil[2];
                if (iw >= 0 && iw < g.in[2]) f((id * g.in[1] + ih) * g.in[2] + iw);
            }
        }
    }
    return padded;
}

}  // namespace pg::ops
