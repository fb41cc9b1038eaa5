#include <algorithm>

#include "cli/model_report.h"
#include "cli/render.h"

namespace pg::cli {

namespace {

std::string graph_text(const ir::Graph& g, const ShowOptions& show, bool subgraph);

std::string meta_entry(const std::string& name, const ir::TypeInfo* type) {
    std::vector<std::string> parts;
    if (type && type->kind == ir::TypeKind::kTensor) {
        if (type->elem_type != DataType::kUndefined) parts.push_back("dtype=" + dtype_name(type->elem_type));
        if (type->shape) parts.push_back("shape=" + ir::shape_to_string(*type->shape));
    }
    if (parts.empty()) return name;
    std::string s = name + " [";
    for (size_t i = 0; i < parts.size(); ++i) s += (i ? ", " : "") + parts[i];
    return s + "]";
}

std::string value_entry(const ir::Value* v) {
    if (!v) return "";
    if (const auto* init = v->initializer()) {
        const Tensor& t = init->tensor;
        ir::TypeInfo type = ir::TypeInfo::tensor(t.dtype(), ir::make_shape(t.dims()));
        return "Initializer | " + meta_entry(v->name(), &type);
    }
    return meta_entry(v->name(), v->has_type() ? &v->type() : nullptr);
}

// "{a,\n b}" with continuation lines indented by `cont` spaces.
std::string meta_block(const std::vector<std::string>& entries, int cont) {
    std::string s = "{";
    for (size_t i = 0; i < entries.size(); ++i)
        s += (i ? ",\n" + std::string(static_cast<size_t>(cont), ' ') : "") + entries[i];
    return s + "}";
}

std::string attr_value(const ir::Attribute& a, const ShowOptions& show) {
    using T = ir::AttrType;
    switch (a.type) {
        case T::kFloat: return py_float(a.f);
        case T::kInt: return std::to_string(a.i);
        case T::kString: return a.s;
        case T::kFloats: return py_list(a.floats);
        case T::kInts: return py_list(a.ints);
        case T::kStrings: return py_list(a.strings);
        case T::kTensor: {
            if (a.tensors.empty()) return "Tensor: []";
            const Tensor& t = a.tensors[0].tensor;
            std::string s = "Tensor: [dtype=" + dtype_name(t.dtype()) + ", shape=" + py_list(t.dims()) + "]";
            if (show.weights) s += " | Values:\n" + indent_lines(numpy_str(t), 4);
            return s;
        }
        case T::kGraph:
            return a.graphs.empty() ? "" : "\n" + indent_lines(graph_text(*a.graphs[0], show, true), 12);
        case T::kGraphs: {
            std::string s;
            for (const auto& g : a.graphs) s += "\n" + indent_lines(graph_text(*g, show, true), 12);
            return s;
        }
        default: return "<" + ir::attr_type_name(a.type) + ">";
    }
}

std::string node_text(const ir::Node& n, size_t index, const ShowOptions& show) {
    std::string idx = std::to_string(index);
    idx += std::string(idx.size() < 4 ? 4 - idx.size() : 0, ' ');
    std::string s = "Node " + idx + " | " + n.name + " [Op: " + n.op_type + "]\n";
    std::vector<std::string> ins, outs;
    for (const ir::Value* v : n.inputs()) ins.push_back(value_entry(v));
    for (const ir::Value* v : n.outputs()) outs.push_back(value_entry(v));
    if (!ins.empty()) s += "    " + meta_block(ins, 5) + "\n";
    if (!outs.empty()) s += std::string(ins.empty() ? "    " : "     -> ") + meta_block(outs, ins.empty() ? 5 : 9) + "\n";
    if (show.attrs && !n.attributes.empty()) {
        s += "    ---- Attributes ----\n";
        const std::string prefix = n.name.empty() ? "" : n.name + ".";
        for (const auto& a : n.attributes) s += "    " + prefix + a.name + " = " + attr_value(a, show) + "\n";
    }
    return s;
}

std::string initializer_section(const ir::Graph& g, const ShowOptions& show) {
    std::string s = "---- " + std::to_string(g.initializers().size()) + " Initializer(s) ----\n";
    if (show.weights) {
        if (g.initializers().empty()) return s + "{}\n\n";
        for (const ir::Value* v : g.initializers()) {
            const Tensor& t = v->initializer()->tensor;
            s += "Initializer | " + v->name() + " [dtype=" + dtype_name(t.dtype()) + ", shape=" + py_list(t.dims()) +
                 "] | Values:\n" + indent_lines(numpy_str(t), 4) + "\n\n";
        }
        return s;
    }
    if (show.layers) {
        std::vector<std::string> entries;
        for (const ir::Value* v : g.initializers()) {
            const Tensor& t = v->initializer()->tensor;
            ir::TypeInfo type = ir::TypeInfo::tensor(t.dtype(), ir::make_shape(t.dims()));
            entries.push_back(meta_entry(v->name(), &type));
        }
        return s + meta_block(entries, 1) + "\n\n";
    }
    return s + "\n";
}

std::string graph_text(const ir::Graph& g, const ShowOptions& show, bool subgraph) {
    const std::string kind = subgraph ? "Subgraph" : "Graph";
    std::string s;
    if (show.attrs && !g.doc_string.empty()) s += "---- Docstring ----\n" + g.doc_string + "\n\n";
    std::vector<std::string> ins, outs;
    for (const ir::Value* v : g.inputs())
        if (!v->is_initializer()) ins.push_back(meta_entry(v->name(), v->has_type() ? &v->type() : nullptr));
    for (const ir::Value* v : g.outputs()) outs.push_back(meta_entry(v->name(), v->has_type() ? &v->type() : nullptr));
    s += "---- " + std::to_string(ins.size()) + " " + kind + " Input(s) ----\n" + meta_block(ins, 1) + "\n\n";
    s += "---- " + std::to_string(outs.size()) + " " + kind + " Output(s) ----\n" + meta_block(outs, 1) + "\n\n";
    s += initializer_section(g, show);
    s += "---- " + std::to_string(g.num_nodes()) + " Node(s) ----\n";
    if (show.layers)
        for (size_t i = 0; i < g.num_nodes(); ++i) s += node_text(*g.nodes()[i], i, show) + "\n";
    return s;
}

std::string functions_text(const ir::Model& m, const ShowOptions& show) {
    if (m.functions.empty()) return "";
    std::string s = "\n---- " + std::to_string(m.functions.size()) + " Function(s) ----\n";
    for (const auto& f : m.functions) {
        s += "Function | " + (f.domain.empty() ? "" : f.domain + ".") + f.name + " (" +
             std::to_string(f.body->num_nodes()) + " node(s))\n";
        if (show.layers) s += indent_lines(graph_text(*f.body, show, true), 4) + "\n";
    }
    return s;
}

}  // namespace

std::string model_text(const ir::Model& m, const ShowOptions& show) {
    std::string opset = "Unknown";
    std::vector<std::pair<std::string, int64_t>> others;
    for (const auto& o : m.opset_imports) {
        if (ir::is_default_domain(o.domain)) opset = std::to_string(o.version);
        else others.emplace_back(o.domain, o.version);
    }
    std::string s = "Name: " + m.graph->name + " | ONNX Opset: " + opset;
    if (!others.empty()) s += " | Other Opsets: " + py_dict(others);
    s += "\n\n" + graph_text(*m.graph, show, false) + functions_text(m, show);
    while (!s.empty() && s.back() == '\n') s.pop_back();
    return s;
}

}  // namespace pg::cli
