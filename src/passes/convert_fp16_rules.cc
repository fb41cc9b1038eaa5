#include "passes/convert_fp16_rules.h"

#include "ir/model.h"

#include <set>
#include <string>

namespace pg::passes::fp16 {

namespace {

// Ops whose every input accepts any type (the output type does not follow the input).
const std::set<std::string> kAnyTypeInputOps = {"Cast", "Shape", "Size", "OptionalHasElement"};

// (op, input slot) pairs that accept any float type independently of the node's type.
const std::set<std::pair<std::string, size_t>> kAnySlots = {
    {"CastLike", 0},  // the value being cast
    {"Resize", 1},    // roi: its own type constraint (T2)
    {"Dropout", 1},   // ratio: T1
};

// (op, input slot) pairs the ONNX schema fixes to tensor(float).
const std::set<std::pair<std::string, size_t>> kFixed32Slots = {
    {"Resize", 2},    // scales (opset 11+)
    {"Upsample", 1},  // scales (opset 9)
    {"BitCast", 0},   // reinterpreted bits: the width must not change
};

// (op, output slot) pairs that are float32 whatever the inputs are.
const std::set<std::pair<std::string, size_t>> kFixed32Outputs = {
    {"LayerNormalization", 1},  // Mean: U = stash type
    {"LayerNormalization", 2},  // InvStdDev
};

const std::set<std::string> kFloat32OnlyOps = {
    "RandomNormal",
    "RandomUniform",
    "RandomNormalLike",
    "RandomUniformLike",
    "Multinomial",
    "Bernoulli",
    "NonMaxSuppression",
    "DynamicQuantizeLinear",
    "QuantizeLinear",
    "DequantizeLinear",
    "QLinearConv",
    "QLinearMatMul",
    "TfIdfVectorizer",
    "MelWeightMatrix",
    "BitCast",
    "Celu",  // tensor(float) only
    "BlackmanWindow",
    "HannWindow",
    "HammingWindow",
};

// Ops whose outputs are all int64 / bool, whatever the inputs.
const std::set<std::string> kInt64Ops = {"Shape",  "Size",   "NonZero",
                                         "ArgMax", "ArgMin", "NonMaxSuppression"};
const std::set<std::string> kBoolOps = {
    "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Not",
    "And",   "Or",   "Xor",     "IsNaN",       "IsInf",          "OptionalHasElement"};
// (op, output slot) pairs that are int64.
const std::set<std::pair<std::string, size_t>> kInt64Outputs = {
    {"TopK", 1}, {"MaxPool", 1}, {"Unique", 1}, {"Unique", 2}, {"Unique", 3}};

DataType of(const DtypeMap& m, const ir::Value* v) {
    if (!v) return DataType::kUndefined;
    auto it = m.find(v);
    return it == m.end() ? DataType::kUndefined : it->second;
}

DataType int_attr_dtype(const ir::Node& n, const char* name, DataType fallback) {
    const ir::Attribute* a = n.find_attribute(name);
    return a && a->type == ir::AttrType::kInt ? static_cast<DataType>(a->i) : fallback;
}

DataType constant_dtype(const ir::Node& n) {
    for (const auto& a : n.attributes) {
        if (a.name == "value" && !a.tensors.empty()) return a.tensors[0].tensor.dtype();
        if (a.name == "sparse_value" && !a.sparse_tensors.empty())
            return a.sparse_tensors[0].values.tensor.dtype();
        if (a.name == "value_float" || a.name == "value_floats") return DataType::kFloat32;
        if (a.name == "value_int" || a.name == "value_ints") return DataType::kInt64;
        if (a.name == "value_string" || a.name == "value_strings") return DataType::kString;
    }
    return DataType::kUndefined;
}

// The dtype of a control-flow node's output k, from its body's outputs.
DataType control_flow_output(const ir::Node& n, size_t k, const DtypeMap& m) {
    const std::vector<ir::Graph*> subs = n.subgraphs();
    if (subs.empty()) return DataType::kUndefined;
    const size_t offset = n.op_type == "Loop" ? 1 : 0;  // Loop body output 0 is the condition
    const auto& outs = subs[0]->outputs();
    return k + offset < outs.size() ? of(m, outs[k + offset]) : DataType::kUndefined;
}

// Attribute- and op-determined output types; kUndefined when the default rule applies.
DataType special_output(const ir::Node& n, size_t k, const DtypeMap& m) {
    const std::string& op = n.op_type;
    if (op == "Cast" || op == "BitCast") return int_attr_dtype(n, "to", DataType::kUndefined);
    if (op == "CastLike" || op == "Where") return of(m, n.input(1));
    if (op == "Constant") return constant_dtype(n);
    if (op == "ConstantOfShape") {
        const ir::Attribute* a = n.find_attribute("value");
        return a && !a->tensors.empty() ? a->tensors[0].tensor.dtype() : DataType::kFloat32;
    }
    if (op == "EyeLike" || op == "RandomNormalLike" || op == "RandomUniformLike" ||
        op == "Bernoulli")
        return int_attr_dtype(n, "dtype", of(m, n.input(0)));
    if (op == "RandomNormal" || op == "RandomUniform")
        return int_attr_dtype(n, "dtype", DataType::kFloat32);
    if (op == "BlackmanWindow" || op == "HannWindow" || op == "HammingWindow" ||
        op == "MelWeightMatrix")
        return int_attr_dtype(n, "output_datatype", DataType::kFloat32);
    if (op == "Multinomial") return int_attr_dtype(n, "dtype", DataType::kInt32);
    if (op == "If" || op == "Loop" || op == "Scan") return control_flow_output(n, k, m);
    if (kInt64Ops.count(op) || kInt64Outputs.count({op, k})) return DataType::kInt64;
    if (kBoolOps.count(op)) return DataType::kBool;
    if (kFixed32Outputs.count({op, k}) || op == "TfIdfVectorizer") return DataType::kFloat32;
    if (op == "DynamicQuantizeLinear") return k == 1 ? DataType::kFloat32 : DataType::kUInt8;
    if (op == "DequantizeLinear") return of(m, n.input(1));
    if (op == "QuantizeLinear")
        return n.input(2) ? of(m, n.input(2)) : int_attr_dtype(n, "output_dtype", DataType::kUInt8);
    if (op == "QLinearConv" || op == "QLinearMatMul") return of(m, n.input(7));
    if (op == "MatMulInteger" || op == "ConvInteger") return DataType::kInt32;
    return DataType::kUndefined;
}

DataType infer_output(const ir::Node& n, size_t k, const DtypeMap& m) {
    if (ir::is_default_domain(n.domain)) {
        const DataType t = special_output(n, k, m);
        if (t != DataType::kUndefined) return t;
        if (n.op_type == "Cast" || n.op_type == "BitCast" || n.op_type == "If" ||
            n.op_type == "Loop" || n.op_type == "Scan")
            return DataType::kUndefined;
    }
    return of(m, n.input(0));
}

DataType declared(const ir::Value& v) {
    return v.has_type() && v.type().is_tensor() ? v.type().elem_type : DataType::kUndefined;
}

void record(const ir::Value* v, DataType inferred, DtypeMap& out) {
    if (!v) return;
    const DataType d = declared(*v);
    out[v] = d != DataType::kUndefined ? d : inferred;
}

// Body inputs of Loop (iteration count, condition, carried values) and Scan take their types
// from the node's inputs when the body does not declare them.
DataType body_input(const ir::Node& n, size_t j, const DtypeMap& m) {
    if (n.op_type == "Loop")
        return j == 0 ? DataType::kInt64 : j == 1 ? DataType::kBool : of(m, n.input(j));
    if (n.op_type == "Scan") return of(m, n.input(j));
    return DataType::kUndefined;
}

void infer_graph(const ir::Graph& g, DtypeMap& out, const ir::Node* owner);

void infer_node(const ir::Node& n, DtypeMap& out) {
    for (ir::Graph* sub : n.subgraphs()) infer_graph(*sub, out, &n);
    for (size_t k = 0; k < n.outputs().size(); ++k)
        record(n.output(k), infer_output(n, k, out), out);
}

void infer_graph(const ir::Graph& g, DtypeMap& out, const ir::Node* owner) {
    for (size_t j = 0; j < g.inputs().size(); ++j)
        record(g.inputs()[j], owner ? body_input(*owner, j, out) : DataType::kUndefined, out);
    for (const ir::Value* v : g.initializers()) {
        const auto* nt = v->initializer();
        record(v, nt ? nt->tensor.dtype() : DataType::kUndefined, out);
    }
    for (const auto& n : g.nodes()) infer_node(*n, out);
}

}  // namespace

SlotKind input_slot_kind(const ir::Node& n, size_t i) {
    if (!ir::is_default_domain(n.domain)) return SlotKind::kFollow;
    if (kAnyTypeInputOps.count(n.op_type) || kAnySlots.count({n.op_type, i})) return SlotKind::kAny;
    if (kFixed32Slots.count({n.op_type, i})) return SlotKind::kFixed32;
    return SlotKind::kFollow;
}

bool output_fixed_float32(const ir::Node& n, size_t i) {
    return ir::is_default_domain(n.domain) && kFixed32Outputs.count({n.op_type, i}) > 0;
}

bool must_stay_float32(const ir::Node& n) {
    if (n.domain == "ai.onnx.ml") return true;
    return ir::is_default_domain(n.domain) && kFloat32OnlyOps.count(n.op_type) > 0;
}

void infer_dtypes(const ir::Graph& g, DtypeMap& out) {
    infer_graph(g, out, nullptr);
}

}  // namespace pg::passes::fp16
