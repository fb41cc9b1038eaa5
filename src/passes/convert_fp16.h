// Conversion of a float32 model to float16 or bfloat16 (`polygraph convert --fp-to-fp16`,
// polygraphy-spec.md §8.4): every float32 tensor that a converted node computes with becomes the
// 16-bit format; blocked nodes keep float32, joined to the rest by Cast nodes. The result is a
// valid, topologically sorted model.
//
// How it decides (convert_fp16_rules.h holds the op tables; extend them there):
//   - A node is *blocked* (stays float32) when its op is in the op block list, its name in the
//     node block list, its op must stay float32 (RandomX, NonMaxSuppression, Q/DQ, ai.onnx.ml,
//     model-local functions), or it lives in the subgraph of a blocked node.
//   - An input slot either follows the node's precision, is fixed to float32 by the ONNX schema
//     (Resize 'scales', Upsample 'scales'), or accepts any type (Cast, Shape, Resize 'roi').
//   - Initializers, Constant nodes and Cast(to=FLOAT) nodes take the type their consumers need:
//     float32 when every consumer wants float32, the 16-bit format otherwise.
//   - Where a value's type differs from what a consumer wants, one shared Cast per (value, type)
//     is inserted; value_info types are updated and inserted casts are typed.
// Only values whose dtype is known to be float32 (declared, or inferred from the ops) change.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "base/dtype.h"

namespace pg::ir {
struct Model;
}

namespace pg::passes {

struct ConvertFp16Options {
    DataType target = DataType::kFloat16;  // kFloat16 or kBFloat16
    // Graph inputs and outputs stay float32, with a Cast after each input and before each output
    // (output names are kept). Polygraphy's converter always does this.
    bool keep_io_types = true;
    // Op types kept in float32; nullopt = default_fp16_op_block_list().
    std::optional<std::vector<std::string>> op_block_list;
    // Node names kept in float32.
    std::vector<std::string> node_block_list;
};

struct ConvertFp16Report {
    size_t values = 0;          // declared value types changed
    size_t initializers = 0;    // initializers converted
    size_t attributes = 0;      // attributes changed (Constant tensors, Cast 'to', ...)
    size_t casts_inserted = 0;  // Cast nodes added
    size_t nodes_blocked = 0;   // nodes kept in float32
    size_t clamped = 0;         // finite elements beyond the format's range, set to +-max
    size_t flushed = 0;         // nonzero elements that became zero
    // Names from node_block_list that match no node.
    std::vector<std::string> unknown_node_names;
    // Values of unknown dtype read by a float32-only input (they may need a Cast we cannot add).
    std::vector<std::string> untyped_fixed_inputs;
};

// Polygraphy's (onnxconverter-common's) default op block list.
const std::vector<std::string>& default_fp16_op_block_list();

// Converts `m` in place. Throws kInvalidInput on a cycle, kUsage on a bad target type.
// SPEC-DEVIATION: Polygraphy clamps initializers to [1e-7, 1e4] in magnitude; we clamp only to
// the format's finite range (+-65504 for float16, +-3.39e38 for bfloat16), so every value the
// format represents is kept (tests/unit/passes_convert_fp16_test.cc, ClampsToFormatRange).
//   before: x:f32 -> Conv(w:f32) -> Resize(roi, scales:f32) -> y:f32   (Resize not blocked)
//   after:  x:f32 -> Cast(to=FLOAT16) -> Conv(w:f16) -> Resize(roi, scales:f32)
//                 -> Cast(to=FLOAT) -> y:f32
ConvertFp16Report convert_float_to_fp16(ir::Model& m, const ConvertFp16Options& options);

}  // namespace pg::passes
