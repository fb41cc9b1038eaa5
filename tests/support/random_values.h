// Seeded random float vectors for the kernel diff tests (uniform in [lo, hi)).
#pragma once

#include <random>
#include <vector>

namespace pg::test {

inline std::vector<float> random_floats(size_t n, std::mt19937& rng, float lo = -1.0f,
                                        float hi = 1.0f) {
    std::uniform_real_distribution<float> d(lo, hi);
    std::vector<float> v(n);
    for (float& x : v) x = d(rng);
    return v;
}

}  // namespace pg::test
