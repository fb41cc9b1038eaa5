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

// The iteration of for_each_broadcast2 as runs along the innermost axis after merging adjacent
// axes that both operands step through alike (e.g. [N, C, H, W] with a [1, C, 1, 1] operand
// becomes [N * C, H * W] with steps 1 and 0), so kernels can write simple inner loops.
struct BroadcastRuns {
    Dims out, sa, sb;    // merged shape and element strides (0 along broadcast axes)
    int64_t inner = 0;   // run length: the last merged dim (1 for rank 0)
    int64_t runs = 0;    // number of runs (0 when the output is empty)
    int64_t step_a = 0;  // a's stride along the run
    int64_t step_b = 0;  // b's stride along the run
};
BroadcastRuns broadcast_runs(const Dims& out, const Dims& sa, const Dims& sb);

// Calls f(out_offset, offset_a, offset_b) for runs [begin, end) of `r`: run i covers outputs
// [out_offset, out_offset + r.inner), a and b advancing by r.step_a and r.step_b.
template <typename F>
void for_each_run(const BroadcastRuns& r, int64_t begin, int64_t end, F&& f) {
    if (begin >= end) return;
    const size_t outer = r.out.size() - 1;
    std::vector<int64_t> idx(outer, 0);
    int64_t off_a = 0, off_b = 0, rem = begin;
    for (size_t ax = outer; ax-- > 0;) {  // coordinates of run `begin` on the outer axes
        idx[ax] = rem % r.out[ax], rem /= r.out[ax];
        off_a += idx[ax] * r.sa[ax], off_b += idx[ax] * r.sb[ax];
    }
    for (int64_t run = begin; run < end; ++run) {
        f(run * r.inner, off_a, off_b);
        for (size_t ax = outer; ax-- > 0;) {  // odometer over the outer axes
            ++idx[ax];
            off_a += r.sa[ax], off_b += r.sb[ax];
            if (idx[ax] < r.out[ax]) break;
            off_a -= r.sa[ax] * r.out[ax], off_b -= r.sb[ax] * r.out[ax];
            idx[ax] = 0;
        }
    }
}

}  // namespace pg::ops
