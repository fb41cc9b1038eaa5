// The per-node precision policy of the emulator: a default precision for float compute nodes
// (--fp16, --bf16, --tf32, --fp8), per-node overrides (--layer-precisions) and TensorRT's
// precision constraints (--precision-constraints). resolve() gives each node its precision.
// Which ops have a reduced-precision form is the table in policy.cc (reduced_precision_ops());
// everything else (shape, index, integer, data movement, Cast, Q/DQ) always runs as written.
#pragma once

#include <regex>
#include <string>
#include <vector>

#include "emu/precision.h"
#include "ir/graph.h"

namespace pg::emu {

// --precision-constraints. In the emulator `none` and `prefer` behave alike: the requested
// precision is taken (TensorRT may pick any tactic under `none`; the emulator takes the hint),
// and a node whose op has no reduced-precision form falls back to float32. `obey` makes that
// fallback an error (kUnsupported naming the node).
enum class Constraints { kNone, kPrefer, kObey };
Constraints parse_constraints(const std::string& s);

// One --layer-precisions entry: "REGEX:precision" (node name, full match) or
// "op:OpType:precision".
struct LayerPrecision {
    std::string selector;  // as written (without surrounding quotes)
    bool by_op = false;    // "op:OpType" selects by op type
    std::string op_type;   // with by_op
    std::regex pattern;    // node-name regex (full match), without by_op
    Precision precision = Precision::kFP32;
    bool matches(const ir::Node& n) const;
};

// Parses --layer-precisions values: each value holds one or more comma-separated entries
// (commas inside (), [] or {} belong to the regex); the precision follows the last ':'.
// Examples: "Add:float32", ".*Conv.*:fp16,.*Gemm.*:fp32", "op:MatMul:bf16". Throws kUsage.
std::vector<LayerPrecision> parse_layer_precisions(const std::vector<std::string>& values);

// True when `op_type` (default ONNX domain) has a form at `p`: kFP32 for every op, kTF32 and
// kINT8 for MatMul / Gemm / Conv / ConvTranspose only, the other reduced formats for float
// compute ops.
bool op_supports(const std::string& domain, const std::string& op_type, Precision p);

class PrecisionPolicy {
  public:
    Precision default_precision = Precision::kFP32;  // for float compute nodes
    std::vector<LayerPrecision> layers;              // later entries win over earlier ones
    Constraints constraints = Constraints::kNone;

    // The precision node `n` runs at. The last matching --layer-precisions entry wins, else the
    // default applies to float compute nodes; a precision the op has no form for becomes
    // float32, or (obey, explicit entries only) throws kUnsupported naming the node.
    Precision resolve(const ir::Node& n) const;
};

}  // namespace pg::emu
