#include "passes/promote_float64.h"

#include <cstring>

#include "base/error.h"
#include "ir/model.h"

namespace pg::passes {

namespace {

Tensor widen(const Tensor& t) {
    Tensor out = Tensor::zeros(DataType::kFloat64, t.dims());
    double* dst = reinterpret_cast<double*>(out.mutable_bytes());
    for (uint64_t i = 0; i < t.numel(); ++i) dst[i] = t.data<float>()[i];
    return out;
}

bool is_f32_tensor(const Tensor& t) {
    return t.dtype() == DataType::kFloat32 && t.has_data();
}

void promote_type(ir::TypeInfo& t, PromoteFloat64Report& r) {
    if ((t.kind == ir::TypeKind::kTensor || t.kind == ir::TypeKind::kSparseTensor) &&
        t.elem_type == DataType::kFloat32) {
        t.elem_type = DataType::kFloat64;
        ++r.values;
    }
    for (auto& c : t.children) promote_type(c, r);
}

// Attributes naming a dtype: Cast.to, EyeLike/RandomX.dtype, ...
bool is_dtype_attribute(const ir::Node& n, const ir::Attribute& a) {
    return a.type == ir::AttrType::kInt && (a.name == "to" || a.name == "dtype") && a.i == 1;
}

void promote_attribute(const ir::Node& n, ir::Attribute& a, PromoteFloat64Report& r) {
    if (is_dtype_attribute(n, a)) {
        a.i = static_cast<int64_t>(DataType::kFloat64);
        ++r.attributes;
    }
    for (auto& t : a.tensors)
        if (is_f32_tensor(t.tensor)) {
            t.tensor = widen(t.tensor);
            ++r.attributes;
        }
    if (n.op_type == "Constant" && (a.name == "value_float" || a.name == "value_floats")) {
        const bool scalar = a.name == "value_float";
        std::vector<double> v = scalar ? std::vector<double>{a.f}
                                       : std::vector<double>(a.floats.begin(), a.floats.end());
        std::vector<int64_t> dims =
            scalar ? std::vector<int64_t>{} : std::vector<int64_t>{static_cast<int64_t>(v.size())};
        a = ir::Attribute::make_tensor("value", Tensor::from_values(DataType::kFloat64, dims, v));
        ++r.attributes;
    }
}

// Ops whose output is float32 when an attribute is absent get it explicitly, as float64:
// ConstantOfShape's value (a float32 0), RandomNormal / RandomUniform's dtype (FLOAT).
void promote_defaults(ir::Node& n, PromoteFloat64Report& r) {
    if (n.op_type == "ConstantOfShape" && !n.find_attribute("value")) {
        n.attributes.push_back(ir::Attribute::make_tensor(
            "value", Tensor::from_values<double>(DataType::kFloat64, {1}, {0.0})));
        ++r.attributes;
    }
    if ((n.op_type == "RandomNormal" || n.op_type == "RandomUniform") &&
        !n.find_attribute("dtype")) {
        n.attributes.push_back(
            ir::Attribute::make_int("dtype", static_cast<int64_t>(DataType::kFloat64)));
        ++r.attributes;
    }
}

// BitCast reinterprets float32 bits: in double they are other bits and half as many elements,
// so a model that bitcasts float32 is refused rather than given other values.
void refuse_float32_bitcast(const ir::Graph& g) {
    for (const auto& n : g.nodes()) {
        if (n->op_type != "BitCast") continue;
        const ir::Value* in = n->inputs().empty() ? nullptr : n->inputs()[0];
        const ir::Attribute* to = n->find_attribute("to");
        const bool reads = in && in->has_type() && in->type().elem_type == DataType::kFloat32;
        if (reads || (to && to->i == static_cast<int64_t>(DataType::kFloat32)))
            throw Error(ErrorKind::kUnsupported,
                        "--ref-precision fp64 cannot run " +
                            (n->name.empty() ? std::string("a BitCast node")
                                             : "BitCast node '" + n->name + "'") +
                            " on float32 (its result depends on float32's bits); use "
                            "--ref-precision fp32 for this model");
    }
}

void promote_graph(ir::Graph& g, PromoteFloat64Report& r) {
    refuse_float32_bitcast(g);
    for (const auto& v : g.values()) {
        if (!v->has_type()) continue;
        ir::TypeInfo t = v->type();
        promote_type(t, r);
        v->set_type(std::move(t));
    }
    for (ir::Value* v : g.initializers()) {
        ir::NamedTensor* nt = v->mutable_initializer();
        if (is_f32_tensor(nt->tensor)) {
            nt->tensor = widen(nt->tensor);
            ++r.initializers;
        }
    }
    for (const auto& n : g.nodes()) {
        for (auto& a : n->attributes) promote_attribute(*n, a, r);
        promote_defaults(*n, r);
        for (ir::Graph* sub : n->subgraphs()) promote_graph(*sub, r);
    }
}

}  // namespace

PromoteFloat64Report promote_to_float64(ir::Model& m) {
    PromoteFloat64Report r;
    if (m.graph) promote_graph(*m.graph, r);
    for (auto& f : m.functions) promote_graph(*f.body, r);
    return r;
}

}  // namespace pg::passes
