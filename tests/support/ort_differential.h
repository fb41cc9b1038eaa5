// The reference interpreter against ONNX Runtime on one model and one set of feeds: both run it,
// and their answers are classified. Both run in the sweep's child (support/sweep_harness.h); a
// case that crashes ONNX Runtime is marked by its phase, "ort", which the suite counts as
// "ort-crashed" and goes on after (ONNX Runtime has 20 s per case, then SIGALRM ends it).
#pragma once

#include <cstdio>
#include <map>
#include <string>

#include "ir/model.h"
#include "runners/runner.h"
#include "support/sweep_harness.h"

namespace pg::test {

// In the sweep's child, before its cases: limits the address space (not under AddressSanitizer)
// and runs one ONNX Runtime session on a one-node model, so that what ONNX Runtime builds once per
// process (its kernel registry) is not counted in the first case's time. ONNX Runtime leaves a
// thread behind, so the process that forks the children must not call it.
void prepare_ort_child();

// "" when `ort` has the outputs of `ref` (same names in the same order, types, shapes; strings
// equal; numbers within rtol 1e-3 and atol 1e-5 x the reference's largest finite magnitude, NaN
// matching NaN); else the first difference,
// ONNX Runtime's value first ("output 'y': element 3: 0.5, reference 0.25").
std::string results_differ(const runners::NamedTensors& ref, const runners::NamedTensors& ort);

// Both runners (one thread each; ONNX Runtime with its graph optimizations off, so its kernels
// answer) on `model` and `feeds`. The outcome's kind:
//   agree          both ran and their outputs agree
//   differ         both ran and the outputs differ (a bug; `what` names the first difference)
//   both-refused   each refused the model
//   ref-refused    ONNX Runtime ran what the reference refused (`what`: the reference's error)
//   ort-refused    the reference ran what ONNX Runtime refused (`what`: its error)
//   attribute      the reference ran, ignoring an attribute ONNX Runtime accepted, or reading
//                  one ONNX Runtime refused as unrecognized (a bug)
// and "bug" when the reference failed with kInternal or a foreign exception. `out` is the sweep's
// pipe: the case marks its ONNX Runtime phase there (sweep_phase "ort").
SweepOutcome differential_case(const ir::Model& model, const std::map<std::string, Tensor>& feeds,
                               FILE* out);

}  // namespace pg::test
