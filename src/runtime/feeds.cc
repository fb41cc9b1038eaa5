#include "runtime/feeds.h"

#include "base/error.h"

namespace pg::runtime {

namespace {

std::string dims_text(const std::vector<int64_t>& d) {
    std::string s = "[";
    for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
    return s + "]";
}

void check_tensor_feed(const ir::Value& in, const Tensor& t) {
    const ir::TypeInfo& type = in.type();
    if (type.kind != ir::TypeKind::kTensor) return;
    if (type.elem_type != DataType::kUndefined && type.elem_type != t.dtype())
        throw Error(ErrorKind::kInvalidInput, "input '" + in.name() + "' must be " +
                                                  dtype_name(type.elem_type) + ", got " +
                                                  dtype_name(t.dtype()));
    if (!type.shape) return;
    const auto& shape = *type.shape;
    bool ok = shape.size() == t.dims().size();
    for (size_t k = 0; ok && k < shape.size(); ++k)
        if (shape[k].value && *shape[k].value != t.dims()[k]) ok = false;
    if (!ok)
        throw Error(ErrorKind::kInvalidInput, "input '" + in.name() + "' has shape " +
                                                  dims_text(t.dims()) + ", but the model expects " +
                                                  ir::shape_to_string(shape));
}

}  // namespace

std::vector<ops::RtValue> bind_feeds(const ir::Graph& g, const Feeds& feeds) {
    for (const auto& [name, v] : feeds) {
        bool known = false;
        for (const ir::Value* in : g.inputs()) known = known || in->name() == name;
        if (!known)
            throw Error(ErrorKind::kInvalidInput, "the model has no input named '" + name + "'");
    }
    std::vector<ops::RtValue> values;
    for (const ir::Value* in : g.inputs()) {
        auto it = feeds.find(in->name());
        if (it == feeds.end()) {
            if (!in->is_initializer())
                throw Error(ErrorKind::kInvalidInput,
                            "no value given for input '" + in->name() + "'");
            values.emplace_back();  // the initializer is the default
            continue;
        }
        if (it->second.is_tensor()) check_tensor_feed(*in, it->second.tensor());
        values.push_back(it->second);
    }
    return values;
}

}  // namespace pg::runtime
