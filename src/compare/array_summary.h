// Internal to compare/: ArrayStats of an array already converted to doubles. The array is
// reordered (nth_element) to find the median and quantiles without a full sort.
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "compare/error_stats.h"

namespace pg::compare {

struct SummaryRequest {
    bool is_bool = false;
    bool histogram = true;
    std::optional<std::pair<double, double>> hist_range;  // nullopt: the data's own min/max
    bool float32_edges = false;  // numpy computes bin edges in float32 for float32 data
    std::optional<double> quantile;
};

// Fills every field of ArrayStats from `v` (reordered on return).
ArrayStats summarize(std::vector<double>& v, const std::vector<int64_t>& dims,
                     const SummaryRequest& req);

// numpy.histogram(v, bins=10, range=(lo, hi)); empty when the range is not finite.
Histogram make_histogram(const std::vector<double>& v, double lo, double hi, bool f32_edges);

}  // namespace pg::compare
