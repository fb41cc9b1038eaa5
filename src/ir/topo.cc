#include "ir/topo.h"

#include <functional>
#include <algorithm>
#include <queue>
#include <unordered_map>

#include "base/error.h"
#include "ir/graph.h"

namespace pg::ir {

Node* ancestor_in(const Graph& g, Node* n) {
    while (n && n->graph() != &g) n = n->graph()->owner_node();
    return n;
}

namespace {

// consumers[i] = indices of nodes reading an output of node i.
std::vector<std::vector<size_t>> consumers_of(const Graph& g,
                                              const std::unordered_map<const Node*, size_t>& index) {
    std::vector<std::vector<size_t>> consumers(g.num_nodes());
    for (size_t i = 0; i < g.num_nodes(); ++i) {
        for (Value* out : g.nodes()[i]->outputs()) {
            if (!out) continue;
            for (const Use& u : out->uses()) {
                Node* top = ancestor_in(g, u.node);
                if (top) consumers[i].push_back(index.at(top));
            }
        }
    }
    return consumers;
}

std::vector<Node*> find_cycle(const Graph& g, const std::vector<std::vector<size_t>>& consumers,
                              const std::vector<size_t>& indegree) {
    // Every node left with indegree > 0 has a predecessor also left: walking predecessors
    // backwards must revisit a node, and the revisited stretch is a cycle.
    std::vector<std::vector<size_t>> preds(consumers.size());
    for (size_t i = 0; i < consumers.size(); ++i)
        for (size_t c : consumers[i])
            if (indegree[i] > 0) preds[c].push_back(i);
    size_t cur = 0;
    while (cur < indegree.size() && indegree[cur] == 0) ++cur;
    std::vector<int> seen(consumers.size(), -1);
    std::vector<size_t> path;
    while (cur < indegree.size() && seen[cur] < 0 && !preds[cur].empty()) {
        seen[cur] = static_cast<int>(path.size());
        path.push_back(cur);
        cur = preds[cur].front();
    }
    std::vector<Node*> cycle;
    if (cur >= indegree.size() || seen[cur] < 0) {  // should not happen; report what is left
        for (size_t i = 0; i < indegree.size(); ++i)
            if (indegree[i] > 0) cycle.push_back(g.nodes()[i].get());
        return cycle;
    }
    for (size_t k = path.size(); k-- > static_cast<size_t>(seen[cur]);)
        cycle.push_back(g.nodes()[path[k]].get());
    return cycle;
}

}  // namespace

TopoResult topological_order(const Graph& g) {
    std::unordered_map<const Node*, size_t> index;
    for (size_t i = 0; i < g.num_nodes(); ++i) index[g.nodes()[i].get()] = i;
    const auto consumers = consumers_of(g, index);
    std::vector<size_t> indegree(g.num_nodes(), 0);
    for (const auto& cs : consumers)
        for (size_t c : cs) ++indegree[c];
    std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
    for (size_t i = 0; i < indegree.size(); ++i)
        if (indegree[i] == 0) ready.push(i);
    TopoResult result;
    while (!ready.empty()) {
        size_t i = ready.top();
        ready.pop();
        result.order.push_back(g.nodes()[i].get());
        for (size_t c : consumers[i])
            if (--indegree[c] == 0) ready.push(c);
    }
    if (result.order.size() != g.num_nodes()) result.cycle = find_cycle(g, consumers, indegree);
    return result;
}

void check_acyclic(const Graph& g) {
    TopoResult r = topological_order(g);
    if (!r.acyclic()) {
        std::string names;
        for (Node* n : r.cycle) names += (names.empty() ? "" : " -> ") + n->describe();
        if (!r.cycle.empty()) names += " -> " + r.cycle.front()->describe();
        throw Error(ErrorKind::kInvalidInput, "the graph has a cycle: " + names);
    }
    for (const auto& n : g.nodes())
        for (Graph* sub : n->subgraphs())
            with_context("in a subgraph of node " + n->describe(), [&] { check_acyclic(*sub); });
}

}  // namespace pg::ir
