#include "base/pyformat.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace pg {

namespace {

std::string shortest_digits(double v, char conv) {
    char buf[64];
    for (int prec = 1; prec <= 17; ++prec) {
        if (conv == 'e')
            std::snprintf(buf, sizeof buf, "%.*e", prec - 1, v);
        else
            std::snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (std::strtod(buf, nullptr) == v) break;
    }
    return buf;
}

// Exponent form as Python writes it: "1.5e-05", "1e+16".
std::string py_exponent_form(double v) {
    std::string s = shortest_digits(v, 'e');
    const size_t e = s.find('e');
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

}  // namespace

std::string py_float(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";
    const int exp10 = static_cast<int>(std::floor(std::log10(std::fabs(v))));
    if (exp10 < -4 || exp10 >= 16) return py_exponent_form(v);
    std::string s = shortest_digits(v, 'g');
    if (s.find('e') != std::string::npos) {  // %g chose exponent form: print positionally
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.1f", v);
        s = buf;
    }
    if (s.find('.') == std::string::npos) s += ".0";
    return s;
}

std::string py_g(double v, int digits) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    return buf;
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

std::string py_tuple(const std::vector<int64_t>& v) {
    std::string s = "(";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
    return s + (v.size() == 1 ? ",)" : ")");
}

std::string py_dict(const std::vector<std::pair<std::string, int64_t>>& v) {
    std::string s = "{";
    for (size_t i = 0; i < v.size(); ++i) {
        s += (i ? ", '" : "'") + v[i].first + "': " + std::to_string(v[i].second);
    }
    return s + "}";
}

}  // namespace pg
