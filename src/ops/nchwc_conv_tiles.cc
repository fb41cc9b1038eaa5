// The tiles of a blocked Conv (see nchwc_conv_tiles.h).
#include "ops/nchwc_conv_tiles.h"

#include <algorithm>
#include <utility>

#include "ops/pool_window.h"

namespace pg::ops {

namespace {

// Pixels of each class, in raster order, with their input offsets.
struct Classes {
    std::vector<std::vector<int64_t>> out, in;
};

// Each output position's class along one axis (positions with the same taps inside the input
// share one; a 3x3 window with padding 1 has three); `ranges` receives each class's taps.
std::vector<int64_t> axis_classes(const AxisTaps& t,
                                  std::vector<std::pair<int64_t, int64_t>>& ranges) {
    std::vector<int64_t> id(t.lo.size());
    for (size_t o = 0; o < t.lo.size(); ++o) {
        const std::pair<int64_t, int64_t> r{t.lo[o], t.hi[o]};
        const auto it = std::find(ranges.begin(), ranges.end(), r);
        id[o] = it - ranges.begin();
        if (it == ranges.end()) ranges.push_back(r);
    }
    return id;
}

Classes classify(const ConvShape& s, int64_t kb, NchwcConvTiles& t) {
    const Window& g = s.w;
    const AxisTaps h = axis_taps(g, 1), w = axis_taps(g, 2);
    const int64_t width = g.in[2];
    std::vector<std::pair<int64_t, int64_t>> rows, cols;
    const std::vector<int64_t> row_class = axis_classes(h, rows), col_class = axis_classes(w, cols);
    const int64_t ncols = static_cast<int64_t>(cols.size());
    Classes c;
    c.out.resize(rows.size() * cols.size()), c.in.resize(rows.size() * cols.size());
    for (const auto& [kh0, kh1] : rows)
        for (const auto& [kw0, kw1] : cols) {
            std::vector<NchwcTap> taps;
            for (int64_t kh = kh0; kh < kh1; ++kh)
                for (int64_t kw = kw0; kw < kw1; ++kw)
                    taps.push_back({((kh - kh0) * g.dil[1] * width + (kw - kw0) * g.dil[2]) * kb,
                                    kh * g.kernel[2] + kw});
            t.full.push_back(static_cast<int64_t>(taps.size()) == t.taps);
            t.classes.push_back(std::move(taps));
        }
    for (int64_t oh = 0; oh < g.out[1]; ++oh) {
        const int64_t ih = h.start[oh] + h.lo[oh] * g.dil[1];
        for (int64_t ow = 0; ow < g.out[2]; ++ow) {
            const size_t k = static_cast<size_t>(row_class[oh] * ncols + col_class[ow]);
            const bool any = h.lo[oh] < h.hi[oh] && w.lo[ow] < w.hi[ow];
            const int64_t iw = w.start[ow] + w.lo[ow] * g.dil[2];
            c.out[k].push_back(oh * g.out[2] + ow);
            c.in[k].push_back(any ? (ih * width + iw) * kb : 0);
        }
    }
    return c;
}

// The tiles of `width` over the classes, and their segments.
NchwcTiles tiles_of(const Classes& c, int64_t width, int64_t pixels, int64_t segments) {
    NchwcTiles r;
    int64_t done = 0;
    r.segment_start.assign(static_cast<size_t>(segments + 1), -1);
    for (size_t k = 0; k < c.out.size(); ++k) {
        const int64_t len = static_cast<int64_t>(c.out[k].size()), n = (len + width - 1) / width;
        for (int64_t t = 0; t < n; ++t) {
            const int64_t first = t * (len / n) + std::min(t, len % n);
            NchwcTile tile;
            tile.cls = static_cast<int64_t>(k);
            tile.np = len / n + (t < len % n ? 1 : 0);
            for (int64_t j = 0; j < tile.np; ++j) {
                tile.out[j] = c.out[k][static_cast<size_t>(first + j)];
                tile.in[j] = c.in[k][static_cast<size_t>(first + j)];
            }
            const int64_t seg = done * segments / pixels;
            if (r.segment_start[static_cast<size_t>(seg)] < 0)
                r.segment_start[static_cast<size_t>(seg)] = static_cast<int64_t>(r.tiles.size());
            done += tile.np;
            r.tiles.push_back(tile);
        }
    }
    r.segment_start.back() = static_cast<int64_t>(r.tiles.size());
    for (int64_t seg = segments; seg-- > 0;)  // a segment no tile starts in is empty
        if (r.segment_start[static_cast<size_t>(seg)] < 0)
            r.segment_start[static_cast<size_t>(seg)] =
                r.segment_start[static_cast<size_t>(seg + 1)];
    return r;
}

}  // namespace

NchwcConvTiles nchwc_conv_tiles(const ConvShape& s, int64_t pixel,
                                const std::vector<int64_t>& widths, int64_t segment_pixels) {
    NchwcConvTiles t;
    t.taps = s.w.kernel[1] * s.w.kernel[2];
    const Classes c = classify(s, pixel, t);
    const int64_t pixels = s.w.out[1] * s.w.out[2];
    t.segments = (pixels + segment_pixels - 1) / segment_pixels;
    t.by_width.resize(kNchwcMaxTile + 1);
    for (const int64_t w : widths)
        if (t.by_width[static_cast<size_t>(w)].tiles.empty())
            t.by_width[static_cast<size_t>(w)] = tiles_of(c, w, pixels, t.segments);
    return t;
}

}  // namespace pg::ops
