// Comparator options of `run` (Polygraphy's ComparatorCompareArgs, CompareFuncSimpleArgs and
// CompareFuncIndicesArgs), parsed from the raw CLI strings. Per-output values use Polygraphy's
// `[name:]value` syntax: split on the LAST ':' (so names like "out:0" work); no ':' means the
// default for every output not listed. To add an option: add the raw field to CompareArgs, the
// parsed field to CompareOptions, and a line to parse_compare_options().
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace pg::compare {

// Which statistic of the error decides pass/fail (--check-error-stat).
enum class ErrorStat { kElemwise, kMean, kMedian, kMax, kQuantile };
// Which comparison function (--compare).
enum class CompareFunc { kSimple, kIndices };

// "elemwise", "mean", ...
const char* error_stat_name(ErrorStat s);

// A number given on the command line, with Python's str() of the value it parsed to
// ("1e-05" for the default, "1" for "--atol 1" since Polygraphy's cast() makes that an int).
struct Number {
    double value = 0;
    std::string repr;
};
Number make_number(double v);

// A value per output: exact name first, then the "" (default) key, then the built-in default.
template <typename T>
struct PerOutput {
    T fallback{};
    std::vector<std::pair<std::string, T>> entries;  // in command-line order; later wins

    const T& get(const std::string& output) const;
    // Keys that name none of `outputs` (and are not ""), for the "Extra items" warning.
    std::vector<std::string> unknown_keys(const std::vector<std::string>& outputs) const;
};

// Raw values as the CLI parsed them from argv (each vector holds the strings of one flag).
struct CompareArgs {
    std::string compare = "simple";             // --compare/--compare-func
    std::vector<std::string> atol;              // --atol/--abs-tol
    std::vector<std::string> rtol;              // --rtol/--rel-tol
    std::vector<std::string> check_error_stat;  // --check-error-stat
    std::vector<std::string> error_quantile;    // --error-quantile
    std::vector<std::string> index_tolerance;   // --index-tolerance
    std::optional<std::string> channel_axis;    // Polygraph: axis of the per-channel breakdown
    bool no_shape_check = false;                // --no-shape-check
    bool infinities_compare_equal = false;      // --infinities-compare-equal
    bool fail_fast = false;                     // --fail-fast
    bool validate = false;                      // --validate
};

// Parsed options with Polygraphy's defaults.
struct CompareOptions {
    CompareFunc func = CompareFunc::kSimple;
    bool check_shapes = true;
    PerOutput<Number> atol{make_number(1e-5), {}};
    PerOutput<Number> rtol{make_number(1e-5), {}};
    PerOutput<ErrorStat> check_error_stat{ErrorStat::kElemwise, {}};
    PerOutput<Number> error_quantile{make_number(0.99), {}};
    PerOutput<int64_t> index_tolerance{0, {}};
    bool infinities_compare_equal = false;
    bool fail_fast = false;
    bool validate = false;
    int64_t channel_axis = 1;  // Polygraph: per-channel error breakdown along this axis
    int top_channels = 5;      // Polygraph: how many worst channels are reported
};

// Parses the raw values; throws pg::Error(kUsage) naming the flag and the bad value.
CompareOptions parse_compare_options(const CompareArgs& args);

// Warnings Polygraphy prints for options of the comparison function that is not selected
// ("Option: --index-tolerance is only valid for comparison function: 'indices'. ...").
std::vector<std::string> unused_option_warnings(const CompareArgs& args);

// "Extra items in the rtol dictionary: {'x'}" warnings for per-output keys naming no output.
std::vector<std::string> extra_key_warnings(const CompareOptions& opts,
                                            const std::vector<std::string>& outputs);

// Splits "name:value" on the last ':'; no ':' gives key "".
std::pair<std::string, std::string> split_key_value(const std::string& arg);

// Settings of CompareFunc.simple for one output, resolved from the per-output options.
struct SimpleSettings {
    Number atol = make_number(1e-5);
    Number rtol = make_number(1e-5);
    ErrorStat stat = ErrorStat::kElemwise;
    Number quantile = make_number(0.99);
    bool check_shapes = true;
    bool infinities_compare_equal = false;
    int64_t channel_axis = 1;
    int top_channels = 5;
};
SimpleSettings resolve_simple(const CompareOptions& opts, const std::string& output);

template <typename T>
const T& PerOutput<T>::get(const std::string& output) const {
    const T* dflt = nullptr;
    const T* exact = nullptr;
    for (const auto& [k, v] : entries) {
        if (k == output) exact = &v;
        if (k.empty()) dflt = &v;
    }
    if (exact) return *exact;
    return dflt ? *dflt : fallback;
}

template <typename T>
std::vector<std::string> PerOutput<T>::unknown_keys(const std::vector<std::string>& outputs) const {
    std::vector<std::string> out;
    for (const auto& e : entries) {
        if (e.first.empty()) continue;
        bool known = false;
        for (const auto& o : outputs) known = known || o == e.first;
        if (!known) out.push_back(e.first);
    }
    return out;
}

}  // namespace pg::compare
