// Warnings for attributes the reference ignores (runtime/session.h, IgnoredAttribute).

#include <mutex>
#include <set>
#include <string>
#include <tuple>

#include "base/log.h"
#include "ir/graph.h"
#include "runtime/session.h"

namespace pg::runtime {

void warn_ignored_attributes(const std::vector<IgnoredAttribute>& ignored) {
    static std::mutex mutex;
    static std::set<std::tuple<std::string, int64_t, std::string>> warned;
    const std::lock_guard<std::mutex> lock(mutex);
    for (const IgnoredAttribute& a : ignored) {
        const ir::Node& n = *a.node;
        const std::string op = (n.domain.empty() ? "" : n.domain + "::") + n.op_type;
        if (!warned.emplace(op, a.opset, a.name).second) continue;
        log_warning(
            "node '{}' ({}, opset {}): attribute '{}' is ignored; {} does not define it at this "
            "opset (ONNX Runtime refuses such a model)",
            n.name, op, a.opset, a.name, n.op_type);
    }
}

}  // namespace pg::runtime
