// Internal to conv_nchwc (nchwc_conv_avx512.cc): which output pixels each tile takes and which
// taps of the window they see, so the kernel needs neither a padded copy of the input nor a
// test per tap. Output pixels fall into classes by the taps inside the input (a 3x3 window with
// padding 1: the interior, four edges, four corners); a tile takes pixels of one class, in
// raster order, with each pixel's input offset at its first tap inside the input.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/conv_kernels.h"

namespace pg::ops {

constexpr int kNchwcMaxTile = 12;  // output pixels per tile, at most

// A tap a class sees: its input offset (floats) from a pixel's offset, and its index in the
// window (kh * kernel width + kw: its weights' place in p).
struct NchwcTap {
    int64_t in = 0, index = 0;
};

struct NchwcTile {
    int64_t cls = 0, np = 0;
    int64_t in[kNchwcMaxTile] = {};   // input offset (floats) of each pixel
    int64_t out[kNchwcMaxTile] = {};  // output pixel (oh * wo + ow)
};

// The tiles of one width, and where each segment (about segment_pixels pixels, the same count
// of segments for every width) starts.
struct NchwcTiles {
    std::vector<NchwcTile> tiles;
    std::vector<int64_t> segment_start;  // segments + 1 entries
};

struct NchwcConvTiles {
    int64_t taps = 0;                            // window taps (kh * kw)
    std::vector<std::vector<NchwcTap>> classes;  // each class's taps, in the window's order
    std::vector<bool> full;                      // the class sees every tap
    int64_t segments = 0;
    std::vector<NchwcTiles> by_width;  // index: tile width (empty when not asked for)
};

// The tiles of Conv s (2-D, input without padding: blocked, pixels 16 floats apart, or plain,
// 1 apart: `pixel`) for each width in `widths`, in segments of about segment_pixels pixels.
NchwcConvTiles nchwc_conv_tiles(const ConvShape& s, int64_t pixel,
                                const std::vector<int64_t>& widths, int64_t segment_pixels);

}  // namespace pg::ops
