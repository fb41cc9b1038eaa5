#include "ops/broadcast.h"

#include <string>

#include "base/error.h"

namespace pg::ops {

namespace {

std::string text(const Dims& d) {
    std::string s = "[";
    for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
    return s + "]";
}

}  // namespace

Dims broadcast_shape(const Dims& a, const Dims& b) {
    const size_t rank = std::max(a.size(), b.size());
    Dims out(rank);
    for (size_t i = 0; i < rank; ++i) {
        const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
        const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
        if (da != db && da != 1 && db != 1)
            throw Error(ErrorKind::kInvalidInput,
                        "shapes " + text(a) + " and " + text(b) + " cannot be broadcast");
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

}  // namespace pg::ops
