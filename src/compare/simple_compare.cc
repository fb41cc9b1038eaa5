#include "compare/simple_compare.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/error.h"
#include "base/pyformat.h"

namespace pg::compare {

namespace {

bool stat_failed(double d, double tol) {
    return std::isnan(d) || d > tol;
}

double pick(const ArrayStats& a, ErrorStat s) {
    switch (s) {
        case ErrorStat::kMean:
            return a.mean;
        case ErrorStat::kMedian:
            return a.median;
        case ErrorStat::kQuantile:
            return a.quantile.value_or(0);
        case ErrorStat::kMax:
        case ErrorStat::kElemwise:
            return a.max;
    }
    return a.max;
}

Tensor with_dims(const Tensor& t, std::vector<int64_t> dims) {
    if (t.is_string()) return Tensor::from_strings(std::move(dims), t.strings());
    std::string bytes(reinterpret_cast<const char*>(t.bytes()), t.nbytes());
    return Tensor::from_bytes(t.dtype(), std::move(dims), std::move(bytes));
}

// Copy of `t` with axes permuted: result dim i is source dim perm[i].
Tensor permute(const Tensor& t, const std::vector<size_t>& perm) {
    const auto& in = t.dims();
    const size_t rank = in.size(), esize = static_cast<size_t>(dtype_bits(t.dtype()) / 8);
    std::vector<int64_t> out_dims(rank);
    std::vector<uint64_t> in_strides(rank, 1), step(rank);
    for (size_t k = rank; k-- > 1;) in_strides[k - 1] = in_strides[k] * in[k];
    for (size_t i = 0; i < rank; ++i) out_dims[i] = in[perm[i]], step[i] = in_strides[perm[i]];
    std::string bytes(t.nbytes(), '\0');
    std::vector<int64_t> idx(rank, 0);
    uint64_t src = 0;
    for (uint64_t o = 0; o < t.numel(); ++o) {
        std::memcpy(&bytes[o * esize], t.bytes() + src * esize, esize);
        for (size_t k = rank; k-- > 0;) {  // odometer increment of the output index
            src += step[k];
            if (++idx[k] < out_dims[k]) break;
            src -= step[k] * static_cast<uint64_t>(out_dims[k]);
            idx[k] = 0;
        }
    }
    return Tensor::from_bytes(t.dtype(), out_dims, std::move(bytes));
}

// Small tensor of an array of doubles (abs/rel values for printing).
Tensor small_tensor(const std::vector<double>& v, const std::vector<int64_t>& dims, DataType dt) {
    std::string bytes;
    for (double x : v) {
        if (dt == DataType::kFloat32) {
            float f = static_cast<float>(x);
            bytes.append(reinterpret_cast<const char*>(&f), sizeof f);
        } else if (dt == DataType::kBool) {
            bytes.push_back(x != 0 ? 1 : 0);
        } else {
            bytes.append(reinterpret_cast<const char*>(&x), sizeof x);
        }
    }
    return Tensor::from_bytes(dt, dims, std::move(bytes));
}

}  // namespace

Tensor try_match_shape(const Tensor& t, const std::vector<int64_t>& target,
                       std::vector<std::string>& notes) {
    const auto& dims = t.dims();
    if (dims == target) return t;
    const auto vol = checked_numel(target);
    Tensor cur = t;
    if (dims.size() == target.size() && dtype_bits(t.dtype()) % 8 == 0 && !t.is_string()) {
        std::vector<size_t> perm;
        std::vector<bool> used(dims.size(), false);
        for (int64_t d : target) {
            for (size_t j = 0; j < dims.size(); ++j) {
                if (!used[j] && dims[j] == d) {
                    used[j] = true;
                    perm.push_back(j);
                    break;
                }
            }
        }
        if (perm.size() == dims.size()) cur = permute(t, perm);
    }
    if (cur.dims() == target) return cur;
    if (!vol || *vol != cur.numel()) {
        notes.push_back("Could not match shape: " + py_tuple(dims) + " to " + py_tuple(target));
        return cur;
    }
    return with_dims(cur, target);
}

double OutputResult::required_abs() const {
    return stats ? pick(stats->absdiff, settings.stat) : 0;
}
double OutputResult::required_rel() const {
    return stats ? pick(stats->reldiff, settings.stat) : 0;
}

namespace {

void keep_small_values(const Tensor& out0, const Tensor& out1, const std::vector<int64_t>& dims,
                       const SimpleSettings& s, OutputResult& r) {
    if (out0.numel() > kMaxPrintedValues) return;
    r.values0 = out0;
    r.values1 = out1;
    std::vector<double> a(out0.numel()), b(out1.numel()), abs, rel;
    load_as_double(out0, 0, a.size(), a.data());
    load_as_double(out1, 0, b.size(), b.data());
    const DiffKind kind = diff_kind(out0.dtype(), out1.dtype());
    const bool ref_float = dtype_is_float(out1.dtype());
    abs.resize(a.size());
    rel.resize(a.size());
    for (size_t i = 0; i < a.size(); ++i) {
        element_diff(a[i], b[i], kind, s.infinities_compare_equal, ref_float, abs[i], rel[i]);
    }
    const bool f32 = kind == DiffKind::kFloat32;
    const DataType abs_dt = kind == DiffKind::kBool ? DataType::kBool
                            : f32                   ? DataType::kFloat32
                                                    : DataType::kFloat64;
    r.abs_values = small_tensor(abs, dims, abs_dt);
    r.rel_values = small_tensor(rel, dims, f32 ? DataType::kFloat32 : DataType::kFloat64);
}

bool decide(const PairStats& p, const SimpleSettings& s) {
    if (s.stat == ErrorStat::kElemwise) return p.elemwise_mismatches == 0;
    return !(stat_failed(pick(p.absdiff, s.stat), s.atol.value) &&
             stat_failed(pick(p.reldiff, s.stat), s.rtol.value));
}

OutputResult header(const std::string& name0, const Tensor& out0, const std::string& name1,
                    const Tensor& out1) {
    OutputResult r;
    r.name0 = name0;
    r.name1 = name1;
    r.dtype0 = out0.dtype();
    r.dtype1 = out1.dtype();
    r.dims0 = out0.dims();
    r.dims1 = out1.dims();
    return r;
}

}  // namespace

OutputResult compare_simple(const std::string& name0, const Tensor& out0, const std::string& name1,
                            const Tensor& out1, const SimpleSettings& s) {
    OutputResult r = header(name0, out0, name1, out1);
    r.settings = s;
    if (s.check_shapes && out0.dims() != out1.dims()) {
        r.not_compared.push_back("FAILED | Output: `" + name0 +
                                 "` | Will not compare outputs of different shapes.\n" +
                                 "Note: Output shapes are " + py_tuple(out0.dims()) + " and " +
                                 py_tuple(out1.dims()) + ".");
        return r;
    }
    const Tensor m1 = try_match_shape(out1, out0.dims(), r.shape_notes);
    if (m1.numel() != out0.numel()) {
        r.not_compared.push_back("FAILED | Output: `" + name0 +
                                 "` | Cannot compare outputs with different numbers of elements "
                                 "(" +
                                 std::to_string(out0.numel()) + " and " +
                                 std::to_string(m1.numel()) + ").");
        return r;
    }
    PairRequest req{s.atol.value, s.rtol.value,   s.infinities_compare_equal,
                    std::nullopt, s.channel_axis, s.top_channels};
    if (s.stat == ErrorStat::kQuantile) req.quantile = s.quantile.value;
    r.stats = compute_pair_stats(out0, m1, m1.dims(), req);
    r.passed = decide(*r.stats, s);
    keep_small_values(out0, m1, m1.dims(), s, r);
    return r;
}

namespace {

// Compares one batch (values along the last axis); appends failure lines, false on a failure.
bool compare_index_batch(const double* v0, const double* v1, int64_t len, int64_t tol,
                         bool fail_fast, bool is_float, std::vector<std::string>& failures) {
    bool ok = true;
    const int64_t n0 = tol > 0 ? std::max<int64_t>(len - tol, 0) : len;
    for (int64_t i = 0; i < n0; ++i) {
        if (v0[i] == v1[i]) continue;
        const double* hit = std::find(v1, v1 + len, v0[i]);
        if (hit == v1 + len) {
            failures.push_back("FAILED | Value: " + (is_float ? py_float(v0[i]) : py_g(v0[i], 19)) +
                               " not found in output");
        } else if (std::llabs((hit - v1) - i) > tol) {
            failures.push_back("FAILED | Difference exceeds index tolerance (" +
                               std::to_string(tol) + ")");
        } else {
            continue;
        }
        ok = false;
        if (fail_fast) return false;
    }
    return ok;
}

}  // namespace

OutputResult compare_indices(const std::string& name0, const Tensor& out0, const std::string& name1,
                             const Tensor& out1, int64_t tolerance, bool fail_fast) {
    OutputResult r = header(name0, out0, name1, out1);
    r.func = CompareFunc::kIndices;
    r.index_tolerance = tolerance;
    if (out0.dims() != out1.dims()) {
        r.not_compared.push_back("Cannot compare outputs of different shapes.");
        return r;
    }
    const int64_t len = out0.rank() ? out0.dims().back() : 1;
    std::vector<double> a(out0.numel()), b(out1.numel());
    load_as_double(out0, 0, a.size(), a.data());
    load_as_double(out1, 0, b.size(), b.data());
    r.passed = true;
    for (uint64_t at = 0; len > 0 && at < a.size(); at += static_cast<uint64_t>(len)) {
        if (!compare_index_batch(&a[at], &b[at], len, tolerance, fail_fast,
                                 dtype_is_float(out0.dtype()), r.index_failures)) {
            r.passed = false;
            if (fail_fast) return r;
        }
    }
    r.stats.emplace();
    const ArrayStats s0 = compute_array_stats(out0, std::nullopt);
    const ArrayStats s1 = compute_array_stats(out1, std::nullopt);
    const auto range = std::make_pair(std::min(s0.min, s1.min), std::max(s0.max, s1.max));
    r.stats->out0 = compute_array_stats(out0, range);
    r.stats->out1 = compute_array_stats(out1, range);
    return r;
}

}  // namespace pg::compare
