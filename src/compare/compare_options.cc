#include "compare/compare_options.h"

#include <cerrno>
#include <cstdlib>
#include <regex>

#include "base/error.h"
#include "base/pyformat.h"

namespace pg::compare {

namespace {

[[noreturn]] void usage(const std::string& flag, const std::string& arg, const std::string& why) {
    throw Error(ErrorKind::kUsage, "invalid value '" + arg + "' for " + flag + ": " + why);
}

// Polygraphy's cast() for numbers: int first, then float (incl. "inf", "nan").
std::optional<Number> parse_number(std::string s) {
    if (s.size() >= 2 && (s.front() == '\'' || s.front() == '"') && s.back() == s.front()) {
        s = s.substr(1, s.size() - 2);
    }
    static const std::regex kInt("[+-]?[0-9]+");
    if (std::regex_match(s, kInt)) {
        const long long v = std::strtoll(s.c_str(), nullptr, 10);
        return Number{static_cast<double>(v), std::to_string(v)};
    }
    if (s.empty()) return std::nullopt;
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size() || s.find_first_of("xX") != std::string::npos) {
        return std::nullopt;
    }
    return make_number(v);
}

PerOutput<Number> parse_numbers(const std::vector<std::string>& args, const std::string& flag,
                                Number fallback) {
    PerOutput<Number> out{std::move(fallback), {}};
    for (const auto& a : args) {
        auto [key, value] = split_key_value(a);
        auto n = parse_number(value);
        if (!n) usage(flag, a, "expected [<output>:]<number>");
        out.entries.emplace_back(key, *n);
    }
    return out;
}

ErrorStat parse_stat(const std::string& arg, const std::string& value) {
    static const ErrorStat kAll[] = {ErrorStat::kMax, ErrorStat::kMean, ErrorStat::kMedian,
                                     ErrorStat::kElemwise, ErrorStat::kQuantile};
    for (ErrorStat s : kAll) {
        if (value == error_stat_name(s)) return s;
    }
    usage("--check-error-stat", arg,
          "Valid choices are: ['max', 'mean', 'median', 'elemwise', 'quantile']");
}

PerOutput<int64_t> parse_index_tolerance(const std::vector<std::string>& args) {
    PerOutput<int64_t> out{0, {}};
    for (const auto& a : args) {
        auto [key, value] = split_key_value(a);
        auto n = parse_number(value);
        if (!n || n->repr.find_first_of(".ein") != std::string::npos || n->value < 0) {
            usage("--index-tolerance", a, "expected [<output>:]<non-negative integer>");
        }
        out.entries.emplace_back(key, static_cast<int64_t>(n->value));
    }
    return out;
}

}  // namespace

const char* error_stat_name(ErrorStat s) {
    switch (s) {
        case ErrorStat::kElemwise:
            return "elemwise";
        case ErrorStat::kMean:
            return "mean";
        case ErrorStat::kMedian:
            return "median";
        case ErrorStat::kMax:
            return "max";
        case ErrorStat::kQuantile:
            return "quantile";
    }
    return "?";
}

Number make_number(double v) {
    return Number{v, py_float(v)};
}

std::pair<std::string, std::string> split_key_value(const std::string& arg) {
    const size_t at = arg.rfind(':');
    if (at == std::string::npos) return {"", arg};
    return {arg.substr(0, at), arg.substr(at + 1)};
}

CompareOptions parse_compare_options(const CompareArgs& args) {
    CompareOptions o;
    if (args.compare == "indices")
        o.func = CompareFunc::kIndices;
    else if (args.compare != "simple")
        usage("--compare", args.compare, "choose simple or indices");
    o.atol = parse_numbers(args.atol, "--atol", make_number(1e-5));
    o.rtol = parse_numbers(args.rtol, "--rtol", make_number(1e-5));
    o.error_quantile = parse_numbers(args.error_quantile, "--error-quantile", make_number(0.99));
    for (const auto& [k, q] : o.error_quantile.entries) {
        if (!(q.value >= 0 && q.value <= 1)) {
            usage("--error-quantile", k.empty() ? q.repr : k + ":" + q.repr,
                  "quantiles must be in the range [0, 1]");
        }
    }
    for (const auto& a : args.check_error_stat) {
        auto [key, value] = split_key_value(a);
        o.check_error_stat.entries.emplace_back(key, parse_stat(a, value));
    }
    o.index_tolerance = parse_index_tolerance(args.index_tolerance);
    if (args.channel_axis) {
        auto n = parse_number(*args.channel_axis);
        if (!n || n->repr.find_first_of(".ein") != std::string::npos) {
            usage("--channel-axis", *args.channel_axis, "expected an integer axis");
        }
        o.channel_axis = static_cast<int64_t>(n->value);
    }
    o.check_shapes = !args.no_shape_check;
    o.infinities_compare_equal = args.infinities_compare_equal;
    o.fail_fast = args.fail_fast;
    o.validate = args.validate;
    return o;
}

std::vector<std::string> unused_option_warnings(const CompareArgs& args) {
    const bool simple = args.compare != "indices";
    const std::string selected = simple ? "simple" : "indices";
    std::vector<std::pair<std::string, bool>> given;  // option, belongs to simple
    if (args.no_shape_check) given.emplace_back("--no-shape-check", true);
    if (!args.rtol.empty()) given.emplace_back("--rtol/--rel-tol", true);
    if (!args.atol.empty()) given.emplace_back("--atol/--abs-tol", true);
    if (!args.check_error_stat.empty()) given.emplace_back("--check-error-stat", true);
    if (args.infinities_compare_equal) given.emplace_back("--infinities-compare-equal", true);
    if (!args.error_quantile.empty()) given.emplace_back("--error-quantile", true);
    if (!args.index_tolerance.empty()) given.emplace_back("--index-tolerance", false);
    std::vector<std::string> out;
    for (const auto& [opt, for_simple] : given) {
        if (for_simple == simple) continue;
        out.push_back("Option: " + opt + " is only valid for comparison function: '" +
                      (for_simple ? "simple" : "indices") +
                      "'. The selected comparison function is: '" + selected +
                      "', so this option will be ignored.");
    }
    return out;
}

namespace {

template <typename T>
void add_extra(const PerOutput<T>& p, const std::string& dict_name,
               const std::vector<std::string>& outputs, std::vector<std::string>& out) {
    auto keys = p.unknown_keys(outputs);
    if (keys.empty()) return;
    std::string set = "{";
    for (size_t i = 0; i < keys.size(); ++i) set += (i ? ", '" : "'") + keys[i] + "'";
    out.push_back("Extra items in " + dict_name + ": " + set + "}");
}

}  // namespace

std::vector<std::string> extra_key_warnings(const CompareOptions& opts,
                                            const std::vector<std::string>& outputs) {
    std::vector<std::string> out;
    if (opts.func == CompareFunc::kIndices) return out;
    add_extra(opts.rtol, "the rtol dictionary", outputs, out);
    add_extra(opts.atol, "the atol dictionary", outputs, out);
    add_extra(opts.check_error_stat, "the check_error_stat dictionary", outputs, out);
    add_extra(opts.error_quantile, "the quantile dictionary", outputs, out);
    return out;
}

SimpleSettings resolve_simple(const CompareOptions& opts, const std::string& output) {
    SimpleSettings s;
    s.atol = opts.atol.get(output);
    s.rtol = opts.rtol.get(output);
    s.stat = opts.check_error_stat.get(output);
    s.quantile = opts.error_quantile.get(output);
    s.check_shapes = opts.check_shapes;
    s.infinities_compare_equal = opts.infinities_compare_equal;
    s.channel_axis = opts.channel_axis;
    s.top_channels = opts.top_channels;
    return s;
}

}  // namespace pg::compare
