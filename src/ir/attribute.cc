#include "ir/attribute.h"

#include "ir/graph.h"

namespace pg::ir {

std::string attr_type_name(AttrType t) {
    switch (t) {
        case AttrType::kUndefined: return "undefined";
        case AttrType::kFloat: return "float";
        case AttrType::kInt: return "int";
        case AttrType::kString: return "string";
        case AttrType::kTensor: return "tensor";
        case AttrType::kGraph: return "graph";
        case AttrType::kFloats: return "floats";
        case AttrType::kInts: return "ints";
        case AttrType::kStrings: return "strings";
        case AttrType::kTensors: return "tensors";
        case AttrType::kGraphs: return "graphs";
        case AttrType::kSparseTensor: return "sparse_tensor";
        case AttrType::kSparseTensors: return "sparse_tensors";
        case AttrType::kTypeProto: return "type_proto";
        case AttrType::kTypeProtos: return "type_protos";
    }
    return "attr_type(" + std::to_string(static_cast<int32_t>(t)) + ")";
}

Attribute::Attribute() = default;
Attribute::Attribute(Attribute&&) noexcept = default;
Attribute& Attribute::operator=(Attribute&&) noexcept = default;
Attribute::~Attribute() = default;

Attribute Attribute::make_int(std::string name, int64_t v) {
    Attribute a;
    a.name = std::move(name);
    a.type = AttrType::kInt;
    a.i = v;
    return a;
}

Attribute Attribute::make_float(std::string name, float v) {
    Attribute a;
    a.name = std::move(name);
    a.type = AttrType::kFloat;
    a.f = v;
    return a;
}

Attribute Attribute::make_string(std::string name, std::string v) {
    Attribute a;
    a.name = std::move(name);
    a.type = AttrType::kString;
    a.s = std::move(v);
    return a;
}

Attribute Attribute::make_ints(std::string name, std::vector<int64_t> v) {
    Attribute a;
    a.name = std::move(name);
    a.type = AttrType::kInts;
    a.ints = std::move(v);
    return a;
}

Attribute Attribute::make_floats(std::string name, std::vector<float> v) {
    Attribute a;
    a.name = std::move(name);
    a.type = AttrType::kFloats;
    a.floats = std::move(v);
    return a;
}

Attribute Attribute::make_tensor(std::string name, Tensor t) {
    Attribute a;
    a.name = std::move(name);
    a.type = AttrType::kTensor;
    a.tensors.push_back(NamedTensor{{}, std::move(t), {}, {}, {}, {}});
    return a;
}

}  // namespace pg::ir
