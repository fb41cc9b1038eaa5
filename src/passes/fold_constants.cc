#include "passes/fold_constants.h"

#include <algorithm>
#include <exception>
#include <set>
#include <utility>

#include "base/error.h"
#include "base/log.h"
#include "ir/graph.h"
#include "ir/model.h"
#include "ir/topo.h"
#include "ops/op_table.h"
#include "passes/cleanup.h"

namespace pg::passes {

namespace {

using FoldedNames = std::set<std::pair<const ir::Graph*, std::string>>;

// Everything one pass accumulates while walking the graphs.
struct PassState {
    const ir::Model& model;
    const FoldOptions& options;
    FoldReport report;
    FoldedNames folded;
};

bool is_graph_input(const ir::Value& v) {
    const auto& ins = v.graph()->inputs();
    return std::find(ins.begin(), ins.end(), &v) != ins.end();
}

// Constant data known now: an initializer with data that no caller can override.
bool is_constant(const ir::Value& v) {
    return v.is_initializer() && v.initializer()->tensor.has_data() && !is_graph_input(v);
}

bool all_inputs_constant(const ir::Node& n) {
    return std::all_of(n.inputs().begin(), n.inputs().end(),
                       [](const ir::Value* v) { return !v || is_constant(*v); });
}

// Ops GraphSurgeon never folds: quantization is meant to run at inference time.
bool never_folded(const ir::Node& n) {
    static const std::set<std::string> kQuantOps = {"QuantizeLinear", "DequantizeLinear",
                                                    "DynamicQuantizeLinear"};
    return !n.subgraphs().empty() ||
           (ir::is_default_domain(n.domain) && kQuantOps.count(n.op_type));
}

bool is_model_function(const ir::Model& m, const ir::Node& n) {
    return std::any_of(m.functions.begin(), m.functions.end(), [&](const ir::Function& f) {
        return f.name == n.op_type && f.domain == n.domain;
    });
}

// The dims of v when they are all known: from its data, or from its recorded type.
std::optional<std::vector<int64_t>> static_dims(const ir::Value& v) {
    if (v.is_initializer()) return v.initializer()->tensor.dims();
    if (!v.type().is_tensor() || !v.type().shape) return std::nullopt;
    std::vector<int64_t> dims;
    for (const ir::Dim& d : *v.type().shape) {
        if (!d.is_known()) return std::nullopt;
        dims.push_back(*d.value);
    }
    return dims;
}

// Shape's `start`/`end` attributes (opset 15) applied to dims, clamped like the kernel.
std::vector<int64_t> shape_slice(const std::vector<int64_t>& dims, const ir::Node& n) {
    const ops::Attrs attrs(n);
    const auto rank = static_cast<int64_t>(dims.size());
    auto clamp = [rank](int64_t i) { return std::clamp<int64_t>(i < 0 ? i + rank : i, 0, rank); };
    const int64_t start = clamp(attrs.get_int("start", 0)), end = clamp(attrs.get_int("end", rank));
    if (end <= start) return {};
    return std::vector<int64_t>(dims.begin() + start, dims.begin() + end);
}

// Shape or Size of an input with a static shape, computed from the type (no kernel needed).
std::optional<Tensor> try_fold_static_shape(const ir::Node& n) {
    if (!ir::is_default_domain(n.domain) || n.inputs().size() != 1 || !n.input(0)) return {};
    if (n.op_type != "Shape" && n.op_type != "Size") return {};
    const auto dims = static_dims(*n.input(0));
    if (!dims) return {};
    if (n.op_type == "Size") {
        int64_t size = 1;
        for (int64_t d : *dims) size *= d;
        return Tensor::from_values(DataType::kInt64, {}, std::vector<int64_t>{size});
    }
    const std::vector<int64_t> sliced = shape_slice(*dims, n);
    return Tensor::from_values(DataType::kInt64, {static_cast<int64_t>(sliced.size())}, sliced);
}

// The kernel of n, or nullptr when it has none or must not be folded (random ops).
const ops::OpDef* foldable_def(const ir::Model& m, const ir::Node& n) {
    if (is_model_function(m, n)) return nullptr;
    const ops::OpDef* def = ops::op_table().find(n.domain, n.op_type, m.opset_version(n.domain));
    if (!def || def->contract == ops::NumericContract::kRandom) return nullptr;
    return def;
}

// Runs n's kernel on its constant inputs; one entry per output (nullopt: not a tensor).
std::vector<std::optional<Tensor>> evaluate(const ir::Model& m, const ir::Node& n,
                                            const ops::OpDef& def) {
    std::vector<ops::RtValue> values;
    values.reserve(n.inputs().size());
    for (const ir::Value* v : n.inputs())
        values.push_back(v ? ops::RtValue::of(v->initializer()->tensor) : ops::RtValue());
    std::vector<const ops::RtValue*> inputs;
    for (size_t i = 0; i < values.size(); ++i) inputs.push_back(n.input(i) ? &values[i] : nullptr);
    ops::KernelFn kernel = def.make(ops::Attrs(n), m.opset_version(n.domain));
    ops::KernelContext ctx(n, std::move(inputs), n.outputs().size(), nullptr, nullptr);
    kernel(ctx);
    std::vector<std::optional<Tensor>> out;
    for (auto& v : ctx.outputs())
        out.push_back(v.is_tensor() ? std::optional<Tensor>(std::move(v.tensor())) : std::nullopt);
    return out;
}

// Turns output i of n into an initializer holding t (unless it exceeds the size threshold).
bool replace_output(ir::Node& n, size_t i, Tensor t, PassState& s) {
    ir::Value* v = n.output(i);
    if (s.options.size_threshold && t.nbytes() > *s.options.size_threshold) {
        log_verbose("Not folding tensor '{}': {} bytes exceed the size threshold ({} bytes)",
                    v->name(), t.nbytes(), *s.options.size_threshold);
        return false;
    }
    ir::Graph& g = *n.graph();
    g.detach_node_output(&n, i);
    v->set_type(ir::TypeInfo::tensor(t.dtype(), ir::make_shape(t.dims())));
    v->in_value_info = false;
    ir::NamedTensor data;
    data.name = v->name();
    data.tensor = std::move(t);
    g.set_initializer(v, std::move(data));
    s.folded.insert({&g, v->name()});
    ++s.report.outputs_folded;
    return true;
}

void replace_outputs(ir::Node& n, std::vector<std::optional<Tensor>> values, PassState& s) {
    size_t folded = 0, wanted = 0;
    for (size_t i = 0; i < n.outputs().size(); ++i) {
        if (!n.output(i)) continue;
        ++wanted;
        if (i < values.size() && values[i] && replace_output(n, i, std::move(*values[i]), s))
            ++folded;
    }
    if (wanted > 0 && folded == wanted) ++s.report.nodes_folded;
    if (folded > 0)
        log_verbose("Folded {} of {} output(s) of node {}", folded, wanted, n.describe());
}

void record_failure(const ir::Node& n, const std::string& reason, PassState& s) {
    log_verbose("Could not fold node {}: {}", n.describe(), reason);
    s.report.failures.push_back(FoldFailure{n.describe(), reason});
}

// Folds n if it can be folded; failures are recorded, never thrown.
void try_fold(ir::Node& n, PassState& s) {
    if (never_folded(n)) return;
    try {
        if (s.options.fold_shapes)
            if (auto t = try_fold_static_shape(n)) {
                std::vector<std::optional<Tensor>> values;
                values.push_back(std::move(*t));
                return replace_outputs(n, std::move(values), s);
            }
        if (!all_inputs_constant(n)) return;
        const ops::OpDef* def = foldable_def(s.model, n);
        if (!def) return log_verbose("Not folding node {}: no reference kernel", n.describe());
        replace_outputs(n, evaluate(s.model, n, *def), s);
    } catch (const Error& e) {
        record_failure(n, e.what(), s);
    } catch (const std::exception& e) {
        record_failure(n, e.what(), s);
    }
}

// Folds g in topological order, then the subgraphs of the nodes that remain.
void fold_graph(ir::Graph& g, PassState& s) {
    const ir::TopoResult order = ir::topological_order(g);
    if (!order.acyclic()) ir::check_acyclic(g);
    for (ir::Node* n : order.order) try_fold(*n, s);
    for (const auto& n : g.nodes())
        for (ir::Graph* sub : n->subgraphs()) fold_graph(*sub, s);
}

// Bytes of the folded values that are still initializers, in g and its subgraphs.
uint64_t surviving_bytes(const ir::Graph& g, const FoldedNames& folded) {
    uint64_t total = 0;
    for (ir::Value* v : g.initializers())
        if (folded.count({&g, v->name()})) total += v->initializer()->tensor.nbytes();
    for (const auto& n : g.nodes())
        for (ir::Graph* sub : n->subgraphs()) total += surviving_bytes(*sub, folded);
    return total;
}

void merge(FoldReport& into, const FoldReport& pass) {
    into.passes += pass.passes;
    into.nodes_folded += pass.nodes_folded;
    into.outputs_folded += pass.outputs_folded;
    into.bytes_folded += pass.bytes_folded;
    into.nodes_removed += pass.nodes_removed;
    for (const FoldFailure& f : pass.failures) {
        auto same = [&](const FoldFailure& o) { return o.node == f.node; };
        if (std::none_of(into.failures.begin(), into.failures.end(), same))
            into.failures.push_back(f);
    }
}

}  // namespace

size_t count_nodes(const ir::Graph& g) {
    size_t total = g.num_nodes();
    for (const auto& n : g.nodes())
        for (ir::Graph* sub : n->subgraphs()) total += count_nodes(*sub);
    return total;
}

FoldReport fold_constants_pass(ir::Model& m, const FoldOptions& options) {
    if (!m.graph) throw Error(ErrorKind::kInvalidInput, "the model has no graph");
    PassState s{m, options, {}, {}};
    fold_graph(*m.graph, s);
    s.report.nodes_removed = cleanup(*m.graph).nodes_removed;
    s.report.bytes_folded = surviving_bytes(*m.graph, s.folded);
    s.report.passes = 1;
    return s.report;
}

FoldReport fold_constants(ir::Model& m, const FoldOptions& options) {
    FoldReport total;
    size_t before = 0, after = count_nodes(*m.graph);
    do {
        if (options.num_passes && total.passes >= *options.num_passes) break;
        before = after;
        merge(total, fold_constants_pass(m, options));
        after = count_nodes(*m.graph);
    } while (before != after);
    return total;
}

}  // namespace pg::passes
