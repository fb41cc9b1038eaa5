// Which outputs and which runners are compared (Polygraphy comparator.py and compare.py:
// default_find_output_func, util.find_str_in_iterable). Runners are compared in consecutive
// pairs (0,1), (1,2), ...; in each pair the second is the reference.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compare/log_lines.h"

namespace pg::compare {

// Exact name first; then the first element that contains `name` or is contained in it
// (case-insensitive); then the element at `index`, if given and in range.
std::optional<std::string> find_str_in_iterable(const std::string& name,
                                                const std::vector<std::string>& seq,
                                                std::optional<size_t> index = std::nullopt);

struct OutputMatch {
    size_t index0 = 0, index1 = 0;  // positions in names0 / names1
};

struct OutputMatching {
    std::vector<OutputMatch> matches;  // in names0 order
    LogLines lines;                    // "Output names did not match exactly..." warnings etc.
};

// Matches every output of result0 (in order) to one of result1's.
OutputMatching match_outputs(const std::vector<std::string>& names0,
                             const std::vector<std::string>& names1, const std::string& runner1);

// Polygraphy's default comparisons: (0,1), (1,2), ..., (n-2,n-1).
std::vector<std::pair<size_t, size_t>> consecutive_pairs(size_t runners);

}  // namespace pg::compare
