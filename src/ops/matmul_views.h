// A MatMul of 4-D operands that reads them through Transposes and may write its result through
// one, run as one kernel: attention's per-head products (Q [N, S, H, D] transposed to
// [N, H, S, D], K to [N, H, D, S], the result transposed back to [N, S, H, D]) become per-head
// GEMMs on strided views of the untransposed tensors (a row stride of H * D, or B stored
// transposed), so no transposed copy is made. Each product is the plain MatMul's GEMM (the same
// kernel choice, the same sums over k), so the values are bit-identical to Transpose -> MatMul
// -> Transpose (tests/unit/session_fuse_test.cc). The runtime decides what to fuse
// (runtime/fuse_matmul_views.cc).
#pragma once

#include <cstdint>
#include <vector>

#include "ops/kernel.h"

namespace pg::ops {

// The Transposes folded into the MatMul: a permutation of 4 axes each, empty for none. perm_a /
// perm_b: the Transpose producing A / B (the kernel's input is that Transpose's input);
// perm_y: the Transpose reading the product (the kernel's output is that Transpose's output).
struct MatMulViews {
    std::vector<int64_t> perm_a, perm_b, perm_y;
};

// The fused kernel: inputs (A or the Transpose input it comes from, B likewise), one output.
// The fast path needs float32 operands whose views are 4-D with equal batch dims and a unit
// stride along one of each matrix's axes (the result's columns unit-strided); anything else
// runs `plain`, which must run the unfused kernels on the same inputs.
KernelFn make_matmul_views(MatMulViews views, KernelFn plain);

}  // namespace pg::ops
