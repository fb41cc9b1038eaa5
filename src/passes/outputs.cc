#include "passes/outputs.h"

#include <algorithm>

#include "base/error.h"
#include "ir/graph.h"

namespace pg::passes {

namespace {

OutputsReport report_of(const ir::Graph& g) {
    OutputsReport r;
    for (ir::Value* v : g.outputs()) r.outputs.push_back(v->name());
    return r;
}

std::string join(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
    return s;
}

}  // namespace

OutputsReport set_outputs(ir::Graph& g, const std::vector<std::string>& names) {
    std::vector<ir::Value*> outs;
    std::vector<std::string> missing;
    for (const auto& name : names) {
        ir::Value* v = g.find_value(name);
        if (!v)
            missing.push_back(name);
        else if (!std::count(outs.begin(), outs.end(), v))
            outs.push_back(v);
    }
    if (!missing.empty())
        throw Error(ErrorKind::kInvalidInput,
                    "The following outputs were not found in the model: " + join(missing));
    for (ir::Value* v : outs) v->in_value_info = false;
    g.set_outputs(std::move(outs));
    return report_of(g);
}

OutputsReport mark_all_outputs(ir::Graph& g) {
    std::vector<std::string> names;
    for (const auto& n : g.nodes()) {
        if (n->op_type == "Constant") continue;
        for (ir::Value* out : n->outputs())
            if (out && !std::count(names.begin(), names.end(), out->name()))
                names.push_back(out->name());
    }
    return set_outputs(g, names);
}

OutputsReport exclude_outputs(ir::Graph& g, const std::vector<std::string>& names) {
    std::vector<ir::Value*> outs = g.outputs();
    for (const auto& name : names) {
        auto it =
            std::find_if(outs.begin(), outs.end(), [&](ir::Value* v) { return v->name() == name; });
        if (it == outs.end())
            throw Error(ErrorKind::kInvalidInput,
                        "cannot exclude '" + name + "': it is not a graph output");
        outs.erase(it);
    }
    g.set_outputs(std::move(outs));
    return report_of(g);
}

}  // namespace pg::passes
