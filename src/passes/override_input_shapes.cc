#include "passes/override_input_shapes.h"

#include <algorithm>

#include "ir/graph.h"
#include "passes/extract.h"

namespace pg::passes {

OverrideInputShapesReport override_input_shapes(
    ir::Graph& g, const std::vector<std::pair<std::string, ir::Shape>>& shapes) {
    // Current inputs keep their metadata; user shapes replace theirs or add new inputs.
    ExtractOptions options;
    options.allow_missing_types = true;
    for (ir::Value* in : g.inputs()) options.inputs.push_back(TensorSpec{in->name(), {}, {}});
    for (const auto& entry : shapes) {
        const std::string& name = entry.first;
        auto it = std::find_if(options.inputs.begin(), options.inputs.end(),
                               [&](const TensorSpec& s) { return s.name == name; });
        if (it == options.inputs.end())
            it = options.inputs.insert(options.inputs.end(), TensorSpec{name, {}, {}});
        it->shape = entry.second;
    }
    extract(g, options);
    OverrideInputShapesReport report;
    for (ir::Value* in : g.inputs()) report.inputs.push_back(in->name());
    for (const auto& v : g.values()) {
        if (std::count(g.inputs().begin(), g.inputs().end(), v.get()) || v->is_initializer())
            continue;
        if (!v->has_type() || !v->type().is_tensor() || !v->type().shape) continue;
        ir::TypeInfo t = ir::TypeInfo::tensor(v->type().elem_type, std::nullopt);
        t.denotation = v->type().denotation;
        v->set_type(std::move(t));
        ++report.shapes_cleared;
    }
    return report;
}

}  // namespace pg::passes
