#include "compare/validate.h"

#include <cmath>

#include "base/pyformat.h"
#include "compare/report.h"

namespace pg::compare {

namespace {

constexpr uint64_t kChunk = 4096;

std::string where(uint64_t count, const std::string& what,
                  const std::optional<std::vector<int64_t>>& first) {
    return std::to_string(count) + " " + what + (count == 1 ? " value" : " values") +
           (first ? ", first at " + py_tuple(*first) : "");
}

void lines_for(const OutputValidation& v, const Tensor& t, LogLines& out, bool& note_shown) {
    out.push_back({Severity::kInfo, 1,
                   fmt::format("{:35} | Validating output: {} (check_inf=True, check_nan=True)",
                               v.runner, v.output)});
    out.push_back({Severity::kInfo, 2, stats_string(compute_array_stats(t, std::nullopt))});
    if (v.nan_count) {
        out.push_back({Severity::kError, 2,
                       "NaN Detected | One or more NaNs were encountered in this output"});
        out.push_back({Severity::kError, 2, where(v.nan_count, "NaN", v.first_nan)});
        if (!note_shown) {
            note_shown = true;
            out.push_back(
                {Severity::kInfo, 2, "Use -vv or higher verbosity to display the output values"});
        }
    }
    if (v.nan_count || v.inf_count) {
        out.push_back({Severity::kError, 2,
                       "Inf Detected | One or more non-finite values were encountered in this "
                       "output"});
        if (v.inf_count)
            out.push_back({Severity::kError, 2, where(v.inf_count, "Inf", v.first_inf)});
    }
    if (v.passed()) {
        out.push_back({Severity::kFinish, 2, "PASSED | Output: " + v.output + " is valid"});
    } else {
        out.push_back({Severity::kError, 2, "FAILED | Errors detected in output: " + v.output});
    }
}

}  // namespace

bool ValidationResult::passed() const {
    for (const auto& o : outputs) {
        if (!o.passed()) return false;
    }
    return true;
}

OutputValidation validate_tensor(const std::string& runner, const std::string& name,
                                 const Tensor& t) {
    OutputValidation v;
    v.runner = runner;
    v.output = name;
    if (!dtype_is_float(t.dtype()) || !t.has_data()) return v;
    std::vector<double> buf(kChunk);
    for (uint64_t begin = 0; begin < t.numel(); begin += kChunk) {
        const uint64_t m = std::min(kChunk, t.numel() - begin);
        load_as_double(t, begin, m, buf.data());
        for (uint64_t i = 0; i < m; ++i) {
            if (std::isnan(buf[i])) {
                if (!v.nan_count++) v.first_nan = unravel(begin + i, t.dims());
            } else if (std::isinf(buf[i])) {
                if (!v.inf_count++) v.first_inf = unravel(begin + i, t.dims());
            }
        }
    }
    return v;
}

ValidationResult validate_runs(const std::vector<RunResult>& runs) {
    ValidationResult res;
    std::vector<std::string> names;
    for (const auto& r : runs) names.push_back(r.runner);
    res.lines.push_back({Severity::kStart, 0, "Output Validation | Runners: " + py_list(names)});
    bool note_shown = false;
    for (const auto& r : runs) {
        for (const auto& it : r.iterations) {
            for (const auto& [name, t] : it) {
                res.outputs.push_back(validate_tensor(r.runner, name, t));
                lines_for(res.outputs.back(), t, res.lines, note_shown);
            }
        }
    }
    if (res.passed())
        res.lines.push_back({Severity::kFinish, 0, "PASSED | Output Validation"});
    else
        res.lines.push_back({Severity::kError, 0, "FAILED | Output Validation"});
    return res;
}

}  // namespace pg::compare
