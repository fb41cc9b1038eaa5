#include "compare/error_stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "base/error.h"
#include "base/float16.h"
#include "compare/array_summary.h"

namespace pg::compare {

namespace {

constexpr uint64_t kChunk = 4096;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool is_float32_like(DataType t) {
    return dtype_is_float(t) && t != DataType::kFloat64;
}

template <typename T>
void convert(const Tensor& t, uint64_t begin, uint64_t n, double* out) {
    const T* p = t.data<T>() + begin;
    for (uint64_t i = 0; i < n; ++i) out[i] = static_cast<double>(p[i]);
}

void convert_half(const Tensor& t, uint64_t begin, uint64_t n, double* out, bool bf16) {
    const uint16_t* p = t.data<uint16_t>() + begin;
    for (uint64_t i = 0; i < n; ++i) {
        out[i] = bf16 ? bfloat16_bits_to_float(p[i]) : half_bits_to_float(p[i]);
    }
}

double float32_round(double v) {
    return static_cast<double>(static_cast<float>(v));
}

}  // namespace

DiffKind diff_kind(DataType a, DataType b) {
    const bool ba = a == DataType::kBool, bb = b == DataType::kBool;
    if (ba && bb) return DiffKind::kBool;
    const bool fa = dtype_is_float(a), fb = dtype_is_float(b);
    if (!fa && !fb) return DiffKind::kInteger;
    if ((is_float32_like(a) || ba) && (is_float32_like(b) || bb)) return DiffKind::kFloat32;
    return DiffKind::kFloat64;
}

void load_as_double(const Tensor& t, uint64_t begin, uint64_t n, double* out) {
    switch (t.dtype()) {
        case DataType::kFloat32:
            return convert<float>(t, begin, n, out);
        case DataType::kFloat64:
            return convert<double>(t, begin, n, out);
        case DataType::kFloat16:
            return convert_half(t, begin, n, out, false);
        case DataType::kBFloat16:
            return convert_half(t, begin, n, out, true);
        case DataType::kInt8:
            return convert<int8_t>(t, begin, n, out);
        case DataType::kUInt8:
            return convert<uint8_t>(t, begin, n, out);
        case DataType::kBool:
            return convert<uint8_t>(t, begin, n, out);
        case DataType::kInt16:
            return convert<int16_t>(t, begin, n, out);
        case DataType::kUInt16:
            return convert<uint16_t>(t, begin, n, out);
        case DataType::kInt32:
            return convert<int32_t>(t, begin, n, out);
        case DataType::kUInt32:
            return convert<uint32_t>(t, begin, n, out);
        case DataType::kInt64:
            return convert<int64_t>(t, begin, n, out);
        case DataType::kUInt64:
            return convert<uint64_t>(t, begin, n, out);
        default:
            break;
    }
    if (dtype_is_float(t.dtype()) && t.has_data()) {  // float8 / float4: slow generic path
        for (uint64_t i = 0; i < n; ++i) out[i] = t.element_as_double(begin + i);
        return;
    }
    throw Error(ErrorKind::kUnsupported, "cannot compare values of dtype " + dtype_name(t.dtype()));
}

std::vector<int64_t> unravel(uint64_t flat, const std::vector<int64_t>& dims) {
    std::vector<int64_t> idx(dims.size(), 0);
    for (size_t k = dims.size(); k-- > 0;) {
        if (dims[k] <= 0) continue;
        idx[k] = static_cast<int64_t>(flat % static_cast<uint64_t>(dims[k]));
        flat /= static_cast<uint64_t>(dims[k]);
    }
    return idx;
}

double quantile_of_sorted(const std::vector<double>& sorted, double q) {
    if (sorted.empty()) return std::numeric_limits<double>::infinity();
    const double pos = q * static_cast<double>(sorted.size() - 1);
    const size_t lo = static_cast<size_t>(std::floor(pos));
    const size_t hi = std::min(lo + 1, sorted.size() - 1);
    const double t = pos - static_cast<double>(lo), a = sorted[lo], b = sorted[hi];
    const double d = b - a;  // numpy's _lerp, including its t >= 0.5 branch
    return t >= 0.5 ? b - d * (1 - t) : a + d * t;
}

namespace {

struct DiffCtx {
    DiffKind kind = DiffKind::kFloat32;
    bool ice = false;        // infinities compare equal
    bool ref_float = false;  // the reference is floating: zeros get an epsilon
};

// absdiff and reldiff of one element pair, as numpy computes them for this DiffKind.
inline void diff_elem(double a, double b, const DiffCtx& c, double& abs, double& rel) {
    if (c.kind == DiffKind::kBool) {
        abs = a != b ? 1.0 : 0.0;
        rel = abs / b;  // numpy: bool / bool is float64 division (0/0 = NaN)
        return;
    }
    abs = std::fabs(a - b);
    if (c.ice && std::isinf(a) && a == b) abs = 0;
    const bool f32 = c.kind == DiffKind::kFloat32;
    if (f32) abs = float32_round(abs);
    double ref = b;
    if (c.ref_float && ref == 0) ref = f32 ? float32_round(kRelEpsilon) : kRelEpsilon;
    rel = abs / std::fabs(ref);
    if (f32) rel = float32_round(rel);
}

// Streams both tensors chunk by chunk, calling fn(flat_index, a, b, abs, rel).
template <typename Fn>
void for_each_pair(const Tensor& t0, const Tensor& t1, uint64_t n, const DiffCtx& c, Fn&& fn) {
    std::vector<double> a(kChunk), b(kChunk);
    for (uint64_t begin = 0; begin < n; begin += kChunk) {
        const uint64_t m = std::min(kChunk, n - begin);
        load_as_double(t0, begin, m, a.data());
        load_as_double(t1, begin, m, b.data());
        for (uint64_t i = 0; i < m; ++i) {
            double abs = 0, rel = 0;
            diff_elem(a[i], b[i], c, abs, rel);
            fn(begin + i, a[i], b[i], abs, rel);
        }
    }
}

void sticky_max(double& m, double x) {
    if (!std::isnan(m) && (std::isnan(x) || x > m)) m = x;
}

// Per-channel accumulation along one axis.
struct ChannelAcc {
    int64_t axis = -1;
    uint64_t inner = 1, channels = 0, per_channel = 0;
    std::vector<double> max_abs, sum_abs, max_rel;

    ChannelAcc(const std::vector<int64_t>& dims, int64_t requested) {
        const int64_t rank = static_cast<int64_t>(dims.size());
        const int64_t ax = requested < 0 ? requested + rank : requested;
        if (ax < 0 || ax >= rank || dims[ax] <= 0) return;
        axis = ax;
        channels = static_cast<uint64_t>(dims[ax]);
        for (int64_t k = ax + 1; k < rank; ++k) inner *= static_cast<uint64_t>(dims[k]);
        max_abs.assign(channels, 0);
        sum_abs.assign(channels, 0);
        max_rel.assign(channels, 0);
    }
    void add(uint64_t flat, double abs, double rel) {
        if (axis < 0) return;
        const uint64_t c = (flat / inner) % channels;
        sticky_max(max_abs[c], abs);
        sticky_max(max_rel[c], rel);
        sum_abs[c] += abs;
    }
    std::vector<ChannelError> worst(uint64_t n, int top) const;
};

std::vector<ChannelError> ChannelAcc::worst(uint64_t n, int top) const {
    std::vector<ChannelError> all;
    const double count = channels ? static_cast<double>(n / channels) : 0;
    for (uint64_t c = 0; c < channels; ++c) {
        all.push_back(
            {static_cast<int64_t>(c), max_abs[c], count ? sum_abs[c] / count : 0, max_rel[c]});
    }
    auto worse = [](const ChannelError& x, const ChannelError& y) {
        if (std::isnan(x.max_abs) != std::isnan(y.max_abs)) return std::isnan(x.max_abs);
        if (x.max_abs != y.max_abs) return x.max_abs > y.max_abs;
        return x.channel < y.channel;
    };
    const size_t k = std::min<size_t>(all.size(), static_cast<size_t>(std::max(top, 0)));
    std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(k), all.end(), worse);
    all.resize(k);
    return all;
}

// NaN-propagating min/max, as numpy's amin/amax.
struct MinMax {
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    void add(double x) {
        if (std::isnan(lo)) return;
        if (std::isnan(x))
            lo = hi = kNaN;
        else
            lo = std::min(lo, x), hi = std::max(hi, x);
    }
};

struct PairAcc {
    double dot = 0, n0 = 0, n1 = 0, se = 0;
    MinMax mm0, mm1;
};

void finish_metrics(const PairAcc& acc, uint64_t n, PairStats& s) {
    if (acc.n0 == 0 && acc.n1 == 0)
        s.cosine_similarity = 1;
    else if (acc.n0 == 0 || acc.n1 == 0)
        s.cosine_similarity = 0;
    else
        s.cosine_similarity = acc.dot / (std::sqrt(acc.n0) * std::sqrt(acc.n1));
    s.snr_db =
        acc.se == 0 ? std::numeric_limits<double>::infinity() : 10 * std::log10(acc.n1 / acc.se);
    s.rmse = n ? std::sqrt(acc.se / static_cast<double>(n)) : 0;
}

// The streaming pass: metrics, mismatches, channel errors and min/max of both outputs.
PairAcc pair_pass(const Tensor& t0, const Tensor& t1, uint64_t n, const DiffCtx& c,
                  const PairRequest& req, ChannelAcc& ch, PairStats& s) {
    PairAcc acc;
    for_each_pair(t0, t1, n, c, [&](uint64_t i, double a, double b, double abs, double rel) {
        acc.dot += a * b;
        acc.n0 += a * a;
        acc.n1 += b * b;
        acc.se += abs * abs;
        acc.mm0.add(a);
        acc.mm1.add(b);
        if (c.ref_float && b == 0) s.zero_in_reference = true;
        const bool bad = (abs > req.atol || std::isnan(abs)) && (rel > req.rtol || std::isnan(rel));
        if (bad && !s.elemwise_mismatches++) s.first_mismatch = i;
        ch.add(i, abs, rel);
    });
    return acc;
}

void fill_values(const Tensor& t, uint64_t n, std::vector<double>& scratch) {
    scratch.resize(n);
    for (uint64_t begin = 0; begin < n; begin += kChunk) {
        load_as_double(t, begin, std::min(kChunk, n - begin), scratch.data() + begin);
    }
}

void fill_diffs(const Tensor& t0, const Tensor& t1, uint64_t n, const DiffCtx& c, bool relative,
                std::vector<double>& scratch) {
    scratch.resize(n);
    for_each_pair(t0, t1, n, c, [&](uint64_t i, double, double, double abs, double rel) {
        scratch[i] = relative ? rel : abs;
    });
}

uint64_t checked_volume(const Tensor& t0, const Tensor& t1, const std::vector<int64_t>& dims) {
    const auto n = checked_numel(dims);
    if (!n || *n != t0.numel() || *n != t1.numel()) {
        throw Error(ErrorKind::kInternal, "compare: element counts do not match the shape");
    }
    if (!t0.has_data() || !t1.has_data()) {
        throw Error(ErrorKind::kInvalidInput, "compare: an output has no values");
    }
    return *n;
}

}  // namespace

void element_diff(double a, double b, DiffKind kind, bool infinities_compare_equal, bool ref_float,
                  double& abs, double& rel) {
    diff_elem(a, b, DiffCtx{kind, infinities_compare_equal, ref_float}, abs, rel);
}

PairStats compute_pair_stats(const Tensor& out0, const Tensor& out1,
                             const std::vector<int64_t>& dims, const PairRequest& req) {
    const uint64_t n = checked_volume(out0, out1, dims);
    PairStats s;
    s.kind = diff_kind(out0.dtype(), out1.dtype());
    const DiffCtx c{s.kind, req.infinities_compare_equal, dtype_is_float(out1.dtype())};
    ChannelAcc ch(dims, req.channel_axis);
    const PairAcc acc = pair_pass(out0, out1, n, c, req, ch, s);
    finish_metrics(acc, n, s);
    if (ch.axis >= 0) s.channel_axis = ch.axis;
    s.worst_channels = ch.worst(n, req.top_channels);

    const auto common =
        std::make_pair(std::min(acc.mm0.lo, acc.mm1.lo), std::max(acc.mm0.hi, acc.mm1.hi));
    const bool nan_range = std::isnan(acc.mm0.lo) || std::isnan(acc.mm1.lo);
    std::vector<double> scratch;
    const Tensor* outs[2] = {&out0, &out1};
    ArrayStats* dst[2] = {&s.out0, &s.out1};
    for (int k = 0; k < 2; ++k) {
        fill_values(*outs[k], n, scratch);
        SummaryRequest r{outs[k]->dtype() == DataType::kBool, true, common,
                         is_float32_like(outs[k]->dtype()), std::nullopt};
        if (nan_range) r.histogram = false;
        *dst[k] = summarize(scratch, dims, r);
    }
    const bool f32 = s.kind == DiffKind::kFloat32;
    fill_diffs(out0, out1, n, c, false, scratch);
    s.absdiff = summarize(scratch, dims, {s.kind == DiffKind::kBool, true, {}, f32, req.quantile});
    fill_diffs(out0, out1, n, c, true, scratch);
    s.reldiff = summarize(scratch, dims, {false, true, {}, f32, req.quantile});
    return s;
}

ArrayStats compute_array_stats(const Tensor& t,
                               std::optional<std::pair<double, double>> hist_range) {
    if (!t.has_data()) throw Error(ErrorKind::kInvalidInput, "compare: an output has no values");
    std::vector<double> scratch;
    fill_values(t, t.numel(), scratch);
    SummaryRequest r{t.dtype() == DataType::kBool, true, hist_range, is_float32_like(t.dtype()),
                     std::nullopt};
    return summarize(scratch, t.dims(), r);
}

}  // namespace pg::compare
