// The runner argument group of `run` (and later `debug`): which backends to run, in command-line
// order, and their options. Building the runners is the only place the CLI touches backends.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cli/args.h"
#include "emu/calibration.h"
#include "emu/precision.h"
#include "ir/model.h"
#include "runners/runner.h"

namespace pg::cli {

// --ref, --onnxrt, --emu, --trt (refused with alternatives), --threads, --ref-precision,
// --onnxrt-lib, --providers, --ort-optimization-level, and the emulator's precision options
// (--fp16 --bf16 --tf32 --fp8 --int8 --layer-precisions --precision-constraints --accumulate
// --rounding --show-precisions).
void add_runner_args(ArgParser& p);
// --fp8 [FORMAT] (e4m3fn when given bare) with the tool's own help.
void add_fp8_flag(ArgParser& p, const std::string& help);
// --calibration-cache, --calibration-method, --calibration-percentile (INT8).
void add_calibration_args(ArgParser& p);

// The runner flags in the order given (dests "ref", "onnxrt", ...).
std::vector<std::string> selected_runners(const ParsedArgs& a);

// Builds the runners in order. `model` must outlive them. Throws kUsage / kUnsupported.
std::vector<std::unique_ptr<runners::Runner>> make_runners(const ParsedArgs& a,
                                                           const ir::Model& model,
                                                           const std::string& model_path);

// The emulator's default precision from --fp16 / --bf16 / --tf32 / --fp8 [FORMAT] / --int8
// (float32 when none; --tf32 yields to the others). Throws kUsage for two of them.
emu::Precision default_precision(const ParsedArgs& a);

// --calibration-method / --calibration-percentile / --threads. Throws kUsage.
emu::CalibrationOptions calibration_options(const ParsedArgs& a);

// INT8 (--emu with INT8 nodes): installs each emulator's activation scales before the timed runs,
// read from --calibration-cache when that file exists and is non-empty, else calibrated over
// `feeds` (--calibration-method, --calibration-percentile) and written to the cache if given.
void prepare_int8(const ParsedArgs& a, const std::vector<std::unique_ptr<runners::Runner>>& runners,
                  const std::vector<runners::NamedTensors>& feeds);

// Warns about precision options given without --emu.
void warn_unused_precision_flags(const ParsedArgs& a);

// Logs, for each emulator runner, the nodes whose rounding overflowed, underflowed to zero or
// produced NaN/Inf during its last inference ("Precision evidence | ..."); outside `layerwise`
// mode, also the first node divergent by evidence alone ("First node divergent by evidence").
void log_precision_evidence(const std::vector<std::unique_ptr<runners::Runner>>& runners,
                            bool layerwise = false);

}  // namespace pg::cli
