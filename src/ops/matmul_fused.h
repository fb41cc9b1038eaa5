// A MatMul by a weight matrix whose only reader is an Add of a bias row, run as one kernel: the
// float32 GEMM with the bias added to each output tile while it is in cache
// (GemmEpilogue::col_bias), bit-identical to MatMul then Add (tests/unit/session_fuse_test.cc).
// The runtime decides what to fuse (runtime/fuse_matmul.cc).
#pragma once

#include <cstdint>

#include "ops/gemm_kernels.h"
#include "ops/kernel.h"

namespace pg::ops {

// float32 MatMul / Gemm products with fewer multiply-adds than this run the plain loops (as fast
// as packing), larger ones gemm_fast: the fused kernels make the same choice.
inline constexpr int64_t kGemmFastThreshold = 4096;

// The plain MatMul's choices for float32, which the fused kernels share so that they give the
// same bits. One product: gemm_fast from kGemmFastThreshold multiply-adds, else gemm_plain.
void matmul_gemm_f32(const GemmArgs<float>& g, ThreadPool* pool);
// A batch of `items` products of mnk multiply-adds each runs whole products per pool thread
// (each product single-threaded) when they are small or enough to go round; else one product
// after another, each on the pool.
bool matmul_products_per_thread(int64_t items, int64_t mnk, const ThreadPool* pool);

// The fused kernel: inputs A, B, bias; one output, the Add's. The fast path needs float32, A of
// rank >= 2 (rows of K), B of [K, N] and a bias of N values (any shape whose dims but the last
// are 1, the last N); anything else runs `plain`, which must run the two unfused kernels on the
// same inputs.
KernelFn make_matmul_bias(KernelFn plain);

}  // namespace pg::ops
