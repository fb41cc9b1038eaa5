// Polygraphy's --validate (Comparator.validate with check_inf=True, check_nan=True): every output
// of every runner and iteration is checked for NaN and non-finite values. Polygraph adds where
// they are: counts and the index of the first NaN / Inf.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compare/error_stats.h"
#include "compare/log_lines.h"
#include "compare/run_results.h"

namespace pg::compare {

struct OutputValidation {
    std::string runner, output;
    uint64_t nan_count = 0, inf_count = 0;  // inf_count: +-inf only
    std::optional<std::vector<int64_t>> first_nan, first_inf;
    bool passed() const { return nan_count == 0 && inf_count == 0; }
};

struct ValidationResult {
    std::vector<OutputValidation> outputs;
    LogLines lines;  // everything Polygraphy prints, from "Output Validation | Runners: [...]"
    bool passed() const;
};

// Scans one tensor (one streaming pass, no copy).
OutputValidation validate_tensor(const std::string& runner, const std::string& name,
                                 const Tensor& t);
// Validates every runner, iteration and output, producing Polygraphy's lines.
ValidationResult validate_runs(const std::vector<RunResult>& runs);

}  // namespace pg::compare
