#include "cli/run_options.h"

#include "base/error.h"
#include "base/log.h"
#include "cli/common.h"

namespace pg::cli {

namespace {

double number(const std::string& text, const std::string& flag) {
    size_t used = 0;
    double v = 0;
    try {
        v = std::stod(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used == 0 || used != text.size())
        throw Error(ErrorKind::kUsage, flag + ": expected a number, got '" + text + "'");
    return v;
}

// "[name:][lo,hi]" (split on the last ':' before the bracket).
std::pair<std::string, data::ValRange> parse_val_range(const std::string& arg) {
    const size_t bracket = arg.rfind('[');
    if (bracket == std::string::npos || arg.back() != ']')
        throw Error(ErrorKind::kUsage, "--val-range: expected [name:][min,max], got '" + arg + "'");
    std::string name = arg.substr(0, bracket);
    if (!name.empty() && name.back() == ':') name.pop_back();
    const auto items = parse_list(arg.substr(bracket));
    if (items.size() != 2)
        throw Error(ErrorKind::kUsage, "--val-range: expected exactly two values in '" + arg + "'");
    return {name, data::ValRange{number(items[0], "--val-range"), number(items[1], "--val-range")}};
}

// "name:[d0,d1,...]" with symbolic or negative dims as dynamic.
std::pair<std::string, ir::Shape> parse_shape_arg(const std::string& arg) {
    const size_t colon = arg.rfind(":[");
    if (colon == std::string::npos)
        throw Error(ErrorKind::kUsage, "--input-shapes: expected NAME:[dims], got '" + arg + "'");
    ir::Shape shape;
    for (const auto& d : parse_list(arg.substr(colon + 1))) {
        try {
            size_t used = 0;
            const long long v = std::stoll(d, &used);
            shape.push_back(used == d.size() && v >= 0 ? ir::Dim::known(v) : ir::Dim::symbolic(d));
        } catch (const std::exception&) {
            shape.push_back(ir::Dim::symbolic(d));
        }
    }
    return {arg.substr(0, colon), shape};
}

std::optional<data::ValRange> deprecated_range(const ParsedArgs& a, const char* lo, const char* hi,
                                               double dlo, double dhi) {
    if (!a.has(lo) && !a.has(hi)) return std::nullopt;
    log_warning("--{}/--{} are deprecated; use --val-range", lo, hi);
    return data::ValRange{a.has(lo) ? number(a.get(lo), lo) : dlo,
                          a.has(hi) ? number(a.get(hi), hi) : dhi};
}

}  // namespace

int64_t int_arg(const ParsedArgs& a, const std::string& dest, const std::string& flag,
                int64_t fallback) {
    if (!a.has(dest)) return fallback;
    const double v = number(a.get(dest), flag);
    if (v < 0 || v != static_cast<double>(static_cast<int64_t>(v)))
        throw Error(ErrorKind::kUsage,
                    flag + ": expected a non-negative integer, got '" + a.get(dest) + "'");
    return static_cast<int64_t>(v);
}

double seconds_arg(const ParsedArgs& a, const std::string& dest, const std::string& flag) {
    if (!a.has(dest)) return 0.0;
    const double v = number(a.get(dest), flag);
    if (!(v >= 0) || v > 1e6)
        throw Error(ErrorKind::kUsage,
                    flag + ": expected seconds between 0 and 1e6, got '" + a.get(dest) + "'");
    return v;
}

void add_data_loader_args(ArgParser& p) {
    p.group("Data Loader");
    p.value({"--seed"}, "seed", "SEED",
            "Seed for random inputs (Polygraphy's numpy stream; default 1).");
    p.values({"--val-range"}, "val_range", "[NAME:][MIN,MAX]",
             "Range of generated values, per input or as a default: --val-range x:[1,2] [0,1].");
    p.value({"--int-min"}, "int_min", "N",
            "DEPRECATED: minimum of generated integers (use --val-range).");
    p.value({"--int-max"}, "int_max", "N",
            "DEPRECATED: maximum of generated integers (use --val-range).");
    p.value({"--float-min"}, "float_min", "X",
            "DEPRECATED: minimum of generated floats (use --val-range).");
    p.value({"--float-max"}, "float_max", "X",
            "DEPRECATED: maximum of generated floats (use --val-range).");
    p.value({"--iterations", "--iters"}, "iterations", "N",
            "Number of inference iterations (feed dicts). Default 1.");
    p.values(
        {"--input-shapes", "--inputs"}, "input_shapes", "NAME:[DIMS]",
        "Shapes for inputs with dynamic dims, e.g. X:[1,3,224,224]; names may use * ? wildcards.");
    p.values({"--load-inputs", "--load-input-data"}, "load_inputs", "PATH",
             "Load inputs instead of generating them: Polygraphy JSON, .npz, .npy, an ONNX "
             "test-data folder, or a data loader script (x.py[:func], as --data-loader-script).");
    p.value({"--data-loader-script"}, "data_loader_script", "SCRIPT.py[:FUNC]",
            "A Python script whose function (load_data by default) returns or yields feed dicts "
            "of numpy arrays; run with python3 (needs numpy).");
    p.value({"--data-loader-func-name"}, "data_loader_func_name", "FUNC",
            "Deprecated: the function of --data-loader-script (write SCRIPT.py:FUNC).");
    p.value({"--save-inputs", "--save-input-data"}, "save_inputs", "PATH",
            "Save the inputs used (JSON, or .npz).");
}

data::DataLoaderOptions data_loader_options(const ParsedArgs& a) {
    data::DataLoaderOptions o;
    o.seed = a.has("seed") ? static_cast<int64_t>(number(a.get("seed"), "--seed")) : 1;
    o.iterations = std::max<int64_t>(1, int_arg(a, "iterations", "--iterations", 1));
    for (const auto& v : a.get_all("val_range")) o.val_range.push_back(parse_val_range(v));
    o.int_range = deprecated_range(a, "int_min", "int_max", 1, 25);
    o.float_range = deprecated_range(a, "float_min", "float_max", -1, 1);
    for (const auto& s : a.get_all("input_shapes")) o.input_shapes.push_back(parse_shape_arg(s));
    return o;
}

void add_comparator_args(ArgParser& p) {
    p.group("Comparator");
    p.value({"--warm-up"}, "warm_up", "N", "Untimed warm-up runs per runner. Default 0.");
    p.value({"--duration"}, "duration", "SECONDS",
            "Time each runner for at least this long: after the iterations, their inputs run "
            "again (timed, not compared) until the runs add up to SECONDS; the average "
            "inference time covers every run. Default 0 (the iterations only).");
    p.value({"--save-outputs"}, "save_outputs", "PATH",
            "Save every runner's outputs (Polygraphy RunResults JSON).");
    p.values({"--load-outputs", "--load-results"}, "load_outputs", "PATH",
             "Compare against outputs saved earlier (RunResults JSON); appended after the live "
             "runners.");
    p.value({"--save-results"}, "save_results", "PATH",
            "Write the comparison verdicts and every statistic as JSON. (In Polygraphy this is an "
            "alias of "
            "--save-outputs.)");
    p.flag({"--validate"}, "validate", "Check every output for NaN and Inf values; fail if any.");
    p.flag({"--fail-fast"}, "fail_fast", "Stop at the first mismatching output.");
    p.value({"--compare", "--compare-func"}, "compare", "{simple,indices}",
            "Comparison function. Default simple.", {"simple", "indices"});
    p.values({"--atol", "--abs"}, "atol", "[NAME:]TOL",
             "Absolute tolerance, per output or default. Default 1e-5.");
    p.values({"--rtol", "--rel"}, "rtol", "[NAME:]TOL",
             "Relative tolerance, per output or default. Default 1e-5.");
    p.values({"--check-error-stat"}, "check_error_stat", "[NAME:]STAT",
             "Statistic checked against the tolerances: elemwise (default), mean, median, max, "
             "quantile.");
    p.values({"--error-quantile"}, "error_quantile", "[NAME:]Q",
             "Quantile for --check-error-stat quantile. Default 0.99.");
    p.values({"--index-tolerance"}, "index_tolerance", "[NAME:]N",
             "Tolerance of --compare indices.");
    p.flag({"--infinities-compare-equal"}, "infinities_compare_equal",
           "Matching infinities count as equal.");
    p.flag({"--no-shape-check"}, "no_shape_check",
           "Compare outputs of different shapes with the same element count.");
    p.value({"--channel-axis"}, "channel_axis", "AXIS",
            "Axis of the per-channel error breakdown. Default 1.");
}

compare::CompareArgs compare_args(const ParsedArgs& a) {
    compare::CompareArgs c;
    c.compare = a.get("compare", "simple");
    c.atol = a.get_all("atol");
    c.rtol = a.get_all("rtol");
    c.check_error_stat = a.get_all("check_error_stat");
    c.error_quantile = a.get_all("error_quantile");
    c.index_tolerance = a.get_all("index_tolerance");
    if (a.has("channel_axis")) c.channel_axis = a.get("channel_axis");
    c.no_shape_check = a.count("no_shape_check") > 0;
    c.infinities_compare_equal = a.count("infinities_compare_equal") > 0;
    c.fail_fast = a.count("fail_fast") > 0;
    c.validate = a.count("validate") > 0;
    return c;
}

void add_layerwise_args(ArgParser& p) {
    p.group("Layer-wise Comparison");
    p.values({"--onnx-outputs", "--trt-outputs"}, "onnx_outputs", "NAME|mark all",
             "Intermediate tensors as outputs: names, regular expressions, or `mark all`. With "
             "two runners or more they are compared as they stream: each as soon as both runners "
             "have it, then freed. With one runner they replace its outputs, for --validate, "
             "--save-outputs and --load-outputs.");
    p.value({"--memory-budget"}, "memory_budget", "SIZE",
            "Bytes of intermediate tensors held at once (e.g. 256M); runners that cannot stream "
            "re-run once "
            "per group that fits. Default: a quarter of physical memory.");
    p.flag({"--attribute-error"}, "attribute_error",
           "For each divergent node, re-run it on the first runner's inputs to separate its own "
           "(local) error "
           "from the error it inherited.");
}

}  // namespace pg::cli
