// Error statistics of one output pair, computed the way Polygraphy's CompareFunc.simple and
// comparator/util.py compute them (absolute and relative difference arrays, mean/std/var/
// median/min/max/percentiles, 10-bin histograms), plus what Polygraph adds: cosine similarity,
// SNR, RMSE, NaN/Inf counts and the worst channels along an axis.
//
// Memory: values are read in chunks straight from the tensors; medians and quantiles need one
// scratch array of doubles (8 bytes per element), reused for each of the four arrays.
// To add a statistic: add a field to ArrayStats or PairStats and fill it in error_stats.cc;
// report.cc prints it and writes it to JSON.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "tensor/tensor.h"

namespace pg::compare {

// How the difference of two outputs is computed, following numpy's promotion after
// Polygraphy's cast_up (float16 -> float32, small ints -> int32, uint32 -> int64).
enum class DiffKind {
    kBool,     // both bool: absdiff = a XOR b (a bool array)
    kFloat32,  // float32-like on both sides (float32/16, bfloat16, float8, bool): float32 math
    kFloat64,  // float64 on either side, or ints mixed with floats: float64 math
    kInteger,  // integers (or int and bool): exact differences, relative error in float64
};
DiffKind diff_kind(DataType a, DataType b);

// Polygraphy's 10-bin histogram (numpy.histogram): 11 edges, 10 counts. Empty when skipped
// (bool, empty or non-finite data).
struct Histogram {
    std::vector<double> edges;
    std::vector<uint64_t> counts;
    bool empty() const { return counts.empty(); }
};

// The numbers of Polygraphy's str_output_stats for one array, plus NaN/Inf counts.
struct ArrayStats {
    uint64_t count = 0;
    bool is_bool = false;  // bool arrays print no percentiles and no histogram
    double mean = 0, std_dev = 0, var = 0, median = 0, min = 0, max = 0, avg_magnitude = 0;
    double p90 = 0, p95 = 0, p99 = 0;
    std::optional<double> quantile;       // the requested --error-quantile, if any
    std::vector<int64_t> argmin, argmax;  // first occurrence, unravelled
    uint64_t nan_count = 0, inf_count = 0;
    Histogram histogram;
};

// One channel of the per-channel breakdown.
struct ChannelError {
    int64_t channel = 0;
    double max_abs = 0;  // NaN if any element of the channel has a NaN error
    double mean_abs = 0;
    double max_rel = 0;
};

// Options of compute_pair_stats.
struct PairRequest {
    double atol = 1e-5, rtol = 1e-5;  // for the elementwise mismatch count
    bool infinities_compare_equal = false;
    std::optional<double> quantile;  // also compute this quantile of absdiff and reldiff
    int64_t channel_axis = 1;        // negative counts from the end
    int top_channels = 5;
};

// Everything computed for one output pair. out1 is the reference (relative error divides by it).
struct PairStats {
    DiffKind kind = DiffKind::kFloat32;
    ArrayStats out0, out1, absdiff, reldiff;
    uint64_t elemwise_mismatches = 0;          // elements violating both atol and rtol
    std::optional<uint64_t> first_mismatch;    // flat index of the first one
    bool zero_in_reference = false;            // an epsilon was added to reference zeros
    double cosine_similarity = 0;              // 1 if both are all-zero, 0 if one is
    double snr_db = 0;                         // 10*log10(sum(out1^2) / sum(absdiff^2))
    double rmse = 0;                           // sqrt(mean(absdiff^2))
    std::optional<int64_t> channel_axis;       // normalized; unset when no breakdown
    std::vector<ChannelError> worst_channels;  // by max_abs, worst first
};

// Polygraphy's relative-error epsilon, added to exact zeros of a floating reference.
inline constexpr double kRelEpsilon = 2.220446049250313e-16;

// absdiff and reldiff of one element pair (a from out0, b from the reference), as numpy computes
// them for `kind`; `ref_float`: the reference is floating, so its zeros get kRelEpsilon.
void element_diff(double a, double b, DiffKind kind, bool infinities_compare_equal, bool ref_float,
                  double& abs, double& rel);

// Computes every statistic for out0 vs. out1 (reference), both viewed with shape `dims` (their
// element counts must equal its volume). Throws kUnsupported for string/complex tensors.
PairStats compute_pair_stats(const Tensor& out0, const Tensor& out1,
                             const std::vector<int64_t>& dims, const PairRequest& req);

// Stats of one tensor (for --validate and the indices comparison). `hist_range` fixes the
// histogram range; nullopt uses the data's own min and max.
ArrayStats compute_array_stats(const Tensor& t,
                               std::optional<std::pair<double, double>> hist_range);

// Linear-interpolation quantile (numpy.quantile) of `sorted`, q in [0, 1]; inf when empty.
double quantile_of_sorted(const std::vector<double>& sorted, double q);

// Converts elements [begin, begin + n) to double. Throws kUnsupported for non-numeric dtypes.
void load_as_double(const Tensor& t, uint64_t begin, uint64_t n, double* out);

// Unravels a flat index into `dims` (row-major).
std::vector<int64_t> unravel(uint64_t flat, const std::vector<int64_t>& dims);

}  // namespace pg::compare
