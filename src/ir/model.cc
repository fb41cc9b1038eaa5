#include "ir/model.h"

namespace pg::ir {

int64_t Model::opset_version(const std::string& d) const {
    for (const auto& o : opset_imports)
        if (o.domain == d || (is_default_domain(o.domain) && is_default_domain(d))) return o.version;
    return 0;
}

}  // namespace pg::ir
