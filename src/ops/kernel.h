// The interface between the runtime and the op table. A kernel is a closure built once per node
// (attributes parsed) and called with a KernelContext that holds the node's input values and
// receives its outputs. Control-flow kernels run subgraphs through the SubgraphRunner the
// runtime provides, so this layer never depends on the runtime.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/error.h"
#include "ops/rt_value.h"

namespace pg {
class ThreadPool;
namespace ir {
class Graph;
class Node;
}  // namespace ir
}  // namespace pg

namespace pg::ops {

struct ConcatSlice;  // ops/concat_slice.h

// Runs a subgraph of the current node. Outer-scope values the subgraph reads come from the
// frame of the calling node.
class SubgraphRunner {
  public:
    virtual ~SubgraphRunner() = default;
    // `inputs` bind the subgraph's formal inputs in order; returns its outputs in order.
    virtual std::vector<RtValue> run(const ir::Graph& g, std::vector<RtValue> inputs) = 0;
};

class KernelContext {
  public:
    KernelContext(const ir::Node& node, std::vector<const RtValue*> inputs, size_t num_outputs,
                  ThreadPool* pool, SubgraphRunner* runner)
        : node_(node),
          inputs_(std::move(inputs)),
          outputs_(num_outputs),
          pool_(pool),
          runner_(runner) {}

    const ir::Node& node() const { return node_; }
    size_t num_inputs() const { return inputs_.size(); }
    // True when input i is given (not omitted) and not an empty optional.
    bool has_input(size_t i) const {
        return i < inputs_.size() && inputs_[i] && !inputs_[i]->is_none();
    }
    // Input i as a tensor; kInvalidInput if missing or not a tensor.
    const Tensor& input(size_t i) const;
    // Input i as it is (may be a sequence or none); nullptr when omitted.
    const RtValue* value(size_t i) const { return i < inputs_.size() ? inputs_[i] : nullptr; }

    size_t num_outputs() const { return outputs_.size(); }
    void set_output(size_t i, Tensor t) { set_output(i, RtValue::of(std::move(t))); }
    void set_output(size_t i, RtValue v);
    std::vector<RtValue>& outputs() { return outputs_; }

    ThreadPool* pool() const { return pool_; }
    SubgraphRunner& subgraphs() const;
    // Where output 0 may be written in place (a part of a Concat's output, ops/concat_slice.h);
    // nullptr: nowhere. Kernels that support it allocate output 0 through output_space.
    const ConcatSlice* concat_slice() const { return concat_slice_; }
    void set_concat_slice(const ConcatSlice* s) { concat_slice_ = s; }

  private:
    const ir::Node& node_;
    std::vector<const RtValue*> inputs_;
    std::vector<RtValue> outputs_;
    ThreadPool* pool_;
    SubgraphRunner* runner_;
    const ConcatSlice* concat_slice_ = nullptr;
};

using KernelFn = std::function<void(KernelContext&)>;

// Throws kInvalidInput with `what`, naming nothing else (callers add node context).
[[noreturn]] void fail(const std::string& what);
// Throws kUnsupported.
[[noreturn]] void unsupported(const std::string& what);

}  // namespace pg::ops
