#include "ops/attrs.h"

#include "base/error.h"

namespace pg::ops {

Attrs Attrs::tracked(const ir::Node& node) {
    Attrs a(node);
    a.read_ = std::make_shared<std::vector<bool>>(node.attributes.size(), false);
    return a;
}

std::vector<std::string> Attrs::unread() const {
    std::vector<std::string> out;
    if (!read_) return out;
    for (size_t i = 0; i < node_.attributes.size() && i < read_->size(); ++i)
        if (!(*read_)[i]) out.push_back(node_.attributes[i].name);
    return out;
}

const ir::Attribute* Attrs::find(const std::string& name) const {
    const ir::Attribute* a = node_.find_attribute(name);
    if (a && read_) {
        const auto i = static_cast<size_t>(a - node_.attributes.data());
        if (i < read_->size()) (*read_)[i] = true;
    }
    return a;
}

bool Attrs::has(const std::string& name) const { return find(name) != nullptr; }

const ir::Attribute* Attrs::typed(const std::string& name, ir::AttrType type) const {
    const ir::Attribute* a = find(name);
    if (!a) return nullptr;
    if (a->type != type)
        throw Error(ErrorKind::kInvalidInput, "attribute '" + name + "' must be of type " +
                                                  ir::attr_type_name(type) + ", found " +
                                                  ir::attr_type_name(a->type));
    return a;
}

int64_t Attrs::get_int(const std::string& name, int64_t fallback) const {
    const auto* a = typed(name, ir::AttrType::kInt);
    return a ? a->i : fallback;
}

bool Attrs::get_flag(const std::string& name, bool fallback) const {
    const auto* a = typed(name, ir::AttrType::kInt);
    if (!a) return fallback;
    if (a->i != 0 && a->i != 1)
        throw Error(ErrorKind::kInvalidInput, "attribute '" + name + "' is " +
                                                  std::to_string(a->i) + "; it must be 0 or 1");
    return a->i == 1;
}

float Attrs::get_float(const std::string& name, float fallback) const {
    const auto* a = typed(name, ir::AttrType::kFloat);
    return a ? a->f : fallback;
}

std::string Attrs::get_string(const std::string& name, const std::string& fallback) const {
    const auto* a = typed(name, ir::AttrType::kString);
    return a ? a->s : fallback;
}

std::vector<int64_t> Attrs::get_ints(const std::string& name, std::vector<int64_t> fallback) const {
    const auto* a = typed(name, ir::AttrType::kInts);
    return a ? a->ints : fallback;
}

std::vector<float> Attrs::get_floats(const std::string& name, std::vector<float> fallback) const {
    const auto* a = typed(name, ir::AttrType::kFloats);
    return a ? a->floats : fallback;
}

std::vector<std::string> Attrs::get_strings(const std::string& name,
                                            std::vector<std::string> fallback) const {
    const auto* a = typed(name, ir::AttrType::kStrings);
    return a ? a->strings : fallback;
}

const Tensor* Attrs::get_tensor(const std::string& name) const {
    const auto* a = typed(name, ir::AttrType::kTensor);
    return a && !a->tensors.empty() ? &a->tensors[0].tensor : nullptr;
}

const ir::Graph* Attrs::get_graph(const std::string& name) const {
    const auto* a = typed(name, ir::AttrType::kGraph);
    return a && !a->graphs.empty() ? a->graphs[0].get() : nullptr;
}

int64_t Attrs::require_int(const std::string& name) const {
    const auto* a = typed(name, ir::AttrType::kInt);
    if (!a) throw Error(ErrorKind::kInvalidInput, "required attribute '" + name + "' is missing");
    return a->i;
}

}  // namespace pg::ops
