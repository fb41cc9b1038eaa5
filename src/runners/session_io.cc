#include "runners/session_io.h"

#include <chrono>

#include "base/error.h"

namespace pg::runners {

void SinkHook::on_node(const ir::Node& node, const std::vector<const ops::RtValue*>&,
                       const std::vector<ops::RtValue>& outputs) {
    for (size_t i = 0; i < outputs.size(); ++i) {
        const ir::Value* v = node.output(i);
        if (v && outputs[i].is_tensor()) sink_.on_tensor(node.name, v->name(), outputs[i].tensor());
    }
}

NamedTensors run_session(runtime::Session& session, const runtime::Feeds& feeds,
                         runtime::NodeHook* hook, double* seconds) {
    const auto start = std::chrono::steady_clock::now();
    auto results = session.run(feeds, hook);
    *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    NamedTensors out;
    for (auto& [name, v] : results) {
        if (!v.is_tensor())
            throw Error(ErrorKind::kUnsupported,
                        "output '" + name +
                            "' is a sequence or optional; only tensor outputs can be compared");
        out.emplace_back(name, std::move(v.tensor()));
    }
    return out;
}

}  // namespace pg::runners
