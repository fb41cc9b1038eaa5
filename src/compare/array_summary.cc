// ArrayStats of a scratch array of doubles: the part of error_stats shared by every array.
#include "compare/array_summary.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

namespace pg::compare {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Pass 1: sums, min/max with first indices (NaN wins, as numpy's amin/argmin), counts.
void scan(const std::vector<double>& v, const std::vector<int64_t>& dims, ArrayStats& s) {
    double sum = 0, sum_abs = 0;
    uint64_t imin = 0, imax = 0;
    bool nan_seen = false;
    for (uint64_t i = 0; i < v.size(); ++i) {
        const double x = v[i];
        sum += x;
        sum_abs += std::fabs(x);
        if (std::isnan(x)) {
            if (!nan_seen) imin = imax = i;
            nan_seen = true;
            ++s.nan_count;
            continue;
        }
        if (std::isinf(x)) ++s.inf_count;
        if (!nan_seen && x < v[imin]) imin = i;
        if (!nan_seen && x > v[imax]) imax = i;
    }
    const double n = static_cast<double>(v.size());
    s.mean = sum / n;
    s.avg_magnitude = sum_abs / n;
    s.min = nan_seen ? kNaN : v[imin];
    s.max = nan_seen ? kNaN : v[imax];
    s.argmin = unravel(imin, dims);
    s.argmax = unravel(imax, dims);
}

void variance(const std::vector<double>& v, ArrayStats& s) {
    double acc = 0;
    for (double x : v) acc += (x - s.mean) * (x - s.mean);
    s.var = acc / static_cast<double>(v.size());
    s.std_dev = std::sqrt(s.var);
}

// Values at the given sorted ranks, by successive nth_element (no full sort).
std::map<uint64_t, double> select_ranks(std::vector<double>& v, const std::set<uint64_t>& ranks) {
    std::map<uint64_t, double> out;
    auto from = v.begin();
    for (uint64_t r : ranks) {
        auto at = v.begin() + static_cast<std::ptrdiff_t>(r);
        std::nth_element(from, at, v.end());
        out[r] = *at;
        from = at + 1;
    }
    return out;
}

void add_quantile_ranks(uint64_t n, double q, std::set<uint64_t>& ranks) {
    const double pos = q * static_cast<double>(n - 1);
    ranks.insert(static_cast<uint64_t>(std::floor(pos)));
    ranks.insert(std::min<uint64_t>(static_cast<uint64_t>(std::floor(pos)) + 1, n - 1));
}

double quantile_from(const std::map<uint64_t, double>& at, uint64_t n, double q) {
    const double pos = q * static_cast<double>(n - 1);
    const uint64_t lo = static_cast<uint64_t>(std::floor(pos));
    std::vector<double> two = {at.at(lo), at.at(std::min<uint64_t>(lo + 1, n - 1))};
    const double t = pos - static_cast<double>(lo), d = two[1] - two[0];
    return t >= 0.5 ? two[1] - d * (1 - t) : two[0] + d * t;
}

// Median, p90/p95/p99 and the requested quantile; NaN when the data holds a NaN (numpy).
void order_stats(std::vector<double>& v, std::optional<double> q, ArrayStats& s) {
    const uint64_t n = v.size();
    if (s.nan_count) {
        s.median = s.p90 = s.p95 = s.p99 = kNaN;
        if (q) s.quantile = kNaN;
        return;
    }
    std::set<uint64_t> ranks = {(n - 1) / 2, n / 2};
    for (double p : {0.9, 0.95, 0.99}) add_quantile_ranks(n, p, ranks);
    if (q) add_quantile_ranks(n, *q, ranks);
    const auto at = select_ranks(v, ranks);
    s.median = (at.at((n - 1) / 2) + at.at(n / 2)) / 2;
    s.p90 = quantile_from(at, n, 0.9);
    s.p95 = quantile_from(at, n, 0.95);
    s.p99 = quantile_from(at, n, 0.99);
    if (q) s.quantile = quantile_from(at, n, *q);
}

}  // namespace

Histogram make_histogram(const std::vector<double>& v, double lo, double hi, bool f32_edges) {
    Histogram h;
    if (!std::isfinite(lo) || !std::isfinite(hi) || lo > hi || v.empty()) return h;
    if (lo == hi) lo -= 0.5, hi += 0.5;
    constexpr int kBins = 10;
    h.edges.resize(kBins + 1);
    const double step = (hi - lo) / kBins;
    for (int k = 0; k < kBins; ++k) h.edges[k] = k * step + lo;
    h.edges[kBins] = hi;
    if (f32_edges) {
        for (double& e : h.edges) e = static_cast<double>(static_cast<float>(e));
    }
    h.counts.assign(kBins, 0);
    for (double x : v) {
        if (!(x >= lo && x <= hi)) continue;  // numpy drops values outside the range, and NaN
        int b = std::min(static_cast<int>((x - lo) / (hi - lo) * kBins), kBins - 1);
        if (x < h.edges[b])
            --b;
        else if (b != kBins - 1 && x >= h.edges[b + 1])
            ++b;
        ++h.counts[std::clamp(b, 0, kBins - 1)];
    }
    return h;
}

ArrayStats summarize(std::vector<double>& v, const std::vector<int64_t>& dims,
                     const SummaryRequest& req) {
    ArrayStats s;
    s.count = v.size();
    s.is_bool = req.is_bool;
    if (v.empty()) {
        s.p90 = s.p95 = s.p99 = kInf;
        if (req.quantile) s.quantile = kInf;
        return s;
    }
    scan(v, dims, s);
    variance(v, s);
    if (!req.is_bool && req.histogram) {
        const auto [lo, hi] = req.hist_range.value_or(std::make_pair(s.min, s.max));
        s.histogram = make_histogram(v, lo, hi, req.float32_edges);
    }
    order_stats(v, req.quantile, s);
    return s;
}

}  // namespace pg::compare
