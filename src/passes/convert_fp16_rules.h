// The op tables behind convert_fp16 (passes/convert_fp16.h): which input slots follow a node's
// precision, which the ONNX schema fixes to float32, which ops must stay float32, and a small
// static dtype inference for values without a declared type.
// To teach the pass a new op: add a row to the matching table in convert_fp16_rules.cc.
#pragma once

#include <cstddef>
#include <unordered_map>

#include "base/dtype.h"
#include "ir/graph.h"

namespace pg::passes::fp16 {

// How an input slot relates to the node's precision.
enum class SlotKind {
    kFollow,   // same float type as the node computes in (most inputs)
    kFixed32,  // the schema requires float32 (Resize 'scales')
    kAny,      // any type is accepted (Cast input, Shape input, Resize 'roi')
};

// The kind of input slot `i` of `n`.
SlotKind input_slot_kind(const ir::Node& n, size_t i);

// True when output slot `i` of `n` is float32 whatever the input types (LayerNormalization's
// Mean and InvStdDev, DynamicQuantizeLinear's scale).
bool output_fixed_float32(const ir::Node& n, size_t i);

// True for ops that never compute in 16 bits: random generators (so the random stream matches
// the float32 model), NonMaxSuppression, quantization ops, TfIdfVectorizer, ai.onnx.ml ops.
bool must_stay_float32(const ir::Node& n);

// The data type of every tensor value of `g` and its subgraphs, as declared, or else inferred
// from the ops (kUndefined when neither tells). `g` must be topologically sorted.
//   x:f32 -> Shape -> s (no type) -> ConstantOfShape -> c (no type)   gives s: int64, c: float32
using DtypeMap = std::unordered_map<const ir::Value*, DataType>;
void infer_dtypes(const ir::Graph& g, DtypeMap& out);

}  // namespace pg::passes::fp16
