// Layer-wise comparison of two runners without holding all intermediate tensors: each wanted
// tensor is handed to a PairSink as soon as both runners have produced it, then dropped.
// Streaming runners (the reference) hand tensors over as they compute them; runners that can
// only mark outputs (ONNX Runtime) are re-run once per group of tensors that fits the memory
// budget. Pairs arrive in topological order.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/model.h"
#include "runners/runner.h"

namespace pg::layerwise {

// Receives each (runner A tensor, runner B tensor) pair.
class PairSink {
  public:
    virtual ~PairSink() = default;
    virtual void on_pair(const std::string& producer, const std::string& name, const Tensor& a,
                         const Tensor& b) = 0;
};

struct Options {
    std::vector<std::string> tensors;            // wanted tensors, in topological order
    uint64_t memory_budget = uint64_t{1} << 30;  // bytes of intermediate tensors held at once
};

struct Stats {
    size_t pairs = 0;
    size_t groups = 0;                 // runs of a marking runner
    uint64_t peak_buffered = 0;        // bytes held waiting for the other side
    std::vector<std::string> missing;  // wanted tensors one side never produced
};

// Tensors selected by `--onnx-outputs`: "mark all" (every output of a top-level non-Constant
// node, in topological order) or names / regular expressions. Unknown names: kUsage.
std::vector<std::string> select_tensors(const ir::Model& m, const std::vector<std::string>& spec);

// Runs both runners on `feeds` and hands every wanted tensor pair to `sink`.
// Throws kUnsupported when neither streaming nor marking is possible for a runner.
Stats compare_layerwise(runners::Runner& a, runners::Runner& b,
                        const std::map<std::string, Tensor>& feeds, const Options& options,
                        PairSink& sink);

// Parses "256M", "1G", "4096" into bytes (kUsage on error).
uint64_t parse_budget(const std::string& text);
// A quarter of physical memory.
uint64_t default_budget();

}  // namespace pg::layerwise
