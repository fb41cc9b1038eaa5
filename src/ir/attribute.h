// Node attributes and the tensor records that carry names and metadata around a Tensor.
// AttrType numbers are ONNX's AttributeProto.AttributeType; an unknown number is kept as is.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/compact_string.h"
#include "ir/type.h"
#include "tensor/tensor.h"

namespace pg::ir {

class Graph;

using Metadata = std::vector<std::pair<std::string, std::string>>;

// Where a tensor's bytes came from when they were stored outside the model file.
struct ExternalRef {
    CompactString location;
    uint64_t offset = 0;
    uint64_t length = 0;
    bool is_set() const { return !location.empty(); }
};

// A Tensor with what ONNX stores around it (TensorProto minus the data encoding).
struct NamedTensor {
    std::string name;
    Tensor tensor;
    CompactString doc_string;
    Metadata metadata;
    ExternalRef loaded_from;       // informative: where the data was read from
    CompactString unknown_fields;  // serialized protobuf fields this build does not know
};

struct SparseTensor {
    NamedTensor values;
    NamedTensor indices;
    std::vector<int64_t> dims;
};

enum class AttrType : int32_t {
    kUndefined = 0,
    kFloat = 1,
    kInt = 2,
    kString = 3,
    kTensor = 4,
    kGraph = 5,
    kFloats = 6,
    kInts = 7,
    kStrings = 8,
    kTensors = 9,
    kGraphs = 10,
    kSparseTensor = 11,
    kSparseTensors = 12,
    kTypeProto = 13,
    kTypeProtos = 14,
};

// Lowercase name of an attribute type ("ints", "graph").
std::string attr_type_name(AttrType t);

struct Attribute {
    std::string name;
    AttrType type = AttrType::kUndefined;
    CompactString ref_attr_name;  // inside functions: refers to the caller's attribute
    CompactString doc_string;
    float f = 0.0f;
    int64_t i = 0;
    std::string s;
    std::vector<float> floats;
    std::vector<int64_t> ints;
    std::vector<std::string> strings;
    std::vector<NamedTensor> tensors;           // one element for kTensor
    std::vector<std::unique_ptr<Graph>> graphs;  // one element for kGraph
    std::vector<SparseTensor> sparse_tensors;   // one element for kSparseTensor
    std::vector<TypeInfo> type_protos;          // one element for kTypeProto
    CompactString unknown_fields;

    Attribute();
    Attribute(Attribute&&) noexcept;
    Attribute& operator=(Attribute&&) noexcept;
    ~Attribute();

    static Attribute make_int(std::string name, int64_t v);
    static Attribute make_float(std::string name, float v);
    static Attribute make_string(std::string name, std::string v);
    static Attribute make_ints(std::string name, std::vector<int64_t> v);
    static Attribute make_floats(std::string name, std::vector<float> v);
    static Attribute make_tensor(std::string name, Tensor t);
};

// Builds an attribute list from move-only attributes: attrs(Attribute::make_int("axis", 1), ...).
template <typename... A>
std::vector<Attribute> attrs(A&&... a) {
    std::vector<Attribute> v;
    v.reserve(sizeof...(A));
    (v.push_back(std::forward<A>(a)), ...);
    return v;
}

}  // namespace pg::ir
