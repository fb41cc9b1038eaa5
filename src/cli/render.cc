#include "cli/render.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace pg::cli {

namespace {

constexpr uint64_t kSummaryThreshold = 1000;
constexpr int64_t kEdgeItems = 3;

std::string shortest_digits(double v, char conv) {
    char buf[64];
    for (int prec = 1; prec <= 17; ++prec) {
        std::snprintf(buf, sizeof buf, conv == 'e' ? "%.*e" : "%.*g", conv == 'e' ? prec - 1 : prec, v);
        if (std::strtod(buf, nullptr) == v) break;
    }
    return buf;
}

// Text of one element for numpy_str; floats use numpy's "1." / "0.5" / "1e-05" look.
std::string element_text(const Tensor& t, uint64_t i) {
    if (t.is_string()) return "'" + t.strings()[i] + "'";
    if (t.dtype() == DataType::kBool) return t.bytes()[i] ? "True" : "False";
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
            if (axis + 1 == dims.size()) out += ' ';
            else out += "\n" + std::string(axis + 1, ' ');
            continue;
        }
        const uint64_t at = offset + static_cast<uint64_t>(k) * strides[axis];
        if (axis + 1 == dims.size()) {
            std::string e = element_text(t, at);
            out += std::string(width > e.size() ? width - e.size() : 0, ' ') + e;
            if (k + 1 < n) out += ' ';
        } else {
            render(t, axis + 1, at, strides, summarize, width, out);
            if (k + 1 < n) out += std::string(dims.size() - axis - 1, '\n') + std::string(axis + 1, ' ');
        }
    }
    out += ']';
}

}  // namespace

std::string py_float(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";
    const int exp10 = static_cast<int>(std::floor(std::log10(std::fabs(v))));
    if (exp10 < -4 || exp10 >= 16) {
        std::string s = shortest_digits(v, 'e');  // like 1.5e-05
        size_t e = s.find('e');
        std::string mant = s.substr(0, e), ex = s.substr(e + 1);
        if (mant.find('.') != std::string::npos) {
            while (mant.back() == '0') mant.pop_back();
            if (mant.back() == '.') mant.pop_back();
        }
        const char sign = ex[0];
        std::string digits = ex.substr(1);
        while (digits.size() > 2 && digits[0] == '0') digits.erase(digits.begin());
        return mant + "e" + sign + digits;
    }
    char buf[64];
    for (int prec = 1; prec <= 17; ++prec) {
        std::snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (std::strtod(buf, nullptr) == v) break;
    }
    std::string s = buf;
    if (s.find('e') != std::string::npos) {  // %g chose exponent form: print positionally
        std::snprintf(buf, sizeof buf, "%.1f", v);
        s = buf;
    }
    if (s.find('.') == std::string::npos) s += ".0";
    return s;
}

std::string py_list(const std::vector<int64_t>& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
    return s + "]";
}

std::string py_list(const std::vector<float>& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + py_float(v[i]);
    return s + "]";
}

std::string py_list(const std::vector<std::string>& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", '" : "'") + v[i] + "'";
    return s + "]";
}

std::string py_dict(const std::vector<std::pair<std::string, int64_t>>& v) {
    std::string s = "{";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", '" : "'") + v[i].first + "': " + std::to_string(v[i].second);
    return s + "}";
}

std::string numpy_str(const Tensor& t) {
    if (!t.has_data()) return "<no values: weight-stripped or external data not loaded>";
    if (t.rank() == 0) return t.numel() ? element_text(t, 0) : "[]";
    if (t.numel() == 0) return "[]";
    std::vector<uint64_t> strides(t.dims().size(), 1);
    for (size_t k = t.dims().size() - 1; k-- > 0;) strides[k] = strides[k + 1] * static_cast<uint64_t>(t.dims()[k + 1]);
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
