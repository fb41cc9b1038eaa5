#include "runtime/session.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <unordered_map>

#include "base/error.h"
#include "base/heap.h"
#include "base/thread_pool.h"
#include "ir/clone.h"
#include "ir/topo.h"
#include "ops/concat_slice.h"
#include "ops/op_table.h"
#include "ops/type_groups.h"
#include "runtime/feeds.h"
#include "runtime/fuse.h"
#include "runtime/plan.h"

namespace pg::runtime {

namespace {

using OpsetFn = std::function<int64_t(const std::string& domain)>;

struct Frame {
    const GraphPlan* plan;
    const Frame* parent;
    std::vector<ops::RtValue> slots;
    std::vector<char> fed;  // per slot, once a feed replaces an initializer: whether it did

    // The value in `slot`: a constant of the plan unless fed, else the frame's.
    const ops::RtValue* at(int slot) const {
        const auto i = static_cast<size_t>(slot);
        const int c = plan->constant_of[i];
        if (c >= 0 && (fed.empty() || !fed[i])) return &plan->constants[static_cast<size_t>(c)];
        return &slots[i];
    }

    const ops::RtValue* lookup(const ir::Value* v) const {
        for (const Frame* f = this; f; f = f->parent) {
            const auto& index = f->plan->slots;
            auto it = std::lower_bound(index.begin(), index.end(), v,
                                       [](const auto& e, const ir::Value* x) {
                                           return std::less<const ir::Value*>()(e.first, x);
                                       });
            if (it != index.end() && it->first == v) return f->at(it->second);
        }
        return nullptr;
    }
};

}  // namespace

struct Session::Impl {
    const ir::Model& model;
    std::shared_ptr<ThreadPool> pool;
    std::unordered_map<const ir::Graph*, std::unique_ptr<GraphPlan>> plans;
    std::vector<std::unique_ptr<ir::Graph>> function_bodies;
    std::set<std::string> missing;
    std::set<std::string> stripped;  // initializers read by the graph that hold no values
    std::vector<IgnoredAttribute> ignored;  // attributes no kernel looked at
    std::function<ops::KernelFn(const ir::Node&, ops::KernelFn)> wrapper;
    bool fuse;
    std::vector<Session::StepTime>* timing = nullptr;  // run_timed's list while it runs

    Impl(const ir::Model& m, const SessionOptions& o)
        : model(m),
          pool(o.pool
                   ? o.pool
                   : std::make_shared<ThreadPool>(o.threads > 0 ? o.threads : hardware_threads())),
          wrapper(o.kernel_wrapper),
          fuse(o.fuse && !o.kernel_wrapper) {}

    void plan_graph(const ir::Graph& g, const OpsetFn& opset);
    void plan_step(const ir::Graph& g, const ir::Node& n, GraphPlan& p, const OpsetFn& opset);
    ops::KernelFn function_kernel(const ir::Node& n, const ir::Function& f);
    ops::KernelFn op_kernel(const ir::Node& n, const ops::OpDef& def, const NodeStep& s);
    void compute_releases(const ir::Graph& g, GraphPlan& p);
    std::vector<ops::RtValue> execute(const ir::Graph& g, std::vector<ops::RtValue> inputs,
                                      const Frame* parent, NodeHook* hook);
    void run_step(const NodeStep& s, Frame& f, NodeHook* hook);
};

namespace {

class FrameRunner : public ops::SubgraphRunner {
  public:
    FrameRunner(Session::Impl& impl, const Frame& frame) : impl_(impl), frame_(frame) {}
    std::vector<ops::RtValue> run(const ir::Graph& g, std::vector<ops::RtValue> inputs) override {
        return impl_.execute(g, std::move(inputs), g.parent() ? &frame_ : nullptr, nullptr);
    }

  private:
    Session::Impl& impl_;
    const Frame& frame_;
};

const ir::Function* find_function(const ir::Model& m, const ir::Node& n) {
    for (const auto& f : m.functions)
        if (f.name == n.op_type && f.domain == n.domain && f.overload == n.overload) return &f;
    return nullptr;
}

// Replaces attribute references (ref_attr_name) in a cloned function body by the caller's values.
void bind_attribute_refs(ir::Graph& body, const ir::Node& call, const ir::Function& f) {
    for (const auto& node : body.nodes()) {
        std::vector<ir::Attribute> bound;
        for (auto& a : node->attributes) {
            if (a.ref_attr_name.empty()) {
                bound.push_back(std::move(a));
                continue;
            }
            const ir::Attribute* src = call.find_attribute(a.ref_attr_name);
            if (!src)
                for (const auto& d : f.attribute_defaults)
                    if (d.name == a.ref_attr_name) src = &d;
            if (!src) continue;  // unset optional attribute: the op's own default applies
            ir::Attribute c = ir::clone_attribute(*src, &body);
            c.name = a.name;
            bound.push_back(std::move(c));
        }
        node->attributes = std::move(bound);
        for (ir::Graph* sub : node->subgraphs()) bind_attribute_refs(*sub, call, f);
    }
}

}  // namespace

std::string step_context(const NodeStep& s) {
    const ir::Node& n = s.named ? *s.named : *s.node;
    return "while running node '" + n.name + "' (" + n.op_type + ", opset " +
           std::to_string(s.opset) + ")" + s.fused_with;
}

ops::KernelFn Session::Impl::function_kernel(const ir::Node& n, const ir::Function& f) {
    auto body = ir::clone_graph(*f.body, nullptr);
    bind_attribute_refs(*body, n, f);
    plan_graph(*body, [&f](const std::string& domain) {
        for (const auto& o : f.opset_imports)
            if (o.domain == domain ||
                (ir::is_default_domain(o.domain) && ir::is_default_domain(domain)))
                return o.version;
        return int64_t{0};
    });
    const ir::Graph* g = body.get();
    function_bodies.push_back(std::move(body));
    return [g](ops::KernelContext& ctx) {
        std::vector<ops::RtValue> in;
        for (size_t i = 0; i < g->inputs().size(); ++i)
            in.push_back(i < ctx.num_inputs() && ctx.value(i) ? *ctx.value(i) : ops::RtValue());
        auto out = ctx.subgraphs().run(*g, std::move(in));
        for (size_t i = 0; i < out.size(); ++i) ctx.set_output(i, std::move(out[i]));
    };
}

// The op-table kernel of node n (step s), its inputs' types checked; notes the attributes it did
// not read. A node with an attribute given twice is refused (ONNX's checker refuses it).
ops::KernelFn Session::Impl::op_kernel(const ir::Node& n, const ops::OpDef& def,
                                       const NodeStep& s) {
    for (const ir::Attribute& a : n.attributes)
        if (n.find_attribute(a.name) != &a)
            throw Error(ErrorKind::kInvalidInput, "node '" + n.name + "' (" + n.op_type +
                                                      ") has attribute '" + a.name +
                                                      "' more than once");
    const ops::Attrs attrs = ops::Attrs::tracked(n);
    ops::KernelFn kernel = with_context(step_context(s), [&] { return def.make(attrs, s.opset); });
    for (std::string& name : attrs.unread())
        if (!(name == "consumed_inputs" && s.opset < 7))  // opset 1-6's legacy hint
            ignored.push_back({&n, s.opset, std::move(name)});
    return ops::with_type_groups(n.domain, n.op_type, s.opset, std::move(kernel));
}

void Session::Impl::plan_step(const ir::Graph& g, const ir::Node& n, GraphPlan& p,
                              const OpsetFn& opset) {
    NodeStep s;
    s.node = &n;
    const int64_t version = opset(n.domain);
    s.opset = version;
    ops::KernelFn kernel;
    if (const ir::Function* f = find_function(model, n)) {
        kernel = with_context("while planning function '" + f->name + "'",
                              [&] { return function_kernel(n, *f); });
    } else if (const ops::OpDef* def = ops::op_table().find(n.domain, n.op_type, version)) {
        kernel = op_kernel(n, *def, s);
    } else {
        missing.insert((n.domain.empty() ? "" : n.domain + "::") + n.op_type + " (opset " +
                       std::to_string(version) + ")");
    }
    if (wrapper && kernel && &g == model.graph.get()) kernel = wrapper(n, std::move(kernel));
    s.kernel = share_kernel(std::move(kernel));
    bool any_outer = false;
    for (const ir::Value* in : n.inputs()) {
        auto it = in ? p.slot.find(in) : p.slot.end();
        s.inputs.push_back(it == p.slot.end() ? -1 : it->second);
        any_outer = any_outer || (in && it == p.slot.end());
    }
    if (any_outer)
        for (const ir::Value* in : n.inputs())
            s.outer.push_back(in && !p.slot.count(in) ? in : nullptr);
    for (const ir::Value* out : n.outputs()) s.outputs.push_back(out ? p.slot.at(out) : -1);
    for (ir::Graph* sub : n.subgraphs()) plan_graph(*sub, opset);
    p.steps.push_back(std::move(s));
}

void Session::Impl::compute_releases(const ir::Graph& g, GraphPlan& p) {
    std::unordered_map<const ir::Node*, int> step_of;
    for (size_t i = 0; i < p.steps.size(); ++i) step_of[p.steps[i].node] = static_cast<int>(i);
    std::set<int> keep(p.output_slots.begin(), p.output_slots.end());
    for (const auto& [value, slot] : p.slot) {
        if (keep.count(slot)) continue;
        int last = -1;
        for (const ir::Use& u : value->uses())
            if (const ir::Node* top = ir::ancestor_in(g, u.node))
                last = std::max(last, step_of.at(top));
        if (value->producer() && last < 0) last = step_of.at(value->producer());  // unused output
        if (last >= 0) p.steps[static_cast<size_t>(last)].release.push_back(slot);
    }
}

void Session::Impl::plan_graph(const ir::Graph& g, const OpsetFn& opset) {
    auto p = std::make_unique<GraphPlan>();
    p->graph = &g;
    auto add_slot = [&](const ir::Value* v) {
        if (!p->slot.count(v)) p->slot[v] = p->num_slots++;
        return p->slot[v];
    };
    for (const ir::Value* v : g.inputs()) p->input_slots.push_back(add_slot(v));
    std::vector<std::pair<int, const ir::Value*>> constants;
    for (const ir::Value* v : g.initializers()) {
        constants.emplace_back(add_slot(v), v);
        const bool read = !v->uses().empty() ||
                          std::find(g.outputs().begin(), g.outputs().end(), v) != g.outputs().end();
        if (read && !v->initializer()->tensor.has_data()) stripped.insert(v->name());
    }
    for (const auto& n : g.nodes())
        for (const ir::Value* out : n->outputs())
            if (out) add_slot(out);
    p->constant_of.assign(static_cast<size_t>(p->num_slots), -1);
    for (const auto& [slot, v] : constants) {
        p->constant_of[static_cast<size_t>(slot)] = static_cast<int>(p->constants.size());
        p->constants.push_back(ops::RtValue::of(v->initializer()->tensor));
    }
    ir::TopoResult order = ir::topological_order(g);
    if (!order.acyclic()) ir::check_acyclic(g);
    for (const ir::Node* n : order.order) plan_step(g, *n, *p, opset);
    for (const ir::Value* v : g.outputs()) {
        auto it = p->slot.find(v);
        p->output_slots.push_back(it == p->slot.end() ? -1 : it->second);
    }
    compute_releases(g, *p);
    if (fuse && &g == model.graph.get()) {  // the passes look slots up in p->slot
        const int64_t opset = model.opset_version("");
        p->fused = fuse_conv_chains(g, *p, opset, &p->fused_nodes);
        int matmul_bias = 0;
        auto with_bias = fuse_matmul_bias(g, p->fused.empty() ? p->steps : p->fused, &matmul_bias);
        if (matmul_bias > 0) p->fused = std::move(with_bias), p->fused_nodes += matmul_bias;
        int transposes = 0;
        auto views = fuse_matmul_transposes(g, p->fused.empty() ? p->steps : p->fused, &transposes);
        if (transposes > 0) p->fused = std::move(views), p->fused_nodes += transposes;
        int bn_relu = 0;
        auto paired = fuse_bn_relu(g, *p, p->fused.empty() ? p->steps : p->fused, opset, &bn_relu);
        if (bn_relu > 0) p->fused = std::move(paired), p->fused_nodes += bn_relu;
        int eltwise = 0;
        auto steps =
            fuse_eltwise_chains(g, p->fused.empty() ? p->steps : p->fused, opset, &eltwise);
        if (eltwise > 0) p->fused = std::move(steps), p->fused_nodes += eltwise;
        int softmax = 0;  // after the chains, which would take its Mul as a link
        auto scaled =
            fuse_scaled_softmax(g, p->fused.empty() ? p->steps : p->fused, opset, &softmax);
        if (softmax > 0) p->fused = std::move(scaled), p->fused_nodes += softmax;
        int identities = 0;  // before the regions, which then run on through them
        auto direct = skip_identities(g, *p, p->fused.empty() ? p->steps : p->fused, &identities);
        if (identities > 0) p->fused = std::move(direct), p->fused_nodes += identities;
        auto regions =
            fuse_nchwc_regions(g, *p, p->fused.empty() ? p->steps : p->fused, &p->blocked_steps);
        if (p->blocked_steps > 0) p->fused = std::move(regions);
        int concats = 0;  // plain ones, and blocked ones inside the regions (in blocks)
        auto in_place =
            fuse_concat_in_place(g, *p, p->fused.empty() ? p->steps : p->fused, &concats);
        if (concats > 0) p->fused = std::move(in_place), p->fused_nodes += concats;
    }
    p->constant_of.resize(static_cast<size_t>(p->num_slots), -1);  // the passes' new slots
    p->slots.assign(p->slot.begin(), p->slot.end());
    std::sort(p->slots.begin(), p->slots.end(), [](const auto& a, const auto& b) {
        return std::less<const ir::Value*>()(a.first, b.first);
    });
    std::unordered_map<const ir::Value*, int>().swap(p->slot);
    plans[&g] = std::move(p);
}

void Session::Impl::run_step(const NodeStep& s, Frame& f, NodeHook* hook) {
    if (!s.kernel) {  // fused into an earlier step: only its releases are left
        for (int slot : s.release) f.slots[static_cast<size_t>(slot)] = ops::RtValue();
        return;
    }
    std::vector<const ops::RtValue*> inputs;
    inputs.reserve(s.inputs.size());
    for (size_t i = 0; i < s.inputs.size(); ++i) {
        const ir::Value* outer = i < s.outer.size() ? s.outer[i] : nullptr;
        if (s.inputs[i] >= 0)
            inputs.push_back(f.at(s.inputs[i]));
        else
            inputs.push_back(outer && f.parent ? f.parent->lookup(outer) : nullptr);
    }
    FrameRunner runner(*this, f);
    ops::KernelContext ctx(*s.node, inputs, s.outputs.size(), pool.get(), &runner);
    ops::ConcatSlice slice;
    if (s.concat_slot >= 0) {
        slice = {&f.slots[static_cast<size_t>(s.concat_slot)], s.concat_offset, s.concat_total,
                 s.concat_base >= 0 ? f.at(s.concat_base) : nullptr};
        ctx.set_concat_slice(&slice);
    }
    try {
        (*s.kernel)(ctx);
    } catch (...) {
        rethrow_as_error(step_context(s));
    }
    if (hook) hook->on_node(*s.node, inputs, ctx.outputs());
    for (size_t k = 0; k < s.outputs.size(); ++k)
        if (s.outputs[k] >= 0)
            f.slots[static_cast<size_t>(s.outputs[k])] = std::move(ctx.outputs()[k]);
    for (int slot : s.release) f.slots[static_cast<size_t>(slot)] = ops::RtValue();
}

std::vector<ops::RtValue> Session::Impl::execute(const ir::Graph& g,
                                                 std::vector<ops::RtValue> inputs,
                                                 const Frame* parent, NodeHook* hook) {
    const GraphPlan& p = *plans.at(&g);
    Frame f{&p, parent, std::vector<ops::RtValue>(static_cast<size_t>(p.num_slots)), {}};
    for (size_t i = 0; i < p.input_slots.size() && i < inputs.size(); ++i) {
        if (inputs[i].is_none()) continue;
        const auto slot = static_cast<size_t>(p.input_slots[i]);
        f.slots[slot] = std::move(inputs[i]);
        if (p.constant_of[slot] < 0) continue;  // an initializer's default, replaced
        if (f.fed.empty()) f.fed.assign(f.slots.size(), 0);
        f.fed[slot] = 1;
    }
    std::vector<ops::RtValue>().swap(inputs);  // one entry per graph input: not kept for the run
    const std::vector<NodeStep>& steps = hook || p.fused.empty() ? p.steps : p.fused;
    if (timing && !parent && &g == model.graph.get()) {
        for (const NodeStep& s : steps) {
            const auto start = std::chrono::steady_clock::now();
            run_step(s, f, hook);
            const std::chrono::duration<double, std::milli> d =
                std::chrono::steady_clock::now() - start;
            if (s.kernel) timing->push_back({s.node, d.count(), s.reorder});
        }
    } else {
        for (const NodeStep& s : steps) run_step(s, f, hook);
    }
    std::vector<ops::RtValue> out;
    for (size_t i = 0; i < p.output_slots.size(); ++i) {
        const int slot = p.output_slots[i];
        out.push_back(slot >= 0 ? *f.at(slot) : *f.lookup(g.outputs()[i]));
    }
    return out;
}

namespace {

// The error for initializers without values (at most ten named).
Error stripped_weights_error(const std::set<std::string>& names) {
    std::string list;
    size_t shown = 0;
    for (const std::string& n : names) {
        if (shown++ == 10) {
            list += "\n    ... and " + std::to_string(names.size() - 10) + " more";
            break;
        }
        list += "\n    " + n;
    }
    return Error(ErrorKind::kInvalidInput,
                 std::to_string(names.size()) +
                     " initializer(s) hold no values (weights stripped from the model, or "
                     "external data not loaded), so the model cannot run:" +
                     list);
}

}  // namespace

Session::Session(const ir::Model& model, SessionOptions options)
    : model_(model), impl_(std::make_unique<Impl>(model, options)) {
    if (!model.graph) throw Error(ErrorKind::kInvalidInput, "the model has no graph");
    impl_->plan_graph(*model.graph,
                      [&model](const std::string& d) { return model.opset_version(d); });
    if (!impl_->missing.empty()) {
        std::string list;
        for (const auto& m : impl_->missing) list += "\n    " + m;
        throw Error(ErrorKind::kUnsupported, std::to_string(impl_->missing.size()) +
                                                 " operator(s) have no reference kernel:" + list);
    }
    if (!impl_->stripped.empty()) throw stripped_weights_error(impl_->stripped);
    warn_ignored_attributes(impl_->ignored);
    release_free_heap();  // planning's temporaries (shape inference, fusion) are gone
}

Session::~Session() = default;

const std::vector<IgnoredAttribute>& Session::ignored_attributes() const {
    return impl_->ignored;
}

int Session::blocked_steps() const {
    return impl_->plans.at(model_.graph.get())->blocked_steps;
}

int Session::threads() const {
    return impl_->pool->num_threads();
}

int Session::fused_nodes() const {
    return impl_->plans.at(model_.graph.get())->fused_nodes;
}

Results Session::run_timed(const Feeds& feeds, std::vector<StepTime>& times) {
    impl_->timing = &times;
    struct Reset {
        Impl& impl;
        ~Reset() { impl.timing = nullptr; }
    } reset{*impl_};
    return run(feeds, nullptr);
}

Results Session::run(const Feeds& feeds, NodeHook* hook) {
    const ir::Graph& g = *model_.graph;
    std::vector<ops::RtValue> inputs = bind_feeds(g, feeds);
    std::vector<ops::RtValue> outs = impl_->execute(g, std::move(inputs), nullptr, hook);
    retain_heap_between_runs();  // after a first run, whose frees tuned glibc's thresholds
    Results r;
    for (size_t i = 0; i < outs.size(); ++i)
        r.emplace_back(g.outputs()[i]->name(), std::move(outs[i]));
    return r;
}

}  // namespace pg::runtime
