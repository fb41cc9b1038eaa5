#include "ir/type.h"

namespace pg::ir {

std::string shape_to_string(const Shape& shape) {
    std::string s = "(";
    for (size_t i = 0; i < shape.size(); ++i) {
        if (i) s += ", ";
        const Dim& d = shape[i];
        if (d.value) s += std::to_string(*d.value);
        else if (!d.param.empty()) s += "'" + d.param + "'";
        else s += "-1";
    }
    if (shape.size() == 1) s += ",";
    return s + ")";
}

Shape make_shape(const std::vector<int64_t>& dims) {
    Shape s;
    s.reserve(dims.size());
    for (int64_t d : dims) s.push_back(Dim::known(d));
    return s;
}

}  // namespace pg::ir
