// Internal to rnn_kernels.cc: matvecs_add_f32 with AVX-512F (eight rows at a time, one 16-lane
// accumulator per row, so eight independent multiply-add chains instead of the AVX2 version's
// four, and half the loads per value).
#pragma once

#include <cstdint>

namespace pg::ops {

// Requires AVX-512F (gemm_isa_available(GemmIsa::kAvx512)); kInternal when not built for it.
// out[j * ldo + r] += sum_k m[r * cols + k] * vs[j * ldv + k] for r < rows, j < nv. A row's lanes
// are reduced in one fixed order whether or not it is part of a block of eight, so a row's value
// does not depend on the range it is computed in.
void matvecs_avx512(const float* m, int64_t rows, int64_t cols, const float* vs, int64_t nv,
                    int64_t ldv, float* out, int64_t ldo);

}  // namespace pg::ops
