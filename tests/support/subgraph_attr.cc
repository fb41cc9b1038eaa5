#include "support/subgraph_attr.h"

#include <memory>
#include <utility>

namespace pg::test {

ir::Graph* add_branch(ir::Node* n, const std::string& attr) {
    auto sub = std::make_unique<ir::Graph>(n->graph());
    sub->name = attr;
    sub->set_owner_node(n);
    ir::Graph* raw = sub.get();
    ir::Attribute a;
    a.name = attr;
    a.type = ir::AttrType::kGraph;
    a.graphs.push_back(std::move(sub));
    n->attributes.push_back(std::move(a));
    return raw;
}

}  // namespace pg::test
