#include "cli/render.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace pg::cli {

namespace {

constexpr uint64_t kSummaryThreshold = 1000;
constexpr int64_t kEdgeItems = 3;

// Text of one element for numpy_str; floats use numpy's "1." / "0.5" / "1e-05" look.
std::string element_text(const Tensor& t, uint64_t i) {
    if (t.is_string()) return "'" + t.strings()[i] + "'";
    if (t.dtype() == DataType::kBool) return t.bytes()[i] ? "True" : "False";
    // 64-bit integers exactly (through a double, 2^63 - 1 printed as 9223372036854775808).
    if (t.dtype() == DataType::kInt64) return std::to_string(t.data<int64_t>()[i]);
    if (t.dtype() == DataType::kUInt64) return std::to_string(t.data<uint64_t>()[i]);
    const double v = t.element_as_double(i);
    if (!dtype_is_float(t.dtype())) {
        if (std::isnan(v)) return "?";
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.0f", v);
        return buf;
    }
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    std::string s = py_float(static_cast<double>(static_cast<float>(v)));
    if (t.dtype() == DataType::kFloat64) s = py_float(v);
    if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.pop_back();
    return s;
}

void render(const Tensor& t, size_t axis, uint64_t offset, const std::vector<uint64_t>& strides,
            bool summarize, size_t width, std::string& out) {
    const auto& dims = t.dims();
    const int64_t n = dims[axis];
    out += '[';
    for (int64_t k = 0; k < n; ++k) {
        if (summarize && n > 2 * kEdgeItems && k == kEdgeItems) {
            out += axis + 1 == dims.size() ? "..." : "...";
            k = n - kEdgeItems - 1;
            if (axis + 1 == dims.size())
                out += ' ';
            else
                out += "\n" + std::string(axis + 1, ' ');
            continue;
        }
        const uint64_t at = offset + static_cast<uint64_t>(k) * strides[axis];
        if (axis + 1 == dims.size()) {
            std::string e = element_text(t, at);
            out += std::string(width > e.size() ? width - e.size() : 0, ' ') + e;
            if (k + 1 < n) out += ' ';
        } else {
            render(t, axis + 1, at, strides, summarize, width, out);
            if (k + 1 < n)
                out += std::string(dims.size() - axis - 1, '\n') + std::string(axis + 1, ' ');
        }
    }
    out += ']';
}

}  // namespace

std::string numpy_str(const Tensor& t) {
    if (!t.has_data()) return "<no values: weight-stripped or external data not loaded>";
    if (t.rank() == 0) return t.numel() ? element_text(t, 0) : "[]";
    if (t.numel() == 0) return "[]";
    std::vector<uint64_t> strides(t.dims().size(), 1);
    for (size_t k = t.dims().size() - 1; k-- > 0;)
        strides[k] = strides[k + 1] * static_cast<uint64_t>(t.dims()[k + 1]);
    const bool summarize = t.numel() > kSummaryThreshold;
    size_t width = 0;
    const uint64_t scan = summarize ? std::min<uint64_t>(t.numel(), 4096) : t.numel();
    for (uint64_t i = 0; i < scan; ++i) width = std::max(width, element_text(t, i).size());
    std::string out;
    render(t, 0, 0, strides, summarize, width, out);
    return out;
}

std::string indent_lines(const std::string& text, int n) {
    const std::string pad(static_cast<size_t>(n), ' ');
    std::string out = pad;
    for (char c : text) {
        out += c;
        if (c == '\n') out += pad;
    }
    return out;
}

}  // namespace pg::cli
