#include "passes/extract.h"

#include <algorithm>

#include "base/error.h"
#include "ir/graph.h"
#include "passes/cleanup.h"

namespace pg::passes {

namespace {

constexpr const char* kNeedsInference =
    "; shape inference comes with the reference interpreter, which is not built yet: give it "
    "explicitly (NAME:SHAPE:DTYPE for inputs, NAME:DTYPE for outputs)";

ir::Value* find_tensor(const ir::Graph& g, const std::string& name) {
    ir::Value* v = g.find_value(name);
    if (!v)
        throw Error(ErrorKind::kInvalidInput, "Tensor: " + name + " does not exist in the model.");
    return v;
}

// The value's recorded type: its TypeInfo, or the dtype and dims of its initializer.
std::optional<ir::TypeInfo> known_type(const ir::Value& v) {
    if (v.has_type() && v.type().is_tensor()) return v.type();
    if (v.is_initializer()) {
        const Tensor& t = v.initializer()->tensor;
        return ir::TypeInfo::tensor(t.dtype(), ir::make_shape(t.dims()));
    }
    return std::nullopt;
}

// Makes v a graph input or output: an input loses its producer; both take the spec's type.
void bind(ir::Graph& g, ir::Value* v, const TensorSpec& s, bool is_input) {
    if (ir::Node* p = v->producer(); p && is_input)
        g.detach_node_output(p, static_cast<size_t>(v->producer_index()));
    if ((s.dtype || s.shape) && !v->is_initializer())
        v->set_type(ir::TypeInfo::tensor(s.dtype.value_or(DataType::kUndefined), s.shape));
    v->in_value_info = false;
}

// Names of values read by nodes of g that nothing defines (no producer, input or initializer).
std::vector<std::string> unbound_values(const ir::Graph& g) {
    std::vector<std::string> out;
    for (const auto& n : g.nodes())
        for (ir::Value* in : n->inputs()) {
            if (!in || in->graph() != &g || in->producer() || in->is_initializer()) continue;
            if (std::count(g.inputs().begin(), g.inputs().end(), in)) continue;
            if (!std::count(out.begin(), out.end(), in->name())) out.push_back(in->name());
        }
    return out;
}

}  // namespace

TensorSpec resolve_spec(const ir::Graph& g, const TensorSpec& spec, bool is_input, bool strict) {
    ir::Value* v = find_tensor(g, spec.name);
    TensorSpec out = spec;
    if (auto t = known_type(*v)) {
        if (!out.dtype && t->elem_type != DataType::kUndefined) out.dtype = t->elem_type;
        if (!out.shape && t->shape) out.shape = t->shape;
    }
    if (!strict) return out;
    if (!out.dtype)
        throw Error(ErrorKind::kUnsupported, "the model records no data type for tensor '" +
                                                 spec.name + "'" + kNeedsInference);
    if (is_input && !out.shape && !v->is_initializer())
        throw Error(ErrorKind::kUnsupported, "the model records no shape for input tensor '" +
                                                 spec.name + "'" + kNeedsInference);
    return out;
}

ExtractReport extract(ir::Graph& g, const ExtractOptions& options) {
    std::vector<TensorSpec> inputs, outputs;
    const bool strict = !options.allow_missing_types;
    for (const auto& s : options.inputs) inputs.push_back(resolve_spec(g, s, true, strict));
    for (const auto& s : options.outputs) outputs.push_back(resolve_spec(g, s, false, strict));
    if (!options.inputs.empty()) {
        std::vector<ir::Value*> new_inputs;
        for (const auto& s : inputs) {
            ir::Value* v = find_tensor(g, s.name);
            bind(g, v, s, true);
            if (!std::count(new_inputs.begin(), new_inputs.end(), v)) new_inputs.push_back(v);
        }
        g.set_inputs(std::move(new_inputs));
    }
    if (!options.outputs.empty()) {
        std::vector<ir::Value*> new_outputs;
        for (const auto& s : outputs) {
            ir::Value* v = find_tensor(g, s.name);
            bind(g, v, s, false);
            new_outputs.push_back(v);
        }
        g.set_outputs(std::move(new_outputs));
    }
    CleanupReport c = cleanup(g);
    return ExtractReport{c.nodes_removed, c.values_removed, unbound_values(g)};
}

}  // namespace pg::passes
