// Text Polygraphy prints for each compared output (compare.py / comparator/util.py), line by line,
// plus Polygraph's own lines (cosine similarity, SNR, RMSE, NaN/Inf counts, worst channels), and
// the JSON written for a comparison report. To add a line: extend report_output(); to add a
// JSON field: extend output_to_json().
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "compare/error_stats.h"
#include "compare/log_lines.h"
#include "compare/simple_compare.h"

namespace pg::compare {

// Renders a small tensor as numpy does (the CLI passes cli::numpy_str). Null: no Values blocks.
using ValuesFormatter = std::function<std::string(const Tensor&)>;

// Once-per-process notes (Polygraphy's LogMode.ONCE), kept by the caller across outputs.
struct ReportState {
    bool shape_note_shown = false;
    bool zero_warning_shown = false;
};

// "mean=..., std-dev=..., ..., p99=..." (bool: no percentiles, ends with "\n").
std::string stats_string(const ArrayStats& s);
// "---- Histogram ----" block; empty string when there is no histogram.
std::string histogram_string(const Histogram& h);
// Every line printed for one output, starting with "Comparing Output: ..." at indent 0.
LogLines report_output(const OutputResult& r, const std::string& runner0,
                       const std::string& runner1, const ValuesFormatter& values,
                       ReportState& state);

// JSON of one output result: passed, tolerances and every statistic.
nlohmann::ordered_json output_to_json(const OutputResult& r);
nlohmann::ordered_json array_stats_to_json(const ArrayStats& s);

}  // namespace pg::compare
