// The model an engine runs for an INT8 or FP8 `debug precision` answer (-o, and the candidate
// of an external check): QuantizeLinear -> DequantizeLinear pairs placed where the emulator
// (emu/emulation.h) quantizes, float32 nodes left as they are.
//   INT8 (TensorRT's explicit-quantization form): inputs 0 and 1 of each quantized Conv /
//   ConvTranspose / MatMul / Gemm; activations per tensor with the calibrated scale, constant
//   weights per output channel (emu's int8_weight_axis; per tensor otherwise) with scales from
//   the weights; zero point int8 0. Per-channel pairs need opset >= 13.
//   FP8 (opset >= 19): scale 1 and a float8 zero point (saturate=1 for e4m3fn, 0 for e5m2, as
//   the emulator saturates / overflows), on every float32 input of each quantized node and on
//   every use of its float32 outputs, since the emulator rounds both. Graph outputs keep their
//   float32 values (SPEC-DEVIATION: a tiny difference from the emulator at those tensors).
// One pair is shared by every consumer of the same (tensor, scale layout).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/dtype.h"
#include "emu/calibration.h"
#include "emu/precision.h"
#include "ir/model.h"

namespace pg::debug {

struct QdqReport {
    size_t nodes = 0;  // nodes quantized
    size_t pairs = 0;  // Q/DQ pairs inserted
};

// Inserts the pairs for `quantized` (main-graph node names) at `p` (kINT8, kFP8E4M3 or
// kFP8E5M2). `dtypes` gives the element type of values without a declared type (from a
// reference run); `scales` the INT8 activation scales. Throws kUnsupported for another
// precision or too old an opset, kInvalidInput for an unknown node or a missing scale.
// Throws kUnsupported unless `model`'s opset can hold the Q/DQ form of `p` (INT8: 13, FP8: 19).
void require_qdq_opset(const ir::Model& model, emu::Precision p);

QdqReport insert_qdq(ir::Model& model, const std::vector<std::string>& quantized, emu::Precision p,
                     const std::map<std::string, DataType>& dtypes, const emu::ScaleTable& scales);

}  // namespace pg::debug
