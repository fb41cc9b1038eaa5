// A chain of element-wise ops run as one kernel: the first op's first input (the chain value)
// goes through Add / Sub / Mul / Div / Sum (two inputs) with one other operand each, and Relu
// and Erf (vec_erf, which the plain float32 Erf runs too), in one pass over the output instead of
// one pass and one tensor per op. The float32 fast path covers operands of the chain value's shape,
// single values, and operands broadcast along a run of axes with whole blocks of at least 8
// trailing elements between changes (per-channel scales and biases [C, 1, 1]); each op is the plain
// kernel's float arithmetic, in the same order, so the result is bit-identical to running the ops
// one after another (tests/unit/ops_eltwise_chain_test.cc; the runtime decides what to fuse:
// runtime/fuse.cc). To add an op, add it to EltwiseLink::Op, to apply_link (eltwise_chain.cc) and
// to the matcher.
#pragma once

#include <vector>

#include "ops/kernel.h"

namespace pg::ops {

struct EltwiseLink {
    enum class Op { kAdd, kSub, kMul, kDiv, kRelu, kErf };  // Relu and Erf: unary
    Op op = Op::kAdd;
    // Binary ops: the chain value is the op's second input (operand op value), else its first.
    bool value_second = false;
};

// Whether `op` (a default-domain op type) with `inputs` inputs can be a link; sets *out.
bool eltwise_link_of(const std::string& op, size_t inputs, EltwiseLink* out);
// Relu and Erf take no operand.
bool eltwise_unary(EltwiseLink::Op op);

// The float32 fast path: out = the chain applied to x with operands[k] the other input of the
// k-th binary link. Returns false (nothing written) when the types or shapes are not covered.
bool eltwise_chain_fast(const std::vector<EltwiseLink>& links, const Tensor& x,
                        const std::vector<const Tensor*>& operands, Tensor* out, ThreadPool* pool);

// The fused kernel: inputs x, then one operand per binary link in order (the first link's
// operand is its second input; when the first input is the broadcast one, the fast path runs
// with the two swapped and the first link's operand first); one output. What the fast path does
// not cover runs `plain`, which must run the unfused kernels on the same inputs.
KernelFn make_eltwise_chain(std::vector<EltwiseLink> links, KernelFn plain);

}  // namespace pg::ops
