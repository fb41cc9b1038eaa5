// The tiles of a blocked Conv (see nchwc_conv_tiles.h).
#include "ops/nchwc_conv_tiles.h"

#include <algorithm>
#include <utility>

#include "ops/nchwc_groups.h"
#include "ops/pool_window.h"

namespace pg::ops {

namespace {

// Each output position's class along one axis (positions with the same taps inside the input
// share one); `ranges` receives each class's taps, `positions` each class's positions.
std::vector<int64_t> axis_classes(const AxisTaps& t,
                                  std::vector<std::pair<int64_t, int64_t>>& ranges,
                                  std::vector<std::vector<int64_t>>& positions) {
    std::vector<int64_t> id(t.lo.size());
    for (size_t o = 0; o < t.lo.size(); ++o) {
        const std::pair<int64_t, int64_t> r{t.lo[o], t.hi[o]};
        const auto it = std::find(ranges.begin(), ranges.end(), r);
        id[o] = it - ranges.begin();
        if (it == ranges.end()) ranges.push_back(r), positions.emplace_back();
        positions[size_t(id[o])].push_back(static_cast<int64_t>(o));
    }
    return id;
}

}  // namespace

NchwcConvTiles::NchwcConvTiles(const ConvShape& s, int64_t pixel) {
    const Window& g = s.w;
    const AxisTaps h = axis_taps(g, 1), w = axis_taps(g, 2);
    const int64_t width = g.in[2];
    taps_ = g.kernel[1] * g.kernel[2], wo_ = g.out[2];
    std::vector<std::pair<int64_t, int64_t>> row_taps, col_taps;
    axis_classes(h, row_taps, rows_);
    axis_classes(w, col_taps, cols_);
    for (int64_t oh = 0; oh < g.out[1]; ++oh)
        row_in_.push_back((h.start[oh] + h.lo[oh] * g.dil[1]) * width * pixel);
    for (int64_t ow = 0; ow < g.out[2]; ++ow)
        col_in_.push_back((w.start[ow] + w.lo[ow] * g.dil[2]) * pixel);
    for (const auto& [kh0, kh1] : row_taps)
        for (const auto& [kw0, kw1] : col_taps) {
            std::vector<NchwcTap> taps;
            for (int64_t kh = kh0; kh < kh1; ++kh)
                for (int64_t kw = kw0; kw < kw1; ++kw)
                    taps.push_back({((kh - kh0) * g.dil[1] * width + (kw - kw0) * g.dil[2]) * pixel,
                                    kh * g.kernel[2] + kw});
            full_.push_back(static_cast<int64_t>(taps.size()) == taps_);
            empty_.push_back(taps.empty());
            classes_.push_back(std::move(taps));
        }
}

int64_t NchwcConvTiles::count(int64_t width) const {
    int64_t n = 0;
    for (const auto& r : rows_)
        for (const auto& c : cols_) {
            const int64_t len = static_cast<int64_t>(r.size() * c.size());
            n += (len + width - 1) / width;
        }
    return n;
}

void NchwcConvTiles::tiles(int64_t width, int64_t t0, int64_t t1,
                           std::vector<NchwcTile>& out) const {
    int64_t base = 0;  // tiles of the classes before this one
    for (size_t r = 0; r < rows_.size() && base < t1; ++r)
        for (size_t c = 0; c < cols_.size() && base < t1; ++c) {
            const std::vector<int64_t>& rp = rows_[r];
            const std::vector<int64_t>& cp = cols_[c];
            const int64_t ncols = static_cast<int64_t>(cp.size());
            const int64_t len = static_cast<int64_t>(rp.size()) * ncols;
            const int64_t n = (len + width - 1) / width;
            const size_t k = r * cols_.size() + c;
            const int64_t lo = std::max(t0, base), hi = std::min(t1, base + n);
            if (lo < hi) {
                // The parts' first pixel and its row and column stepped from tile to tile (one
                // division per class, not four per tile: 21 % of a 16 -> 64 1x1 Conv's time).
                int64_t first = 0, np = 0;
                nchwc_part_of(len, n, lo - base, &first, &np);
                const int64_t size = len / n, extra = len % n;
                int64_t ri = first / ncols, ci = first % ncols;
                const bool empty = empty_[k];
                const size_t at = out.size();
                out.resize(at + static_cast<size_t>(hi - lo));
                for (int64_t t = lo; t < hi; ++t) {
                    NchwcTile& tile = out[at + static_cast<size_t>(t - lo)];
                    tile.cls = static_cast<int64_t>(k);
                    tile.np = size + (t - base < extra ? 1 : 0);
                    for (int64_t j = 0; j < tile.np; ++j) {
                        const int64_t oh = rp[size_t(ri)], ow = cp[size_t(ci)];
                        tile.out[j] = oh * wo_ + ow;
                        tile.in[j] = empty ? 0 : row_in_[size_t(oh)] + col_in_[size_t(ow)];
                        if (++ci == ncols) ci = 0, ++ri;
                    }
                }
            }
            base += n;
        }
}

}  // namespace pg::ops
