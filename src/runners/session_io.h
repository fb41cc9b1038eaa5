// Shared plumbing of the in-process runners (reference, emulator): running a runtime::Session on
// tensor feeds with timing, turning its results into named tensors, and forwarding every
// produced tensor to a TensorSink for streaming.
#pragma once

#include <map>
#include <string>

#include "runners/runner.h"
#include "runtime/session.h"

namespace pg::runners {

// Forwards every tensor output of each top-level node to a TensorSink.
class SinkHook : public runtime::NodeHook {
  public:
    explicit SinkHook(TensorSink& sink) : sink_(sink) {}
    void on_node(const ir::Node& node, const std::vector<const ops::RtValue*>& inputs,
                 const std::vector<ops::RtValue>& outputs) override;

  private:
    TensorSink& sink_;
};

// Runs `session` on `feeds` (optionally with a hook), stores the wall time in *seconds and
// returns the outputs; kUnsupported when an output is a sequence or optional.
NamedTensors run_session(runtime::Session& session, const runtime::Feeds& feeds,
                         runtime::NodeHook* hook, double* seconds);

}  // namespace pg::runners
