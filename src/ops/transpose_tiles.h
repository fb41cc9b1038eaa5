// Blocked 2-D transposes of 4-byte elements for Transpose's fast path (tensor_shape_take.cc):
// when the output's innermost axis walks the input with a stride and the axis before it is the
// input's unit-stride axis (a matrix transpose, NCHW <-> NHWC, attention's K^T), each plane is a
// block transpose. 8 x 8 tiles through AVX2 registers when the CPU has AVX2, else scalar tiles;
// both only move bytes, so the result equals transpose_plain's (ops_transpose_tiles_test.cc).
// To cover 2- or 8-byte elements, add a block function for them and call it the same way.
#pragma once

#include <cstdint>

namespace pg::ops {

// dst[k * dst_stride + j] = src[j * src_stride + k] for k < rows, j < cols.
void transpose_block32(const uint32_t* src, int64_t src_stride, uint32_t* dst, int64_t dst_stride,
                       int64_t rows, int64_t cols);
// Tests: makes transpose_block32 use the scalar tiles (true) or the best available (false).
void transpose_block32_force_scalar(bool scalar);

}  // namespace pg::ops
