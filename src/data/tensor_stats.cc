// Polygraphy's statistics strings: see tensor_stats.h.
#include "data/tensor_stats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <vector>

namespace pg::data {

namespace {

template <typename T>
T pairwise(const T* a, size_t n) {
    if (n < 8) {
        T res = 0;
        for (size_t i = 0; i < n; ++i) res += a[i];
        return res;
    }
    if (n <= 128) {
        T r[8];
        for (int j = 0; j < 8; ++j) r[j] = a[j];
        size_t i = 8;
        for (; i < n - (n % 8); i += 8) {
            for (int j = 0; j < 8; ++j) r[j] += a[i + j];
        }
        T res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; ++i) res += a[i];
        return res;
    }
    size_t n2 = n / 2;
    n2 -= n2 % 8;
    return pairwise(a, n2) + pairwise(a + n2, n - n2);
}

std::string g5(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.5g", v);
    return buf;
}

std::string index_tuple(const std::vector<int64_t>& dims, uint64_t flat) {
    std::vector<int64_t> idx(dims.size());
    for (size_t k = dims.size(); k-- > 0;) {
        idx[k] = dims[k] ? static_cast<int64_t>(flat % dims[k]) : 0;
        flat = dims[k] ? flat / dims[k] : 0;
    }
    if (idx.size() == 1) return "(" + std::to_string(idx[0]) + ",)";
    std::string s = "(";
    for (size_t k = 0; k < idx.size(); ++k) s += (k ? ", " : "") + std::to_string(idx[k]);
    return s + ")";
}

// Element values in the dtype numpy computes in after cast_up: float32 (stored as double but
// rounded to float at each step by the float path) or float64.
struct Values {
    std::vector<double> v;
    bool f32 = false;
};

Values values_of(const Tensor& t) {
    Values out;
    out.f32 = t.dtype() == DataType::kFloat32 || t.dtype() == DataType::kFloat16 ||
              t.dtype() == DataType::kBFloat16;
    out.v.resize(t.numel());
    for (uint64_t i = 0; i < t.numel(); ++i) out.v[i] = t.element_as_double(i);
    return out;
}

// Sum in the computing dtype, pairwise.
double sum_of(const std::vector<double>& v, bool f32) {
    if (!f32) return pairwise(v.data(), v.size());
    std::vector<float> f(v.begin(), v.end());
    return pairwise_sum_f32(f.data(), f.size());
}

double mean_f32(const std::vector<double>& v) {
    std::vector<float> f(v.begin(), v.end());
    return static_cast<float>(pairwise_sum_f32(f.data(), f.size()) / static_cast<double>(f.size()));
}

double variance(const Values& x) {
    const double n = static_cast<double>(x.v.size());
    double mean = sum_of(x.v, x.f32) / n;
    if (x.f32) mean = static_cast<float>(mean);
    std::vector<double> sq(x.v.size());
    for (size_t i = 0; i < sq.size(); ++i) {
        double d = x.v[i] - mean;
        if (x.f32)
            d = static_cast<float>(d), d = static_cast<float>(d * d);
        else
            d = d * d;
        sq[i] = d;
    }
    const double var = sum_of(sq, x.f32) / n;
    return x.f32 ? static_cast<float>(var) : var;
}

// numpy.quantile(..., method="linear") on sorted values, numpy's _lerp.
double quantile(const std::vector<double>& sorted, double q) {
    if (sorted.empty()) return INFINITY;
    const double pos = q * static_cast<double>(sorted.size() - 1);
    const size_t lo = static_cast<size_t>(std::floor(pos));
    const size_t hi = std::min(lo + 1, sorted.size() - 1);
    const double t = pos - lo, a = sorted[lo], b = sorted[hi], diff = b - a;
    return t >= 0.5 ? b - diff * (1 - t) : a + diff * t;
}

double median(const std::vector<double>& sorted, bool f32) {
    const size_t n = sorted.size();
    if (n % 2) return sorted[n / 2];
    const double s = f32 ? static_cast<float>(sorted[n / 2 - 1] + sorted[n / 2])
                         : sorted[n / 2 - 1] + sorted[n / 2];
    return f32 ? static_cast<float>(s / 2) : s / 2;
}

// First index of the min (or max); NaN wins as numpy's argmin/argmax.
uint64_t arg_extreme(const std::vector<double>& v, bool want_max) {
    uint64_t best = 0;
    for (uint64_t i = 0; i < v.size(); ++i) {
        if (std::isnan(v[i])) return i;
        if (want_max ? v[i] > v[best] : v[i] < v[best]) best = i;
    }
    return best;
}

std::string stats_text(const Tensor& t, const Values& x) {
    std::vector<double> abs(x.v.size());
    for (size_t i = 0; i < abs.size(); ++i) abs[i] = std::fabs(x.v[i]);
    const bool empty = x.v.empty();
    const double var = empty ? 0 : variance(x);
    std::vector<double> sorted = x.v;
    std::sort(sorted.begin(), sorted.end(),
              [](double a, double b) { return a < b || (!std::isnan(a) && std::isnan(b)); });
    const uint64_t amin = empty ? 0 : arg_extreme(x.v, false),
                   amax = empty ? 0 : arg_extreme(x.v, true);
    const bool has_nan = !empty && std::isnan(sorted.back());
    std::string s = "mean=" + g5(empty ? NAN : mean_f32(x.v)) + ", std-dev=" + g5(std::sqrt(var)) +
                    ", var=" + g5(var) + ", median=" +
                    g5(empty     ? 0
                       : has_nan ? NAN
                                 : median(sorted, x.f32)) +
                    ", min=" + g5(empty ? 0 : x.v[amin]) + " at " +
                    (empty ? "0" : index_tuple(t.dims(), amin)) +
                    ", max=" + g5(empty ? 0 : x.v[amax]) + " at " +
                    (empty ? "0" : index_tuple(t.dims(), amax)) +
                    ", avg-magnitude=" + g5(empty ? NAN : mean_f32(abs));
    if (t.dtype() == DataType::kBool) return s;
    auto q = [&](double p) {
        const double v = has_nan ? NAN : quantile(sorted, p);
        return g5(x.f32 ? static_cast<float>(v) : v);
    };
    return s + ", p90=" + q(0.9) + ", p95=" + q(0.95) + ", p99=" + q(0.99);
}

}  // namespace

float pairwise_sum_f32(const float* v, size_t n) {
    return pairwise(v, n);
}

std::string str_output_stats(const Tensor& t) {
    if (!t.has_data() || t.is_string() || dtype_bits(t.dtype()) == 0 ||
        t.dtype() == DataType::kComplex64 || t.dtype() == DataType::kComplex128) {
        return "<Error while computing statistics>";
    }
    return stats_text(t, values_of(t));
}

}  // namespace pg::data
