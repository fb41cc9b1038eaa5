// `polygraph surgeon insert`: insert one node between existing tensors (polygraphy-spec.md §3.5,
// §8.5). Attribute values follow Polygraphy's `cast` typing (§1.3).
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "base/error.h"
#include "base/log.h"
#include "cli/common.h"
#include "cli/tool_surgeon.h"
#include "passes/insert.h"

namespace pg::cli {

namespace {

ArgParser insert_parser() {
    ArgParser p("polygraph surgeon insert",
                "[EXPERIMENTAL] Insert a single node into an ONNX model with the specified inputs "
                "and outputs. Any existing subgraph between the inputs and outputs is replaced.");
    p.positional("model_file", "Path to the ONNX model.");
    p.group("Inserted Node");
    p.values({"--inputs"}, "inputs", "NAME",
             "Names of the input tensors of the new node (required).");
    p.values({"--outputs"}, "outputs", "NAME",
             "Names of the output tensors of the new node (required).");
    p.value({"--op"}, "op", "OP", "The ONNX op of the new node (required).");
    p.value({"--name"}, "name", "NAME", "The name of the new node.");
    p.values({"--attrs"}, "attrs", "NAME=VALUE",
             "Attributes of the new node, e.g. --attrs axis=1 alpha=0.5 mode='constant' "
             "pads=[0,1]. Integers become INT, other numbers FLOAT, quoted or other text STRING, "
             "bracketed lists INTS, FLOATS or STRINGS.");
    add_model_load_args(p);
    add_model_save_args(p);
    add_logger_args(p);
    return p;
}

std::string trim(const std::string& s) {
    const size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
    return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

// One scalar of Polygraphy's cast(): int, else float, else string without surrounding quotes.
struct Scalar {
    enum Kind { kInt, kFloat, kString } kind;
    int64_t i = 0;
    double f = 0;
    std::string s;
};

Scalar cast_scalar(const std::string& raw) {
    const std::string t = trim(raw);
    char* end = nullptr;
    if (!t.empty()) {
        errno = 0;
        const long long i = std::strtoll(t.c_str(), &end, 10);
        if (*end == '\0' && errno == 0) return Scalar{Scalar::kInt, i, 0, ""};
        const bool hex = t.find_first_of("xX") != std::string::npos &&
                         t.find_first_of("nN") == std::string::npos;
        const double f = std::strtod(t.c_str(), &end);
        if (*end == '\0' && !hex) return Scalar{Scalar::kFloat, 0, f, ""};
    }
    std::string s = t;
    while (!s.empty() && (s.front() == '\'' || s.front() == '"')) s.erase(s.begin());
    while (!s.empty() && (s.back() == '\'' || s.back() == '"')) s.pop_back();
    return Scalar{Scalar::kString, 0, 0, s};
}

// Builds the attribute for `--attrs name=value` (split on the last '=').
ir::Attribute parse_attr(const std::string& arg) {
    const size_t eq = arg.rfind('=');
    if (eq == std::string::npos || eq == 0)
        throw Error(ErrorKind::kUsage, "--attrs: expected NAME=VALUE, got '" + arg + "'");
    const std::string name = arg.substr(0, eq), text = arg.substr(eq + 1);
    if (!(text.size() >= 2 && text.front() == '[' && text.back() == ']')) {
        Scalar v = cast_scalar(text);
        if (v.kind == Scalar::kInt) return ir::Attribute::make_int(name, v.i);
        if (v.kind == Scalar::kFloat)
            return ir::Attribute::make_float(name, static_cast<float>(v.f));
        return ir::Attribute::make_string(name, v.s);
    }
    std::vector<Scalar> items;
    const std::string inner = text.substr(1, text.size() - 2);
    for (size_t start = 0;;) {
        const size_t comma = inner.find(',', start);
        items.push_back(cast_scalar(
            inner.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    bool all_int = true, all_num = true, all_str = true;
    for (const auto& v : items) {
        all_int = all_int && v.kind == Scalar::kInt;
        all_num = all_num && v.kind != Scalar::kString;
        all_str = all_str && v.kind == Scalar::kString;
    }
    if (all_int) {
        std::vector<int64_t> ints;
        for (const auto& v : items) ints.push_back(v.i);
        return ir::Attribute::make_ints(name, ints);
    }
    if (all_num) {
        std::vector<float> floats;
        for (const auto& v : items)
            floats.push_back(
                static_cast<float>(v.kind == Scalar::kInt ? static_cast<double>(v.i) : v.f));
        return ir::Attribute::make_floats(name, floats);
    }
    if (!all_str)
        throw Error(ErrorKind::kUsage, "--attrs: list '" + text + "' mixes numbers and strings");
    ir::Attribute a;
    a.name = name;
    a.type = ir::AttrType::kStrings;
    for (const auto& v : items) a.strings.push_back(v.s);
    return a;
}

int run_insert(const ParsedArgs& a) {
    const std::string out_path = required_output(a);
    for (const char* req : {"inputs", "outputs", "op"})
        if (!a.has(req) || a.get_all(req).empty())
            throw Error(ErrorKind::kUsage,
                        std::string("the following arguments are required: --") + req);
    passes::InsertOptions options;
    options.op = a.get("op");
    options.name = a.get("name");
    options.inputs = a.get_all("inputs");
    options.outputs = a.get_all("outputs");
    for (const auto& arg : a.get_all("attrs")) options.attributes.push_back(parse_attr(arg));
    auto model = load_model_from_args(a);
    log_model_summary("Original Model", *model);
    passes::InsertReport r = with_context("while inserting a " + options.op + " node", [&] {
        return passes::insert_node(*model->graph, std::move(options));
    });
    for (const auto& rename : r.renamed) log_verbose("Renamed tensor: {}", rename);
    log_verbose("Inserted node at position {}; removed {} replaced node(s)", r.position,
                r.nodes_removed);
    save_model_from_args(*model, a, out_path);
    log_model_summary("New Model", *model);
    return 0;
}

}  // namespace

int surgeon_insert(const std::vector<std::string>& argv) {
    return run_tool(insert_parser(), argv, run_insert);
}

}  // namespace pg::cli
