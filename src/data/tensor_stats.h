// Polygraphy's statistics strings (polygraphy-spec §4.5): str_output_stats ("mean=..., std-dev=
// ..., p99=...") and str_histogram (10 bins), computed as numpy computes them: float32 tensors
// in float32 with numpy's pairwise summation, everything else in float64. Used by `inspect data`
// and by `run` when it prints output statistics.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "tensor/tensor.h"

namespace pg::data {

// "mean=0.35995, std-dev=0.25784, var=0.066482, median=0.35968, min=0.00011437 at (0, 0, 1, 0),
// max=0.72032 at (0, 0, 0, 1), avg-magnitude=0.35995, p90=0.62933, p95=0.67483, p99=0.71123"
// (no p90/p95/p99 for bool). "<Error while computing statistics>" for non-numeric tensors.
std::string str_output_stats(const Tensor& t);

// The "---- Histogram ----" block (lines joined by "\n", no trailing newline); "" for bool and
// non-numeric tensors; "None" for empty ones (Polygraphy prints that). `range` overrides
// numpy.histogram's range.
std::string str_histogram(const Tensor& t,
                          std::optional<std::pair<double, double>> range = std::nullopt);

// numpy's pairwise summation in float32 (np.add.reduce on a contiguous float32 array).
float pairwise_sum_f32(const float* v, size_t n);

}  // namespace pg::data
