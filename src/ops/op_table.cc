#include "ops/op_table.h"

#include <algorithm>

namespace pg::ops {

namespace {

std::string_view canonical_domain(std::string_view d) {
    return d == "ai.onnx" ? std::string_view() : d;
}

// (domain, name) order, then since_version.
bool key_less(const OpDef& a, std::string_view domain, std::string_view name) {
    const int c = a.domain.compare(domain);
    return c < 0 || (c == 0 && a.name < name);
}

// Room for every definition register_all_ops makes (206 now; more only costs a regrowth).
constexpr size_t kTableCapacity = 224;

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
    auto at = std::upper_bound(defs_.begin(), defs_.end(), def, [](const OpDef& d, const OpDef& e) {
        if (key_less(d, e.domain, e.name)) return true;
        if (key_less(e, d.domain, d.name)) return false;
        return d.since_version < e.since_version;
    });
    defs_.insert(at, std::move(def));  // after equal keys: a later registration wins
}

const OpDef* OpTable::find(const std::string& domain, const std::string& name,
                           int64_t opset) const {
    const std::string_view d = canonical_domain(domain);
    auto it = std::lower_bound(defs_.begin(), defs_.end(), 0,
                               [&](const OpDef& def, int) { return key_less(def, d, name); });
    const OpDef* best = nullptr;
    for (; it != defs_.end() && it->domain == d && it->name == name; ++it)
        if (it->since_version <= opset) best = &*it;
    return best;
}

std::vector<std::string> OpTable::names() const {
    std::vector<std::string> out;
    for (size_t i = 0; i < defs_.size(); ++i) {
        const OpDef& d = defs_[i];
        if (i > 0 && defs_[i - 1].domain == d.domain && defs_[i - 1].name == d.name) continue;
        out.push_back(d.domain.empty() ? std::string(d.name)
                                       : std::string(d.domain) + "::" + std::string(d.name));
    }
    return out;
}

const OpTable& op_table() {
    static const OpTable table = [] {
        OpTable t;
        t.reserve(kTableCapacity);
        register_all_ops(t);
        return t;
    }();
    return table;
}

}  // namespace pg::ops
