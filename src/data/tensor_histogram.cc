// Polygraphy's str_histogram (numpy.histogram with 10 uniform bins): see tensor_stats.h.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "data/tensor_stats.h"

namespace pg::data {

namespace {

constexpr int kBins = 10;

std::string g3(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf;
}

// numpy.linspace(first, last, 11) in the edges' dtype (float32 for float32 data).
std::vector<double> bin_edges(double first, double last, bool f32) {
    std::vector<double> e(kBins + 1);
    const double step = (last - first) / kBins;
    for (int i = 0; i <= kBins; ++i) e[i] = first + i * step;
    e[kBins] = last;
    if (f32) {
        for (double& v : e) v = static_cast<float>(v);
    }
    return e;
}

// numpy's fast path for uniform bins, with its off-by-one corrections against the edges.
std::vector<uint64_t> counts(const std::vector<double>& v, const std::vector<double>& e,
                             double first, double last) {
    std::vector<uint64_t> c(kBins, 0);
    const double norm = kBins / (last - first);
    for (double x : v) {
        if (std::isnan(x) || x < first || x > last) continue;
        int64_t i = static_cast<int64_t>((x - first) * norm);
        if (i == kBins) i -= 1;
        if (x < e[i]) i -= 1;
        if (i != kBins - 1 && x >= e[i + 1]) i += 1;
        c[std::clamp<int64_t>(i, 0, kBins - 1)] += 1;
    }
    return c;
}

std::string pad_right(std::string s, size_t w) {
    if (s.size() < w) s.append(w - s.size(), ' ');
    return s;
}

}  // namespace

std::string str_histogram(const Tensor& t, std::optional<std::pair<double, double>> range) {
    if (t.dtype() == DataType::kBool || !t.has_data() || t.is_string() ||
        dtype_bits(t.dtype()) == 0)
        return "";
    if (t.numel() == 0) return "None";
    std::vector<double> v(t.numel());
    for (uint64_t i = 0; i < t.numel(); ++i) v[i] = t.element_as_double(i);
    if (!range && std::any_of(v.begin(), v.end(), [](double x) { return std::isnan(x); })) {
        return "";  // numpy.histogram raises on NaN; Polygraphy prints nothing
    }
    double first = range ? range->first : *std::min_element(v.begin(), v.end());
    double last = range ? range->second : *std::max_element(v.begin(), v.end());
    if (!std::isfinite(first) || !std::isfinite(last))
        return "";  // numpy raises; Polygraphy prints nothing
    if (first == last) first -= 0.5, last += 0.5;
    const bool f32 = t.dtype() == DataType::kFloat32 || t.dtype() == DataType::kFloat16;
    const auto edges = bin_edges(first, last, f32);
    const auto c = counts(v, edges, first, last);
    const uint64_t max_count = *std::max_element(c.begin(), c.end());
    if (max_count == 0) return "None";
    std::vector<std::string> text;
    for (double e : edges) text.push_back(g3(e));
    size_t w1 = 0, w2 = 0;
    for (size_t i = 0; i < text.size(); ++i) {
        w1 = std::max(w1, text[i].size());
        if (i > 0) w2 = std::max(w2, text[i].size());
    }
    std::string out = "---- Histogram ----\n" + pad_right("Bin Range", w1 + w2 + 5) +
                      "|  Num Elems | Visualization";
    for (int i = 0; i < kBins; ++i) {
        char num[32];
        std::snprintf(num, sizeof num, "%10llu", static_cast<unsigned long long>(c[i]));
        out += "\n(" + pad_right(text[i], w1) + ", " + pad_right(text[i + 1], w2) + ") | " + num +
               " | " + std::string(static_cast<size_t>(40.0 * c[i] / max_count), '#');
    }
    return out;
}

}  // namespace pg::data
