// Numpy-style multidirectional broadcasting for elementwise kernels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace pg::ops {

using Dims = std::vector<int64_t>;

// The broadcast shape of a and b; kInvalidInput when they are incompatible.
Dims broadcast_shape(const Dims& a, const Dims& b);
// Element strides of a tensor of shape `in` read as shape `out` (0 along broadcast axes).
Dims broadcast_strides(const Dims& in, const Dims& out);

// Calls f(out_index, offset_a, offset_b) for every element of `out`, with a and b read through
// broadcast strides. The innermost axis is a tight loop.
template <typename F>
void for_each_broadcast2(const Dims& out, const Dims& sa, const Dims& sb, F&& f) {
    const size_t rank = out.size();
    int64_t total = 1;
    for (int64_t d : out) total *= d;
    if (total == 0) return;
    if (rank == 0) return f(int64_t{0}, int64_t{0}, int64_t{0});
    const int64_t inner = out[rank - 1], ia = sa[rank - 1], ib = sb[rank - 1];
    std::vector<int64_t> idx(rank, 0);
    int64_t off_a = 0, off_b = 0;
    for (int64_t o = 0; o < total; o += inner) {
        for (int64_t k = 0; k < inner; ++k) f(o + k, off_a + k * ia, off_b + k * ib);
        for (size_t ax = rank - 1; ax-- > 0;) {  // odometer over the outer axes
            ++idx[ax];
            off_a += sa[ax];
            off_b += sb[ax];
            if (idx[ax] < out[ax]) break;
            off_a -= sa[ax] * out[ax];
            off_b -= sb[ax] * out[ax];
            idx[ax] = 0;
        }
    }
}

}  // namespace pg::ops
