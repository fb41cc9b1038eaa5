// Polygraphy's TensorRT-only flags, which the tutorials our users learned from pass along
// (`--tactic-sources CUBLAS`, `--trt-opt-shapes ...`, `--save-engine`, `--plugins`): accepted so
// that those commands run with `--emu` or `--onnxrt`, each with a note saying it has no effect
// without TensorRT; the TensorRT network and config scripts are refused with what expresses the
// same here (docs/seed-commands.md in ../shared).
#pragma once

#include "cli/args.h"

namespace pg::cli {

// The flags, in a "TensorRT (accepted; no effect without TensorRT)" help group.
void add_trt_compat_args(ArgParser& p);

// One warning per TensorRT-only flag given; kUsage for a shape that is not NAME:[dims] and
// kUnsupported for the network and config scripts. With --trt selected nothing is said (the
// runner's own error names the alternatives).
void check_trt_compat_args(const ParsedArgs& a);

}  // namespace pg::cli
