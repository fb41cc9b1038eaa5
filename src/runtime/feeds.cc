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
    const std::vector<ir::Value*>& ins = g.inputs();
    std::vector<const ops::RtValue*> fed(ins.size(), nullptr);
    for (const auto& [name, v] : feeds) {
        bool known = false;  // every input of that name (a graph may list one twice)
        for (size_t i = 0; i < ins.size(); ++i)
            if (ins[i]->name() == name) fed[i] = &v, known = true;
        if (!known)
            throw Error(ErrorKind::kInvalidInput, "the model has no input named '" + name + "'");
    }
    // Up to the last input fed or required: models of IR version 3 list every initializer as an
    // input after the data (Inception-v2: 893), whose empty entries would cost a run 50 us.
    size_t count = 0;
    for (size_t i = 0; i < ins.size(); ++i)
        if (fed[i] || !ins[i]->is_initializer()) count = i + 1;
    std::vector<ops::RtValue> values;
    values.reserve(count);
    for (size_t i = 0; i < count; ++i) {
        if (!fed[i]) {
            if (!ins[i]->is_initializer())
                throw Error(ErrorKind::kInvalidInput,
                            "no value given for input '" + ins[i]->name() + "'");
            values.emplace_back();  // the initializer is the default
            continue;
        }
        if (fed[i]->is_tensor()) check_tensor_feed(*ins[i], fed[i]->tensor());
        values.push_back(*fed[i]);
    }
    return values;
}

}  // namespace pg::runtime
