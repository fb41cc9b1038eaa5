// The error measure of the kernel tests that diff a fast path against its reference.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace pg::test {

// Largest |got - ref| / (1 + |ref|) over the elements; infinity when any is NaN (got must have
// at least ref's size).
inline double worst_relative_error(const std::vector<float>& got, const std::vector<float>& ref) {
    double worst = 0;
    for (size_t i = 0; i < ref.size(); ++i) {
        const double e = std::fabs(double(got[i]) - ref[i]) / (1 + std::fabs(ref[i]));
        worst = std::isnan(e) ? std::numeric_limits<double>::infinity() : std::max(worst, e);
    }
    return worst;
}

}  // namespace pg::test
