// Polygraphy's CompareFunc.simple and CompareFunc.indices for ONE output pair. out1 is always
// the reference (relative error divides by it). The result holds everything report.h prints
// and writes to JSON; nothing is logged here. To add a comparison function: add a CompareFunc
// value, a compare_* function here, and its lines in report.cc.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compare/compare_options.h"
#include "compare/error_stats.h"
#include "tensor/tensor.h"

namespace pg::compare {

// Outputs with at most this many elements get their values printed ("---- Values ----").
inline constexpr uint64_t kMaxPrintedValues = 100;

struct OutputResult {
    std::string name0, name1;
    DataType dtype0 = DataType::kUndefined, dtype1 = DataType::kUndefined;
    std::vector<int64_t> dims0, dims1;  // as the runners produced them
    CompareFunc func = CompareFunc::kSimple;
    SimpleSettings settings;      // simple: the per-output tolerances used
    int64_t index_tolerance = 0;  // indices: the per-output tolerance used
    bool passed = false;
    // Why values were not compared (e.g. the shape-mismatch lines); empty when they were.
    std::vector<std::string> not_compared;
    std::vector<std::string> shape_notes;     // --no-shape-check warnings (reshape failed, ...)
    std::optional<PairStats> stats;           // indices: only out0/out1 are filled
    std::vector<std::string> index_failures;  // indices: "FAILED | ..." lines
    // Values of small outputs (<= kMaxPrintedValues elements) for the "Values" blocks.
    std::optional<Tensor> values0, values1, abs_values, rel_values;

    // The statistic checked and its abs/rel values ("Minimum Required Tolerance").
    double required_abs() const;
    double required_rel() const;
};

// CompareFunc.simple on one output pair (shape check, abs/rel difference, pass/fail rule).
OutputResult compare_simple(const std::string& name0, const Tensor& out0, const std::string& name1,
                            const Tensor& out1, const SimpleSettings& s);

// CompareFunc.indices on one output pair; stops at the first failure with fail_fast.
OutputResult compare_indices(const std::string& name0, const Tensor& out0, const std::string& name1,
                             const Tensor& out1, int64_t tolerance, bool fail_fast);

// Polygraphy's try_match_shape: out1 reshaped or permuted towards `target`. Notes why not.
Tensor try_match_shape(const Tensor& t, const std::vector<int64_t>& target,
                       std::vector<std::string>& notes);

}  // namespace pg::compare
