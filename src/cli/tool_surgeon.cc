// `polygraph surgeon`: model editing (sanitize, extract, insert, prune). The subtools live in
// tool_surgeon_<name>.cc; this file dispatches and holds their shared flag parsers.
#include "cli/tool_surgeon.h"

#include <cstdlib>

#include "base/error.h"
#include "base/log.h"
#include "cli/common.h"
#include "cli/model_report.h"
#include "cli/tools.h"

namespace pg::cli {

namespace {

bool is_auto(const std::string& s) {
    if (s.size() != 4) return false;
    std::string l;
    for (char c : s) l += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return l == "auto";
}

// Splits on the last ':' like Python's rpartition: {head, tail}; no ':' gives {"", text}.
std::pair<std::string, std::string> rpartition(const std::string& text) {
    const size_t pos = text.rfind(':');
    if (pos == std::string::npos) return {"", text};
    return {text.substr(0, pos), text.substr(pos + 1)};
}

}  // namespace

ir::Shape parse_shape(const std::string& text, const std::string& flag) {
    std::vector<std::string> items;
    try {
        items = parse_list(text);
    } catch (const Error& e) {
        throw Error(ErrorKind::kUsage, flag + ": " + e.message());
    }
    ir::Shape shape;
    for (const auto& item : items) {
        char* end = nullptr;
        const long long v = std::strtoll(item.c_str(), &end, 10);
        const bool is_int = end && *end == '\0' && !item.empty();
        if (!is_int)
            shape.push_back(ir::Dim::symbolic(item));
        else if (v < 0)
            shape.push_back(ir::Dim::unknown());
        else
            shape.push_back(ir::Dim::known(v));
    }
    return shape;
}

std::vector<passes::TensorSpec> parse_meta(const std::vector<std::string>& args, bool with_shape,
                                           bool with_dtype, const std::string& flag) {
    std::vector<passes::TensorSpec> out;
    for (const auto& arg : args) {
        passes::TensorSpec spec;
        std::string rest = arg;
        if (with_dtype && rest.find(':') != std::string::npos) {
            auto [head, dtype] = rpartition(rest);
            rest = head;
            if (!is_auto(dtype)) {
                spec.dtype = dtype_from_name(dtype);
                if (!spec.dtype)
                    throw Error(ErrorKind::kUsage, flag + ": unknown data type '" + dtype +
                                                       "' in '" + arg +
                                                       "' (examples: float32, float16, int64)");
            }
        }
        if (with_shape && rest.find(':') != std::string::npos) {
            auto [head, shape] = rpartition(rest);
            rest = head;
            if (!is_auto(shape)) spec.shape = parse_shape(shape, flag);
        }
        if (rest.empty())
            throw Error(ErrorKind::kUsage, flag + ": missing tensor name in '" + arg + "'");
        spec.name = rest;
        out.push_back(std::move(spec));
    }
    return out;
}

std::string required_output(const ParsedArgs& a) {
    if (!a.has("output") || a.get("output").empty())
        throw Error(ErrorKind::kUsage, "the following arguments are required: -o/--output");
    return a.get("output");
}

void log_model_summary(const std::string& title, const ir::Model& m) {
    if (logger().enabled(Severity::kInfo))
        log_info("{}:\n{}\n\n", title, model_text(m, ShowOptions{}));
}

int run_surgeon(const std::vector<std::string>& argv) {
    static const std::vector<ToolEntry> subtools = {
        {"extract", "Extract a subgraph from an ONNX model based on the given inputs and outputs.",
         surgeon_extract},
        {"sanitize", "Clean up, sort, and change the inputs or outputs of an ONNX model.",
         surgeon_sanitize},
        {"insert", "[EXPERIMENTAL] Insert a single node into an ONNX model.", surgeon_insert},
        {"prune", "[EXPERIMENTAL] Prune the weights of a model to 2:4 structured sparsity.",
         surgeon_prune},
    };
    return run_subtool("polygraph surgeon", "Modify ONNX models.", subtools, argv);
}

}  // namespace pg::cli
