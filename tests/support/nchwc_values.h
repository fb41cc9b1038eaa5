// Plain <-> blocked (NCHWc16) copies of float vectors for the blocked kernels' tests.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/nchwc.h"

namespace pg::test {

// n images of c channels x `plane` pixels, plain -> blocked.
inline std::vector<float> blocked(const std::vector<float>& x, int64_t n, int64_t c,
                                  int64_t plane) {
    std::vector<float> y(x.size());
    ops::to_nchwc(x.data(), n, c, plane, sizeof(float), y.data(), nullptr);
    return y;
}

// The inverse: blocked -> plain.
inline std::vector<float> unblocked(const std::vector<float>& x, int64_t n, int64_t c,
                                    int64_t plane) {
    std::vector<float> y(x.size());
    ops::from_nchwc(x.data(), n, c, plane, sizeof(float), y.data(), nullptr);
    return y;
}

}  // namespace pg::test
