#include "support/model_compare.h"

#include <cstring>

namespace pg::test {

namespace {

std::string names(const std::vector<ir::Value*>& vs) {
    std::string s;
    for (const ir::Value* v : vs) s += (v ? v->name() : std::string("<none>")) + ",";
    return s;
}

std::string diff_tensor(const ir::NamedTensor& a, const ir::NamedTensor& b, const std::string& where) {
    if (!a.tensor.same_contents(b.tensor)) return where + ": tensor '" + a.name + "' contents differ";
    if (a.name != b.name) return where + ": tensor name '" + a.name + "' vs '" + b.name + "'";
    if (a.metadata != b.metadata || a.doc_string != b.doc_string) return where + ": tensor '" + a.name + "' metadata differs";
    return "";
}

std::string diff_attr(const ir::Attribute& a, const ir::Attribute& b, const std::string& where) {
    const std::string w = where + " attribute '" + a.name + "'";
    if (a.name != b.name || a.type != b.type) return w + ": name/type differ";
    if (std::memcmp(&a.f, &b.f, sizeof a.f) != 0 || a.i != b.i || a.s != b.s) return w + ": scalar differs";
    if (a.ints != b.ints || a.strings != b.strings) return w + ": list differs";
    if (a.floats.size() != b.floats.size() ||
        (!a.floats.empty() && std::memcmp(a.floats.data(), b.floats.data(), a.floats.size() * 4) != 0))
        return w + ": floats differ";
    if (a.tensors.size() != b.tensors.size() || a.graphs.size() != b.graphs.size()) return w + ": counts differ";
    for (size_t k = 0; k < a.tensors.size(); ++k)
        if (auto d = diff_tensor(a.tensors[k], b.tensors[k], w); !d.empty()) return d;
    for (size_t k = 0; k < a.graphs.size(); ++k)
        if (auto d = diff_graphs(*a.graphs[k], *b.graphs[k], w); !d.empty()) return d;
    if (a.type_protos != b.type_protos) return w + ": type protos differ";
    if (a.ref_attr_name != b.ref_attr_name || a.unknown_fields != b.unknown_fields) return w + ": details differ";
    return "";
}

std::string diff_node(const ir::Node& a, const ir::Node& b, const std::string& where) {
    const std::string w = where + " node '" + a.name + "' (" + a.op_type + ")";
    if (a.op_type != b.op_type || a.domain != b.domain || a.name != b.name || a.overload != b.overload)
        return w + ": identity differs from '" + b.name + "' (" + b.op_type + ")";
    if (names(a.inputs()) != names(b.inputs())) return w + ": inputs differ";
    if (names(a.outputs()) != names(b.outputs())) return w + ": outputs differ";
    if (a.metadata != b.metadata || a.doc_string != b.doc_string || a.unknown_fields != b.unknown_fields)
        return w + ": metadata differs";
    if (a.attributes.size() != b.attributes.size()) return w + ": attribute count differs";
    for (size_t k = 0; k < a.attributes.size(); ++k)
        if (auto d = diff_attr(a.attributes[k], b.attributes[k], w); !d.empty()) return d;
    return "";
}

}  // namespace

std::string diff_graphs(const ir::Graph& a, const ir::Graph& b, const std::string& where) {
    const std::string w = where + " graph '" + a.name + "'";
    if (a.name != b.name) return w + ": name differs";
    if (names(a.inputs()) != names(b.inputs())) return w + ": inputs differ";
    if (names(a.outputs()) != names(b.outputs())) return w + ": outputs differ";
    if (a.num_nodes() != b.num_nodes()) return w + ": node count differs";
    for (size_t k = 0; k < a.num_nodes(); ++k)
        if (auto d = diff_node(*a.nodes()[k], *b.nodes()[k], w); !d.empty()) return d;
    if (a.initializers().size() != b.initializers().size()) return w + ": initializer count differs";
    for (size_t k = 0; k < a.initializers().size(); ++k)
        if (auto d = diff_tensor(*a.initializers()[k]->initializer(), *b.initializers()[k]->initializer(), w); !d.empty())
            return d;
    for (size_t k = 0; k < a.inputs().size(); ++k)
        if (a.inputs()[k]->type() != b.inputs()[k]->type()) return w + ": type of input '" + a.inputs()[k]->name() + "' differs";
    if (a.metadata != b.metadata || a.doc_string != b.doc_string) return w + ": metadata differs";
    return "";
}

std::string diff_models(const ir::Model& a, const ir::Model& b) {
    if (a.ir_version != b.ir_version) return "ir_version differs";
    if (a.opset_imports != b.opset_imports) return "opset imports differ";
    if (a.producer_name != b.producer_name || a.producer_version != b.producer_version) return "producer differs";
    if (a.metadata != b.metadata || a.doc_string != b.doc_string) return "model metadata differs";
    if (a.training_info != b.training_info || a.unknown_fields != b.unknown_fields) return "opaque model fields differ";
    if (a.functions.size() != b.functions.size()) return "function count differs";
    for (size_t k = 0; k < a.functions.size(); ++k) {
        if (a.functions[k].name != b.functions[k].name) return "function name differs";
        if (auto d = diff_graphs(*a.functions[k].body, *b.functions[k].body, "function " + a.functions[k].name); !d.empty())
            return d;
    }
    return diff_graphs(*a.graph, *b.graph, "main");
}

}  // namespace pg::test
