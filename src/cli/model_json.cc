#include <map>

#include <nlohmann/json.hpp>

#include "cli/model_report.h"

namespace pg::cli {

namespace {

using nlohmann::ordered_json;

ordered_json shape_json(const ir::TypeInfo& t) {
    if (t.kind != ir::TypeKind::kTensor || !t.shape) return nullptr;
    ordered_json dims = ordered_json::array();
    for (const auto& d : *t.shape) {
        if (d.value) dims.push_back(*d.value);
        else if (!d.param.empty()) dims.push_back(d.param);
        else dims.push_back(nullptr);
    }
    return dims;
}

ordered_json value_json(const ir::Value& v) {
    ordered_json j;
    j["name"] = v.name();
    const bool tensor = v.has_type() && v.type().kind == ir::TypeKind::kTensor;
    j["dtype"] = tensor ? ordered_json(dtype_name(v.type().elem_type)) : ordered_json(nullptr);
    j["shape"] = shape_json(v.type());
    return j;
}

size_t count_nodes_total(const ir::Graph& g) {
    size_t n = g.num_nodes();
    for (const auto& node : g.nodes())
        for (ir::Graph* sub : node->subgraphs()) n += count_nodes_total(*sub);
    return n;
}

}  // namespace

std::string model_json(const ir::Model& m) {
    const ir::Graph& g = *m.graph;
    ordered_json j;
    j["ir_version"] = m.ir_version;
    j["producer"] = {{"name", m.producer_name}, {"version", m.producer_version}};
    j["graph_name"] = g.name;
    ordered_json opsets = ordered_json::object();
    for (const auto& o : m.opset_imports) opsets[o.domain.empty() ? "ai.onnx" : o.domain] = o.version;
    j["opsets"] = opsets;
    j["inputs"] = ordered_json::array();
    for (const ir::Value* v : g.inputs())
        if (!v->is_initializer()) j["inputs"].push_back(value_json(*v));
    j["outputs"] = ordered_json::array();
    for (const ir::Value* v : g.outputs()) j["outputs"].push_back(value_json(*v));
    j["num_nodes"] = g.num_nodes();
    j["num_nodes_total"] = count_nodes_total(g);
    std::map<std::string, size_t> ops;
    for (const auto& n : g.nodes()) ++ops[n->op_type];
    j["op_counts"] = ops;
    j["num_initializers"] = g.initializers().size();
    uint64_t bytes = 0;
    for (const ir::Value* v : g.initializers()) bytes += v->initializer()->tensor.nbytes();
    j["initializer_bytes"] = bytes;
    j["functions"] = ordered_json::array();
    for (const auto& f : m.functions) j["functions"].push_back(f.domain.empty() ? f.name : f.domain + "." + f.name);
    ordered_json meta = ordered_json::object();
    for (const auto& [k, v] : m.metadata) meta[k] = v;
    j["metadata"] = meta;
    return j.dump(2);
}

}  // namespace pg::cli
