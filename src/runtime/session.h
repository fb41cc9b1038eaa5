// Runs a model with the reference kernels. Construction plans every graph (topological order,
// kernels with parsed attributes, when each value can be freed) and reports every op it cannot
// run at once. run() executes the plan; a NodeHook sees each top-level node's inputs and outputs
// as they are produced (layer-wise comparison and precision emulation build on it); runs without
// a hook may execute fused steps (SessionOptions::fuse).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/model.h"
#include "ops/kernel.h"
#include "ops/rt_value.h"

namespace pg {
class ThreadPool;
}

namespace pg::runtime {

struct SessionOptions {
    int threads = 0;  // 0 = every core
    // A pool the session's runs use instead of one of its own (`threads` is then ignored):
    // sessions run one after another share it, so one's idle workers (which spin for a while
    // after each job) do not compete with the other's. Runs of the sessions sharing a pool must
    // not overlap.
    std::shared_ptr<ThreadPool> pool;
    bool poison_outputs = false;  // tests: fill graph outputs left unwritten with NaN checks
    // Runs without a NodeHook execute Conv -> BatchNormalization -> residual Add -> Relu / Clip
    // chains, BatchNormalization -> Relu pairs and element-wise chains as one fused kernel each
    // (bit-identical to the plain kernels), and regions of Convs in the blocked channel layout
    // (the plain values within float32 rounding; set_nchwc_layout); runtime/fuse.h. Off with a
    // kernel_wrapper, and runs with a hook always take the plain steps.
    bool fuse = true;
    // Called once per main-graph node at plan time with the node's kernel; the returned kernel
    // runs instead (precision emulation rounds around the real kernel). Subgraph and function
    // body nodes are not wrapped. Empty = kernels run as they are.
    std::function<ops::KernelFn(const ir::Node&, ops::KernelFn)> kernel_wrapper;
};

// Observes node execution in the main graph.
class NodeHook {
  public:
    virtual ~NodeHook() = default;
    virtual void on_node(const ir::Node& node, const std::vector<const ops::RtValue*>& inputs,
                         const std::vector<ops::RtValue>& outputs) = 0;
};

// An attribute of a node that the node's kernel never looked at: ONNX does not define it for the
// op at that opset (ReduceMean-18's `axes`, which became an input), so the reference ignores it,
// where ONNX Runtime refuses the model.
struct IgnoredAttribute {
    const ir::Node* node;
    int64_t opset;
    std::string name;
};

// Logs a warning for each ignored attribute, once per process for each op type, opset and
// attribute name (a debug tool plans many sessions of one model).
void warn_ignored_attributes(const std::vector<IgnoredAttribute>& ignored);

using Feeds = std::map<std::string, ops::RtValue>;
using Results = std::vector<std::pair<std::string, ops::RtValue>>;

class Session {
  public:
    // Plans `model`, which must outlive the session. Throws kUnsupported listing every op that
    // has no kernel, kInvalidInput for structural problems.
    explicit Session(const ir::Model& model, SessionOptions options = {});
    ~Session();
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    // Runs the main graph. Every graph input without an initializer must be fed. After the run,
    // freed heap memory stays mapped for the next one (retain_heap_between_runs, process-wide).
    Results run(const Feeds& feeds, NodeHook* hook = nullptr);
    // One main-graph step of a timed run: its node (for a fused step, the chain's first node)
    // and its wall time.
    struct StepTime {
        const ir::Node* node;
        double ms;
        bool reorder = false;  // a blocked-layout reorder next to `node` (runtime/fuse_nchwc.cc)
    };
    // run() without a hook, so with the fused steps, appending each executed main-graph step's
    // time to `times` (profiling what a plain run spends per step). Not to be called while
    // another run of this session is in progress.
    Results run_timed(const Feeds& feeds, std::vector<StepTime>& times);
    const ir::Model& model() const { return model_; }
    // The attributes planning found no kernel looking at, in every graph the session planned
    // (also logged once as warnings).
    const std::vector<IgnoredAttribute>& ignored_attributes() const;
    // Threads of the pool the runs use (the caller's included).
    int threads() const;
    // Main-graph nodes that runs without a hook execute fused into an earlier step, plus the
    // Concats their Convs write in place (0: none).
    int fused_nodes() const;
    // Steps of the main graph's fused plan that run in the blocked layout (runtime/fuse_nchwc.cc).
    int blocked_steps() const;

    struct Impl;  // the plans and the executor (session.cc)

  private:
    const ir::Model& model_;
    std::unique_ptr<Impl> impl_;
};

// Whether sessions planned from now on fold ShuffleNet's channel shuffle (Reshape -> Transpose
// -> Reshape) into the Conv step before it (on by default; benches and tests compare the two).
// Returns the previous setting (runtime/fuse.cc).
bool set_fuse_channel_shuffle(bool on);
// Whether sessions planned from now on let Convs write a Concat's inputs into its output
// (runtime/fuse_concat.cc; on by default). Returns the previous setting.
bool set_fuse_concat_in_place(bool on);
// Whether sessions planned from now on keep chains of Convs and pools in the blocked channel
// layout (runtime/fuse_nchwc.cc; on by default). Returns the previous setting.
bool set_nchwc_layout(bool on);
// Tests and benches: a Conv whose output channels do not fill whole blocks (a classifier's 1000)
// joins a blocked region, reading blocked and writing plain (on, the default), or runs plain
// beside it (off); values within float32 rounding either way. Returns the previous setting.
bool set_nchwc_plain_outputs(bool on);
// Tests and benches: a blocked Conv whose output a pool reads (directly or through a Concat)
// stores it through the caches (on, the default), or as every other one (off: the Winograd and
// depthwise Convs stream around them); the same values. Returns the previous setting.
bool set_nchwc_cached_for_pools(bool on);
// Tests and benches: a blocked Conv writing its output plain (a classifier's 1000 channels) whose
// only reader is a GlobalAveragePool runs the pool in its step, keeping only the averages (on,
// the default), or writes the whole map for the pool's own step (off); the same values. Returns
// the previous setting.
bool set_nchwc_fold_global_averages(bool on);
// Whether sessions planned from now on fold 4-D Transposes around MatMuls into them
// (runtime/fuse_matmul_views.cc; on by default). Returns the previous setting.
bool set_fuse_matmul_transposes(bool on);
// Whether sessions planned from now on run a Mul or Div by a constant and the Softmax reading it
// as one step (runtime/fuse_softmax.cc; on by default). Returns the previous setting.
bool set_fuse_scaled_softmax(bool on);

}  // namespace pg::runtime
