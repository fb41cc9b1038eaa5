// Static types of values: tensors with (possibly symbolic) shapes, sparse tensors, sequences,
// maps, optionals and opaque types, as ONNX's TypeProto describes them. Plain value types.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/compact_string.h"
#include "base/dtype.h"

namespace pg::ir {

// One dimension: a known size, a symbolic name ("batch"), or unknown.
struct Dim {
    std::optional<int64_t> value;  // set for a known size
    CompactString param;           // set for a symbolic dim
    CompactString denotation;

    static Dim known(int64_t v) { return Dim{v, {}, {}}; }
    static Dim symbolic(std::string p) { return Dim{std::nullopt, std::move(p), {}}; }
    static Dim unknown() { return Dim{}; }
    bool is_known() const { return value.has_value(); }
    bool operator==(const Dim& o) const = default;
};

using Shape = std::vector<Dim>;

// Shape text as Polygraphy prints it: "(1, 'batch', -1)".
std::string shape_to_string(const Shape& shape);

enum class TypeKind { kNone, kTensor, kSparseTensor, kSequence, kMap, kOptional, kOpaque };

struct TypeInfo {
    TypeKind kind = TypeKind::kNone;
    DataType elem_type = DataType::kUndefined;  // tensor / sparse tensor element; map key type
    std::optional<Shape> shape;                 // tensor / sparse tensor; nullopt = rank unknown
    std::vector<TypeInfo> children;             // sequence / optional element; map value (size 1)
    CompactString opaque_domain, opaque_name;
    CompactString denotation;

    static TypeInfo tensor(DataType dt, std::optional<Shape> shape) {
        TypeInfo t;
        t.kind = TypeKind::kTensor;
        t.elem_type = dt;
        t.shape = std::move(shape);
        return t;
    }
    bool is_tensor() const { return kind == TypeKind::kTensor; }
    bool operator==(const TypeInfo& o) const = default;
};

// A shape of known dims from integers.
Shape make_shape(const std::vector<int64_t>& dims);

}  // namespace pg::ir
