// The rounding wrapper around a node's reference kernel, and the per-node evidence it records.
// A node at precision P: float32 inputs (activations and weights) are rounded to P's storage
// format (copies), the real kernel computes in float32 with float32 accumulation, and float32
// outputs are rounded to P. TF32 rounds only the operands (outputs stay float32). With
// accumulate_fp16, MatMul / Gemm at a 16/8-bit precision sum K in blocks of kAccumulateBlock:
// each block's float32 partial product is rounded to float16 and added to a float16 running
// sum (for Gemm, beta*C joins the last block's partial). Other ops ignore accumulate_fp16.
// INT8 is fake quantization instead (calibration.h): inputs 0 and 1 are quantized and
// dequantized (activations per tensor with the calibrated scale, weights per output channel),
// the kernel computes in float32 and the output stays float32; the evidence counts saturated
// values (RoundingStats::saturated) of the inputs.
#pragma once

#include <memory>

#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "emu/calibration.h"
#include "emu/precision.h"
#include "ops/kernel.h"

namespace pg::emu {

inline constexpr int64_t kAccumulateBlock = 32;

struct EmulationOptions {
    RoundingMode rounding = RoundingMode::kNearestEven;
    bool accumulate_fp16 = false;  // --accumulate fp16 (MatMul / Gemm)
    // Skip rounding the outputs of ops that only move or select their (already rounded) inputs'
    // elements (Relu, MaxPool, Transpose, Concat, Slice, Gather, the Reshape family, ...): a
    // no-op there; the evidence is the same (tested against false on the zoo models).
    bool skip_exact_rounding = true;
    // INT8 activation scales by tensor name, read when an INT8 node runs (filled by
    // calibration or a cache before the first run; a missing scale is an error).
    std::shared_ptr<ScaleTable> int8_scales;
};

// What happened at one node during the last run.
struct NodeEvidence {
    std::string op;
    Precision precision = Precision::kFP32;
    RoundingStats inputs;             // rounding of the float inputs (activations and weights)
    RoundingStats outputs;            // rounding of the float outputs
    uint64_t nonfinite_produced = 0;  // NaN/Inf outputs of a node whose inputs were all finite
    // --accumulate fp16 (MatMul / Gemm): the largest |fp16-accumulated - float32-accumulated|
    // output difference on the same rounded inputs, and the largest difference that rounding the
    // float32-accumulated outputs to storage alone makes (0 without --accumulate fp16).
    double accumulation_error = 0;
    double accumulation_rounding = 0;
    // True when anything worth reporting happened (overflow, underflow to zero, NaN/Inf, INT8
    // saturation).
    bool notable() const;
};

// Evidence per node name, in execution order.
class EvidenceTable {
  public:
    void clear();
    void record(const std::string& node, NodeEvidence e);
    // nullptr when the node was not run at a reduced precision.
    const NodeEvidence* find(const std::string& node) const;
    const std::vector<std::pair<std::string, NodeEvidence>>& entries() const { return entries_; }

  private:
    std::vector<std::pair<std::string, NodeEvidence>> entries_;
    std::map<std::string, size_t> index_;
};

// The float32 outputs of the current run that their producer rounded to a precision (so they
// are exactly representable in it), with the stats checking them again would give. A consumer at
// the same precision and rounding mode skips its representability check for them. Entries are
// keyed by graph value and only match within the run that wrote them (next_run()) and the very
// buffer that was rounded (data pointer and size).
class RoundedValues {
  public:
    void next_run();
    void set(const ir::Value* v, Precision p, RoundingMode mode, const Tensor& t,
             const RoundingStats& stats);
    // True (and `stats` set) when `t` is the buffer v's producer rounded to (p, mode) this run.
    bool find(const ir::Value* v, Precision p, RoundingMode mode, const Tensor& t,
              RoundingStats& stats) const;
    // find() at whatever precision and mode the producer used (returned in `p` and `mode`).
    bool find_any(const ir::Value* v, const Tensor& t, Precision& p, RoundingMode& mode,
                  RoundingStats& stats) const;

  private:
    struct Entry {
        uint64_t run = 0;
        Precision p = Precision::kFP32;
        RoundingMode mode = RoundingMode::kNearestEven;
        const uint8_t* data = nullptr;
        uint64_t nbytes = 0;
        RoundingStats stats;
    };
    mutable std::mutex mu_;
    uint64_t run_ = 1;
    std::unordered_map<const ir::Value*, Entry> entries_;
};

// `kernel` wrapped to run node `n` at precision `p`, recording into `evidence` (may be null).
// Returns `kernel` itself for kFP32, except that with `rounded` and skip_exact_rounding a
// float32 data movement node (Transpose, Reshape family, Concat, Identity) whose float inputs
// were all rounded to one precision passes that knowledge on to its output. `n`, `evidence` and
// `rounded` must outlive the returned kernel. With `rounded`, inputs already rounded to `p` by
// their producer are not checked again and this node's rounded outputs are recorded there.
ops::KernelFn emulate_kernel(const ir::Node& n, ops::KernelFn kernel, Precision p,
                             const EmulationOptions& o, EvidenceTable* evidence,
                             RoundedValues* rounded = nullptr);

// One line per notable node: "node (Op) @float16: overflow 3 (out), underflow 0, ...".
std::vector<std::string> evidence_lines(const EvidenceTable& t);
// One line per INT8 node (notable or not): "node (Op) @int8: saturated 3 of 4096 input
// values (0.0732%), max |x| 12 in, max quantization error 0.05".
std::vector<std::string> int8_evidence_lines(const EvidenceTable& t);
// A short cell for tables: "ovf 3 unf 0 nan/inf 0 max|x| 6.5e+04".
std::string evidence_cell(const NodeEvidence& e);

}  // namespace pg::emu
