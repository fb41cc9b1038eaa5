#include <unistd.h>

#include <regex>
#include <set>

#include "base/error.h"
#include "ir/topo.h"
#include "layerwise/layerwise.h"

namespace pg::layerwise {

namespace {

std::vector<const ir::Node*> ordered_nodes(const ir::Graph& g) {
    ir::TopoResult r = ir::topological_order(g);
    return {r.order.begin(), r.order.end()};
}

// `mark all` (or `mark-all`) anywhere: --trt-outputs and --onnx-outputs share one list, so
// `--trt-outputs mark all --onnx-outputs mark all` gives it twice; every tensor then.
bool is_mark_all(const std::vector<std::string>& spec) {
    for (size_t i = 0; i < spec.size(); ++i)
        if (spec[i] == "mark-all" || (spec[i] == "mark" && i + 1 < spec.size() && spec[i + 1] == "all"))
            return true;
    return false;
}

}  // namespace

std::vector<std::string> select_tensors(const ir::Model& m, const std::vector<std::string>& spec) {
    std::vector<std::string> out;
    std::set<std::string> seen;
    const bool all = is_mark_all(spec);
    std::vector<std::regex> patterns;
    for (const auto& s : all ? std::vector<std::string>{} : spec) {
        try {
            patterns.emplace_back(s);
        } catch (const std::regex_error&) {
            throw Error(ErrorKind::kUsage,
                        "--onnx-outputs: '" + s + "' is not a valid regular expression");
        }
    }
    std::set<size_t> matched;
    for (const ir::Node* n : ordered_nodes(*m.graph)) {
        if (all && n->op_type == "Constant") continue;
        for (const ir::Value* v : n->outputs()) {
            if (!v || seen.count(v->name())) continue;
            bool take = all;
            for (size_t k = 0; !take && k < patterns.size(); ++k)
                if (spec[k] == v->name() || std::regex_match(v->name(), patterns[k]))
                    take = true, matched.insert(k);
            if (take) {
                out.push_back(v->name());
                seen.insert(v->name());
            }
        }
    }
    if (!all)
        for (size_t k = 0; k < spec.size(); ++k)
            if (!matched.count(k))
                throw Error(ErrorKind::kUsage,
                            "--onnx-outputs: no tensor in the model matches '" + spec[k] + "'");
    return out;
}

uint64_t parse_budget(const std::string& text) {
    if (text.empty()) throw Error(ErrorKind::kUsage, "--memory-budget: empty value");
    double mult = 1;
    std::string num = text;
    const char last = static_cast<char>(std::toupper(static_cast<unsigned char>(text.back())));
    if (last == 'K' || last == 'M' || last == 'G') {
        mult = last == 'K' ? 1024.0 : last == 'M' ? 1048576.0 : 1073741824.0;
        num.pop_back();
    }
    size_t used = 0;
    double v = -1;
    try {
        v = std::stod(num, &used);
    } catch (const std::exception&) {
    }
    if (used != num.size() || !(v > 0))
        throw Error(ErrorKind::kUsage,
                    "--memory-budget: expected a size like 256M or 2G, got '" + text + "'");
    return static_cast<uint64_t>(v * mult);
}

uint64_t default_budget() {
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || page <= 0) return uint64_t{1} << 30;
    return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) / 4;
}

}  // namespace pg::layerwise
