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

// How the blocked Conv (conv_nchwc) splits an output of n images of mb blocks, `pixels` each,
// between the threads: by groups of output blocks (each thread packs its groups' weights) when
// there are two groups per thread or more, else by pixels (each thread packs every group's
// weights). On maps of kNchwcSmallMap pixels or less a thread's pack of every weight costs about
// as much as its share of the products, so there the blocks go into a multiple of the threads'
// count of groups of two blocks or more (Inception-v2's 1024 -> 160 at 7 x 7: four groups, one
// thread's 3 + 2 blocks beside the other's; its 1x1 Convs at 7 x 7 0.71-0.76 of the pixel split,
// kernel_ab). Steps that read such an output and may split either way (the pools) follow it, so
// that a thread reads mostly what it wrote.
inline constexpr int64_t kNchwcSmallMap = 256;

struct NchwcConvSplit {
    int64_t groups = 1;
    bool by_groups = false;
};

inline NchwcConvSplit nchwc_conv_split(int64_t n, int64_t mb, int64_t pixels, int threads) {
    NchwcConvSplit s{nchwc_group_count(mb, threads, 4), false};
    s.by_groups = s.groups * n >= 2 * threads;
    if (!s.by_groups && n == 1 && threads > 1 && pixels <= kNchwcSmallMap) {
        const int64_t even = (s.groups + threads - 1) / threads * threads;
        if (even * 2 <= mb) s.groups = even, s.by_groups = true;
    }
    return s;
}

}  // namespace pg::ops
