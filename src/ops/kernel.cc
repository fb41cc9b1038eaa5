#include "ops/kernel.h"

namespace pg::ops {

const Tensor& KernelContext::input(size_t i) const {
    if (i >= inputs_.size() || !inputs_[i] || inputs_[i]->is_none())
        fail("required input " + std::to_string(i) + " is missing");
    if (!inputs_[i]->is_tensor())
        fail("input " + std::to_string(i) + " must be a tensor, got a sequence");
    return inputs_[i]->tensor();
}

void KernelContext::set_output(size_t i, RtValue v) {
    if (i >= outputs_.size()) return;  // outputs the node does not declare are dropped
    outputs_[i] = std::move(v);
}

SubgraphRunner& KernelContext::subgraphs() const {
    if (!runner_) throw Error(ErrorKind::kInternal, "no subgraph runner for a control-flow node");
    return *runner_;
}

void fail(const std::string& what) {
    throw Error(ErrorKind::kInvalidInput, what);
}
void unsupported(const std::string& what) {
    throw Error(ErrorKind::kUnsupported, what);
}

}  // namespace pg::ops
