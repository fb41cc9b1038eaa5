// Data movement for the shape, index and reduce families: an op computes, for each output
// element, which source element it copies (a "ref"), and take() copies them for every element
// type (fixed-size types of 1..16 bytes, sub-byte packed types, strings). Refs name one of
// several sources, so Pad (input + fill value), Concat (n inputs) and Scatter (data + updates)
// are plain ref maps too. To add an op, build its refs with the helpers below and call take().
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/thread_pool.h"
#include "ops/broadcast.h"
#include "ops/kernel.h"

namespace pg::ops {

// A reference to element `offset` of source `source` (offset < 2^44).
inline int64_t src_ref(int64_t source, int64_t offset) {
    return (source << 44) | offset;
}

// An output of `dims` whose element i is the element refs[i] names (see src_ref). All sources
// must have the same dtype. `op` names the caller in errors.
Tensor take(const std::vector<const Tensor*>& sources, Dims dims, const std::vector<int64_t>& refs,
            ThreadPool* pool, const char* op);
// take() from a single source (refs are plain offsets).
inline Tensor take1(const Tensor& src, Dims dims, const std::vector<int64_t>& refs,
                    ThreadPool* pool, const char* op) {
    return take({&src}, std::move(dims), refs, pool, op);
}

// The same elements under new dims (the element count must match).
Tensor with_dims(const Tensor& t, Dims dims);
// A scalar of type `dt` holding v (numeric, bool, float16, bfloat16; "" for strings).
Tensor scalar_of(DataType dt, double v);

// a * b, or INT64_MAX when that overflows (more elements than any tensor can hold).
int64_t saturating_mul(int64_t a, int64_t b);
// Product of dims, saturating_mul's INT64_MAX past int64 (a hostile shape's).
int64_t count_of(const Dims& dims);
// A ref map for an output of `dims`, one entry per element (zero-filled): kInvalidInput when a
// dim is negative or the element count overflows, or when the map and the output (up to 16
// bytes an element) would not fit this machine's memory, before anything is allocated (a
// hostile Pad, Tile or Expand asks for billions of elements).
std::vector<int64_t> ref_table(const Dims& dims);
// Row-major element strides of dims.
Dims strides_of(const Dims& dims);
// Offsets base + sum(c[i] * strides[i]) for every coordinate c of `dims`, in row-major order.
std::vector<int64_t> strided_refs(const Dims& dims, const Dims& strides, int64_t base = 0);

// An index read from an indices tensor, wrapped when negative; kInvalidInput (naming `op`)
// when outside [-n, n).
int64_t wrap_index(int64_t i, int64_t n, const char* op);

// Concat of `in` along `axis` into `out` dims, and Transpose of x by perm: the plain versions
// build ref maps and call take(); the fast ones (fixed-size types of whole bytes, else they fall
// back to the plain ones) copy contiguous runs, and transpose 4-byte planes whose rows are the
// input's unit-stride axis in blocks (transpose_tiles.h). Tests diff them
// (tests/unit/ops_fastpath_test.cc, ops_transpose_tiles_test.cc).
Tensor concat_plain(const std::vector<const Tensor*>& in, const Dims& out, size_t axis,
                    ThreadPool* pool);
Tensor concat_fast(const std::vector<const Tensor*>& in, const Dims& out, size_t axis,
                   ThreadPool* pool);
Tensor transpose_plain(const Tensor& x, const Dims& perm, ThreadPool* pool);
Tensor transpose_fast(const Tensor& x, const Dims& perm, ThreadPool* pool);

// Runs fn(begin, end) over [0, n), on the pool when there is one and n is large.
void parallel_ranges(ThreadPool* pool, int64_t n, const std::function<void(int64_t, int64_t)>& fn);

// Calls f(flat, coord) for every coordinate of `dims` in row-major order.
template <typename F>
void for_each_coord(const Dims& dims, F&& f) {
    const int64_t n = count_of(dims);
    std::vector<int64_t> c(dims.size(), 0);
    for (int64_t i = 0; i < n; ++i) {
        f(i, c);
        for (size_t ax = dims.size(); ax-- > 0;) {
            if (++c[ax] < dims[ax]) break;
            c[ax] = 0;
        }
    }
}

}  // namespace pg::ops
