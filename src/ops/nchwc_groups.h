// Internal to the blocked Conv kernels (nchwc_conv_avx512.cc, nchwc_conv_tiles.cc,
// nchwc_winograd_avx512.cc): balanced parts of a range, and how a layer's output blocks go into
// groups that threads take whole.
#pragma once

#include <algorithm>
#include <cstdint>

namespace pg::ops {

// The n-th of `parts` balanced parts of [0, len): [*first, *first + *count).
inline void nchwc_part_of(int64_t len, int64_t parts, int64_t n, int64_t* first, int64_t* count) {
    const int64_t base = len / parts, extra = len % parts;
    *first = n * base + std::min(n, extra);
    *count = base + (n < extra ? 1 : 0);
}

// Groups for mb output blocks: of at most `most` blocks, and a multiple of the threads when that
// keeps most - 1 blocks or more in each (twelve blocks, at most four, on two threads: four groups
// of three, not three of four), so that threads can take whole groups, each preparing its
// weights once.
inline int64_t nchwc_group_count(int64_t mb, int threads, int64_t most) {
    const int64_t fewest = (mb + most - 1) / most;
    const int64_t even = (fewest + threads - 1) / threads * threads;
    return even * (most - 1) <= mb ? even : fewest;
}

// Whether the blocked Conv (conv_nchwc) splits an output of n images of mb blocks between the
// threads by groups of output blocks (two groups per thread or more), else by output pixels.
// Steps that read such an output and may split either way (pools, depthwise Convs) follow it,
// so that a thread reads mostly what it wrote (nchwc_follows_pixel_split).
inline bool nchwc_conv_splits_by_groups(int64_t n, int64_t mb, int threads) {
    return nchwc_group_count(mb, threads, 4) * n >= 2 * threads;
}

}  // namespace pg::ops
