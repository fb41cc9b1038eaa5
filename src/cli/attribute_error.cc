#include "cli/attribute_error.h"

#include <set>

#include "base/error.h"
#include "compare/simple_compare.h"
#include "ir/builder.h"
#include "ir/clone.h"

namespace pg::cli {

namespace {

struct CaptureSink : runners::TensorSink {
    const std::set<std::string>& wanted;
    std::map<std::string, Tensor> tensors;
    explicit CaptureSink(const std::set<std::string>& w) : wanted(w) {}
    void on_tensor(const std::string&, const std::string& name, const Tensor& t) override {
        if (wanted.count(name)) tensors[name] = t;
    }
};

// The first runner's tensors that the nodes read or write (graph inputs come from the feed).
std::map<std::string, Tensor> capture(runners::Runner& a, const std::vector<const ir::Node*>& nodes,
                                      const std::map<std::string, Tensor>& feed) {
    std::set<std::string> wanted;
    for (const ir::Node* n : nodes) {
        for (const ir::Value* v : n->inputs())
            if (v && !v->is_initializer()) wanted.insert(v->name());
        for (const ir::Value* v : n->outputs())
            if (v) wanted.insert(v->name());
    }
    CaptureSink sink(wanted);
    if (a.can_stream()) {
        a.infer_streaming(feed, sink);
    } else {  // a runner that can only mark outputs: ask for the tensors directly
        std::vector<std::string> names;
        for (const auto& w : wanted)
            if (!feed.count(w)) names.push_back(w);
        auto marked = a.with_outputs(names);
        if (!marked)
            throw Error(ErrorKind::kUnsupported, a.name() + " can neither stream nor mark tensors");
        for (auto& [name, t] : marked->infer(feed)) sink.tensors[name] = std::move(t);
    }
    for (const auto& [name, t] : feed)
        if (wanted.count(name)) sink.tensors[name] = t;
    return sink.tensors;
}

// A model holding node `n` alone: its non-constant inputs become graph inputs.
std::unique_ptr<ir::Model> single_node_model(const ir::Model& m, const ir::Node& n,
                                             const std::map<std::string, Tensor>& tensors) {
    auto sm = std::make_unique<ir::Model>();
    sm->ir_version = m.ir_version;
    sm->opset_imports = m.opset_imports;
    sm->graph = std::make_unique<ir::Graph>();
    ir::GraphBuilder b(*sm->graph);
    std::vector<ir::Value*> ins;
    for (const ir::Value* v : n.inputs()) {
        if (!v) {
            ins.push_back(nullptr);
        } else if (const ir::Value* seen = sm->graph->find_value(v->name())) {
            ins.push_back(const_cast<ir::Value*>(seen));
        } else if (v->is_initializer()) {
            ins.push_back(b.constant(v->name(), v->initializer()->tensor));
        } else {
            const Tensor& t = tensors.at(v->name());
            ins.push_back(b.input(v->name(), t.dtype(), t.dims()));
        }
    }
    std::vector<std::string> outs;
    for (const ir::Value* v : n.outputs()) outs.push_back(v ? v->name() : std::string());
    ir::Node* c = sm->graph->add_node(n.op_type, ins, outs);
    c->name = n.name;
    c->domain = n.domain;
    for (const auto& attr : n.attributes)
        c->attributes.push_back(ir::clone_attribute(attr, sm->graph.get()));
    for (ir::Value* v : c->outputs())
        if (v) b.output(v);
    return sm;
}

Attribution attribute_one(runners::Runner& b, const ir::Model& m, const ir::Node& n,
                          const std::map<std::string, Tensor>& tensors,
                          const compare::CompareOptions& opts) {
    Attribution r{n.name, n.op_type, n.output(0) ? n.output(0)->name() : "", false, false, 0,
                  0,      ""};
    if (!n.subgraphs().empty()) return r.note = "has a subgraph; not re-run alone", r;
    auto sm = single_node_model(m, n, tensors);
    auto rb = b.for_model(*sm);
    if (!rb) return r.note = b.name() + " cannot re-run single nodes", r;
    std::map<std::string, Tensor> feed;
    for (const ir::Value* v : sm->graph->inputs()) feed[v->name()] = tensors.at(v->name());
    const auto out = rb->infer(feed);
    const Tensor& ref = tensors.at(r.tensor);
    auto res = compare::compare_simple("first", ref, "second", out.at(0).second,
                                       compare::resolve_simple(opts, r.tensor));
    r.computed = true;
    r.local_passed = res.passed;
    if (res.stats)
        r.local_max_abs = res.stats->absdiff.max, r.local_max_rel = res.stats->reldiff.max;
    return r;
}

}  // namespace

std::vector<Attribution> attribute_errors(runners::Runner& a, runners::Runner& b,
                                          const ir::Model& m,
                                          const std::vector<const ir::Node*>& nodes,
                                          const std::map<std::string, Tensor>& feed,
                                          const compare::CompareOptions& opts) {
    std::vector<Attribution> out;
    if (nodes.empty()) return out;
    const auto tensors = capture(a, nodes, feed);
    for (const ir::Node* n : nodes) {
        try {
            out.push_back(attribute_one(b, m, *n, tensors, opts));
        } catch (const Error& e) {
            out.push_back(Attribution{n->name, n->op_type, "", false, false, 0, 0, e.message()});
        }
    }
    return out;
}

}  // namespace pg::cli
