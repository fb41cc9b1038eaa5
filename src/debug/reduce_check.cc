#include "debug/reduce_check.h"

#include "base/error.h"
#include "base/log.h"
#include "compare/simple_compare.h"

namespace pg::debug {

SubgraphCheck::SubgraphCheck(const ReferenceValues& ref, emu::EmuRunnerOptions emu,
                             compare::CompareOptions compare)
    : ref_(ref), emu_(std::move(emu)), compare_(std::move(compare)) {}

bool SubgraphCheck::compare_all(const ir::Model& candidate) const {
    emu::EmuRunner emu(candidate, emu_);
    const data::FeedList feeds = ref_.feeds_for(candidate);
    const data::RunResults golden = ref_.outputs_for(candidate);
    for (size_t i = 0; i < feeds.size(); ++i) {
        const auto outs =
            emu.infer(std::map<std::string, Tensor>(feeds[i].begin(), feeds[i].end()));
        for (const auto& [gname, g] : golden.runners[0].iterations[i].outputs) {
            bool found = false;
            for (const auto& [name, t] : outs) {
                if (name != gname) continue;
                found = true;
                if (!compare::compare_simple(name, t, gname, g,
                                             compare::resolve_simple(compare_, name))
                         .passed)
                    return false;
            }
            if (!found) return false;
        }
    }
    return true;
}

bool SubgraphCheck::operator()(const ir::Model& candidate, bool rethrow) const {
    if (rethrow) return compare_all(candidate);
    try {
        return compare_all(candidate);
    } catch (const Error& e) {
        log_warning("debug reduce: the candidate could not be run ({}); counting it as a failure",
                    e.what());
        return false;
    }
}

}  // namespace pg::debug
