#include "ops/op_table.h"

#include <algorithm>

namespace pg::ops {

namespace {

std::string canonical_domain(const std::string& d) {
    return d == "ai.onnx" ? "" : d;
}

}  // namespace

const char* contract_name(NumericContract c) {
    switch (c) {
        case NumericContract::kExact:
            return "exact";
        case NumericContract::kRounding:
            return "rounding";
        case NumericContract::kApproximate:
            return "approximate";
        case NumericContract::kRandom:
            return "random";
    }
    return "?";
}

void OpTable::add(OpDef def) {
    def.domain = canonical_domain(def.domain);
    auto& v = defs_[{def.domain, def.name}];
    v.push_back(std::move(def));
    std::sort(v.begin(), v.end(),
              [](const OpDef& a, const OpDef& b) { return a.since_version < b.since_version; });
}

const OpDef* OpTable::find(const std::string& domain, const std::string& name,
                           int64_t opset) const {
    auto it = defs_.find({canonical_domain(domain), name});
    if (it == defs_.end()) return nullptr;
    const OpDef* best = nullptr;
    for (const auto& d : it->second)
        if (d.since_version <= opset) best = &d;
    return best;
}

std::vector<std::string> OpTable::names() const {
    std::vector<std::string> out;
    for (const auto& [key, defs] : defs_)
        out.push_back(key.first.empty() ? key.second : key.first + "::" + key.second);
    return out;
}

const OpTable& op_table() {
    static const OpTable table = [] {
        OpTable t;
        register_all_ops(t);
        return t;
    }();
    return table;
}

}  // namespace pg::ops
