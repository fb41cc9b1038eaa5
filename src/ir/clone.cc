#include "ir/clone.h"

#include "base/error.h"

namespace pg::ir {

namespace {

using ValueMap = std::unordered_map<const Value*, Value*>;

void copy_value_details(const Value& from, Value* to) {
    to->set_type(from.type());
    to->doc_string = from.doc_string;
    to->metadata = from.metadata;
    to->unknown_fields = from.unknown_fields;
    to->in_value_info = from.in_value_info;
}

Value* map_value(const Value* v, const ValueMap& local, const ValueMap& outer, const Graph& dst) {
    if (!v) return nullptr;
    if (auto it = local.find(v); it != local.end()) return it->second;
    if (auto it = outer.find(v); it != outer.end()) return it->second;
    Value* found = dst.lookup(v->name());
    if (!found) throw Error(ErrorKind::kInternal, "clone_graph: outer value '" + v->name() + "' not found");
    return found;
}

void clone_nodes(const Graph& src, Graph& dst, ValueMap& local, const ValueMap& outer) {
    // Outputs first, so that inputs can refer to values produced later in the list.
    std::vector<Node*> copies;
    for (const auto& n : src.nodes()) {
        std::vector<std::string> outs;
        for (const Value* o : n->outputs()) outs.push_back(o ? o->name() : std::string());
        Node* c = dst.add_node(n->op_type, {}, outs);
        c->name = n->name;
        c->domain = n->domain;
        c->overload = n->overload;
        c->doc_string = n->doc_string;
        c->metadata = n->metadata;
        c->unknown_fields = n->unknown_fields;
        for (size_t k = 0; k < n->outputs().size(); ++k)
            if (const Value* o = n->outputs()[k]) {
                local[o] = c->outputs()[k];
                copy_value_details(*o, c->outputs()[k]);
            }
        copies.push_back(c);
    }
    for (size_t i = 0; i < copies.size(); ++i) {
        const Node& n = *src.nodes()[i];
        for (const Value* in : n.inputs()) copies[i]->add_input(map_value(in, local, outer, dst));
        for (const auto& a : n.attributes) copies[i]->attributes.push_back(clone_attribute(a, &dst));
        for (Graph* sub : copies[i]->subgraphs()) sub->set_owner_node(copies[i]);
    }
}

}  // namespace

std::unique_ptr<Graph> clone_graph(const Graph& src, Graph* parent, const ValueMap& outer) {
    auto dst = std::make_unique<Graph>(parent);
    dst->name = src.name;
    dst->doc_string = src.doc_string;
    dst->metadata = src.metadata;
    dst->unknown_fields = src.unknown_fields;
    dst->sparse_initializers = src.sparse_initializers;
    dst->quantization_annotations = src.quantization_annotations;
    ValueMap local;
    for (const Value* in : src.inputs()) {
        if (local.count(in)) {  // listed twice
            dst->add_input(local[in]);
            continue;
        }
        Value* v = dst->add_value(in->name());
        copy_value_details(*in, v);
        dst->add_input(v);
        local[in] = v;
    }
    for (const Value* init : src.initializers()) {
        Value* v = local.count(init) ? local[init] : dst->add_value(init->name());
        if (!local.count(init)) copy_value_details(*init, v);
        dst->set_initializer(v, *init->initializer());
        local[init] = v;
    }
    clone_nodes(src, *dst, local, outer);
    std::vector<Value*> outs;
    for (const Value* o : src.outputs()) outs.push_back(map_value(o, local, outer, *dst));
    dst->set_outputs(std::move(outs));
    for (const auto& v : src.values())  // orphans listed in value_info are dropped on purpose
        if (v->in_value_info && local.count(v.get())) local[v.get()]->in_value_info = true;
    return dst;
}

Attribute clone_attribute(const Attribute& a, Graph* parent) {
    Attribute c;
    c.name = a.name;
    c.type = a.type;
    c.ref_attr_name = a.ref_attr_name;
    c.doc_string = a.doc_string;
    c.f = a.f;
    c.i = a.i;
    c.s = a.s;
    c.floats = a.floats;
    c.ints = a.ints;
    c.strings = a.strings;
    c.tensors = a.tensors;
    c.sparse_tensors = a.sparse_tensors;
    c.type_protos = a.type_protos;
    c.unknown_fields = a.unknown_fields;
    for (const auto& g : a.graphs) c.graphs.push_back(clone_graph(*g, parent));
    return c;
}

std::unique_ptr<Model> clone_model(const Model& m) {
    auto c = std::make_unique<Model>();
    c->ir_version = m.ir_version;
    c->opset_imports = m.opset_imports;
    c->producer_name = m.producer_name;
    c->producer_version = m.producer_version;
    c->domain = m.domain;
    c->model_version = m.model_version;
    c->doc_string = m.doc_string;
    c->metadata = m.metadata;
    c->training_info = m.training_info;
    c->unknown_fields = m.unknown_fields;
    if (m.graph) c->graph = clone_graph(*m.graph, nullptr);
    for (const auto& f : m.functions) {
        Function fc;
        fc.name = f.name;
        fc.domain = f.domain;
        fc.overload = f.overload;
        fc.doc_string = f.doc_string;
        fc.attribute_names = f.attribute_names;
        for (const auto& a : f.attribute_defaults) fc.attribute_defaults.push_back(clone_attribute(a, nullptr));
        fc.opset_imports = f.opset_imports;
        fc.body = clone_graph(*f.body, nullptr);
        fc.metadata = f.metadata;
        fc.unknown_fields = f.unknown_fields;
        c->functions.push_back(std::move(fc));
    }
    return c;
}

}  // namespace pg::ir
