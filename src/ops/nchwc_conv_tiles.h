// Internal to conv_nchwc (nchwc_conv_avx512.cc): which output pixels each tile takes and which
// taps of the window they see, so the kernel needs neither a padded copy of the input nor a
// test per tap. Output pixels fall into classes by the taps inside the input (a 3x3 window with
// padding 1: the interior, four edges, four corners; a class is a row class times a column
// class); a tile takes pixels of one class, in raster order, with each pixel's input offset at
// its first tap inside the input. Tiles are computed when asked for, from per-axis tables: the
// plan's size grows with the output's height and width, not with its pixels.
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

class NchwcConvTiles {
  public:
    // Conv s (2-D, input without padding: blocked, pixels 16 floats apart, or plain, 1 apart:
    // `pixel`).
    NchwcConvTiles(const ConvShape& s, int64_t pixel);

    int64_t taps() const { return taps_; }  // window taps (kh * kw)
    // Class k's taps, in the window's order, and whether they are all of the window's.
    const std::vector<NchwcTap>& taps_of(int64_t k) const { return classes_[size_t(k)]; }
    bool full(int64_t k) const { return full_[size_t(k)]; }
    // The number of tiles of at most `width` pixels (balanced within each class).
    int64_t count(int64_t width) const;
    // Tiles [t0, t1) of `width`, appended to `out`.
    void tiles(int64_t width, int64_t t0, int64_t t1, std::vector<NchwcTile>& out) const;

  private:
    int64_t taps_ = 0, wo_ = 0;
    std::vector<std::vector<NchwcTap>> classes_;  // row class * column classes + column class
    std::vector<bool> full_;
    std::vector<std::vector<int64_t>> rows_, cols_;  // each axis class's positions
    std::vector<int64_t> row_in_, col_in_;           // per output row / column: its input part
    std::vector<bool> empty_;                        // per class: no tap inside the input
};

}  // namespace pg::ops
