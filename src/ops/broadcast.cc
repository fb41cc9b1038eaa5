#include "ops/broadcast.h"

#include <string>

#include "base/error.h"
#include "tensor/tensor.h"

namespace pg::ops {

Dims broadcast_shape(const Dims& a, const Dims& b) {
    const size_t rank = std::max(a.size(), b.size());
    Dims out(rank);
    for (size_t i = 0; i < rank; ++i) {
        const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
        const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
        if (da < 0 || db < 0)  // an Expand shape from the data (-5 gave a vector "too large")
            throw Error(ErrorKind::kInvalidInput,
                        "shapes " + dims_text(a) + " and " + dims_text(b) + " hold a negative dim");
        if (da != db && da != 1 && db != 1)
            throw Error(ErrorKind::kInvalidInput,
                        "shapes " + dims_text(a) + " and " + dims_text(b) + " cannot be broadcast");
        out[i] = da == 1 ? db : da;
    }
    return out;
}

Dims broadcast_strides(const Dims& in, const Dims& out) {
    Dims strides(out.size(), 0);
    int64_t s = 1;
    for (size_t k = in.size(); k-- > 0;) {
        const size_t ax = k + out.size() - in.size();
        strides[ax] = in[k] == 1 ? 0 : s;
        s *= in[k];
    }
    return strides;
}

BroadcastRuns broadcast_runs(const Dims& out, const Dims& sa, const Dims& sb) {
    BroadcastRuns r;
    for (size_t i = 0; i < out.size(); ++i) {
        if (out[i] == 1) continue;  // size-1 axes move nothing
        // Merge into the previous axis when both operands continue it contiguously.
        if (!r.out.empty() && r.sa.back() == sa[i] * out[i] && r.sb.back() == sb[i] * out[i]) {
            r.out.back() *= out[i], r.sa.back() = sa[i], r.sb.back() = sb[i];
            continue;
        }
        r.out.push_back(out[i]), r.sa.push_back(sa[i]), r.sb.push_back(sb[i]);
    }
    if (r.out.empty()) r.out = {1}, r.sa = {0}, r.sb = {0};
    int64_t total = 1;
    for (int64_t d : r.out) total *= d;
    r.inner = r.out.back();
    r.runs = r.inner == 0 ? 0 : total / r.inner;
    r.step_a = r.sa.back(), r.step_b = r.sb.back();
    for (int64_t d : out)
        if (d == 0) r.runs = 0;
    return r;
}

}  // namespace pg::ops
