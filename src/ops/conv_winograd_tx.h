// The three transforms of Winograd F(2x2, 3x3) (conv_winograd_tx.cc), each single-threaded
// over a range of channels so that conv_winograd.cc can split them over the pool. Layouts as in
// conv_winograd.cc. Each runs a baseline or an AVX-512 build of the same loops (the same
// operations in the same order, so the results are bit-identical across ISAs).
#pragma once
#include <cstdint>

#include "ops/gemm_kernels.h"

namespace pg::ops {

// The image, output and tile sizes of one Winograd convolution, with its top and left pads.
struct WinoGeometry {
    int64_t ih = 0, iw = 0, oh = 0, ow = 0, th = 0, tw = 0, pt = 0, pl = 0;
};

// Filters of output channels [k0 + kb, k0 + ke): u[xi][k][c] = (G w[k0 + k][c] G^T)[xi], xi
// planes kn * cg floats apart, G = [1 0 0; .5 .5 .5; .5 -.5 .5; 0 0 1]; w is mg x cg x 3 x 3.
void wino_filters(const float* w, int64_t cg, int64_t k0, int64_t kn, int64_t kb, int64_t ke,
                  float* u);
// Input channels [cb, ce) under tile rows [ty0, ty1): v[xi][c][t] = (B^T d B)[xi] for the 4x4
// input d of tile t (zero outside the image), B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1].
void wino_input(const WinoGeometry& s, const float* xg, int64_t cg, int64_t ty0, int64_t ty1,
                int64_t cb, int64_t ce, float* v);
// Output channels [k0 + kb, k0 + ke) of rows [2 ty0, 2 ty1): the 2x2 block A^T p A of each tile,
// A^T = [1 1 1 0; 0 1 -1 -1], written to y (channel planes ldc apart), then `ep` on each row.
void wino_output(const WinoGeometry& s, const float* p, int64_t k0, int64_t kn, int64_t ty0,
                 int64_t ty1, int64_t kb, int64_t ke, float* y, int64_t ldc,
                 const GemmEpilogue* ep);

}  // namespace pg::ops
