// `polygraph inspect data FILE`: a summary of an inputs or RunResults file (polygraphy-spec
// §9.3): per iteration, each tensor's name, dtype, shape and statistics; --histogram and
// --show-values add blocks below it. Accepts every format data/data_files.h loads.
#include <algorithm>
#include <string>
#include <vector>

#include "base/log.h"
#include "cli/common.h"
#include "cli/render.h"
#include "cli/tools.h"
#include "data/data_files.h"
#include "data/tensor_stats.h"

namespace pg::cli {

namespace {

struct DataShow {
    bool all = false, values = false, histogram = false;
};

ArgParser inspect_data_parser() {
    ArgParser p("polygraph inspect data",
                "Display information about inference inputs and outputs saved by `run` "
                "(--save-inputs / --save-outputs), Polygraphy, .npz/.npy files or ONNX test-data "
                "folders.");
    p.positional("path", "Path to a file containing input or output data.");
    p.flag({"-a", "--all"}, "all",
           "Show information on all iterations present in the data instead of just the first.");
    p.flag({"-s", "--show-values"}, "show_values",
           "Show values of the tensors instead of just metadata.");
    p.flag({"--histogram"}, "histogram", "Show a histogram of the value distribution.");
    p.value(
        {"-n", "--num-items"}, "num_items", "NUM",
        "Accepted for compatibility; values are summarized like numpy's default (3 edge items).");
    p.value({"--line-width"}, "line_width", "NUM",
            "Accepted for compatibility (numpy's default 75).");
    add_logger_args(p);
    return p;
}

// Polygraphy's util.indent_block: every line prefixed by 4*level spaces, trailing newline dropped.
std::string indent_block(const std::string& block, int level) {
    const std::string tab(4 * level, ' ');
    std::string out = tab;
    for (char c : block.substr(0, block.find_last_not_of('\n') + 1)) {
        out += c;
        if (c == '\n') out += tab;
    }
    return out;
}

std::string shape_tuple(const std::vector<int64_t>& dims) {
    if (dims.size() == 1) return "(" + std::to_string(dims[0]) + ",)";
    std::string s = "(";
    for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
    return s + ")";
}

std::string tensor_block(const std::string& name, const Tensor& t, int indent,
                         const DataShow& show) {
    std::string out = indent_block("\n" + name + " [dtype=" + dtype_name(t.dtype()) +
                                       ", shape=" + shape_tuple(t.dims()) +
                                       "] | Stats: " + data::str_output_stats(t),
                                   indent - 1);
    if (show.histogram) out += "\n" + indent_block(data::str_histogram(t), indent);
    if (show.values) out += "\n" + indent_block(numpy_str(t), indent);
    return out;
}

std::string str_from_iters(const std::vector<const runners::NamedTensors*>& iters,
                           const DataShow& show) {
    std::string out;
    for (size_t k = 0; k < iters.size(); ++k) {
        int indent = 1;
        if (iters.size() > 1 && show.all) {
            out += indent_block("\n-- Iteration: " + std::to_string(k) + "\n", 0);
            indent = 2;
        }
        for (const auto& [name, t] : *iters[k]) out += tensor_block(name, t, indent, show);
        if (indent == 2) out += "\n";
        if (!show.all) break;
    }
    return out;
}

std::string strip(const std::string& s) {
    const size_t b = s.find_first_not_of(" \n\t"), e = s.find_last_not_of(" \n\t");
    return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

std::string results_text(const data::RunResults& rr, const DataShow& show) {
    std::string out =
        "==== Run Results (" + std::to_string(rr.runners.size()) + " runners) ====\n\n";
    size_t width = 0;
    for (const auto& r : rr.runners) width = std::max(width, r.runner_name.size());
    for (const auto& r : rr.runners) {
        std::string name = r.runner_name;
        name.append(width - name.size(), ' ');
        out += "---- " + name + " (" + std::to_string(r.iterations.size()) + " iterations) ----\n";
        std::vector<const runners::NamedTensors*> iters;
        for (const auto& it : r.iterations) iters.push_back(&it.outputs);
        out += str_from_iters(iters, show) + "\n";
    }
    return strip(indent_block(out, 0));
}

std::string inputs_text(const data::FeedList& feeds, const DataShow& show) {
    std::vector<const runners::NamedTensors*> iters;
    for (const auto& f : feeds) iters.push_back(&f);
    const std::string out = "==== Data (" + std::to_string(feeds.size()) + " iterations) ====\n" +
                            str_from_iters(iters, show) + "\n";
    return strip(indent_block(out, 0));
}

}  // namespace

int inspect_data(const std::vector<std::string>& argv) {
    return run_tool(inspect_data_parser(), argv, [](const ParsedArgs& a) {
        const DataShow show{a.count("all") > 0, a.count("show_values") > 0,
                            a.count("histogram") > 0};
        const data::PolygraphyJson d = data::load_data_file(a.get("path"));
        const bool results = d.content == data::JsonContent::kRunResults;
        logger().log(Severity::kInfo,
                     results ? results_text(d.run_results, show) : inputs_text(d.inputs, show));
        return 0;
    });
}

}  // namespace pg::cli
