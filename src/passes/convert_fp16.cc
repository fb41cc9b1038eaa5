#include "passes/convert_fp16.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>
#include <unordered_set>

#include "base/error.h"
#include "base/float16.h"
#include "ir/model.h"
#include "passes/convert_fp16_rules.h"
#include "passes/toposort.h"

namespace pg::passes {

namespace {

constexpr DataType kF32 = DataType::kFloat32;

// Largest finite value of the 16-bit format.
float format_max(DataType low) {
    return low == DataType::kFloat16 ? 65504.0f : bfloat16_bits_to_float(0x7F7F);
}

// float32 -> 16-bit tensor, clamping finite values beyond the format's range.
Tensor to_low(const Tensor& t, DataType low, ConvertFp16Report& r) {
    if (!t.has_data()) return Tensor::placeholder(low, t.dims());
    Tensor out = Tensor::zeros(low, t.dims());
    auto* dst = reinterpret_cast<uint16_t*>(out.mutable_bytes());
    const float* src = t.data<float>();
    const float maxv = format_max(low);
    for (uint64_t i = 0; i < t.numel(); ++i) {
        float x = src[i];
        if (std::isfinite(x) && std::fabs(x) > maxv) {
            x = std::copysign(maxv, x);
            ++r.clamped;
        }
        const uint16_t b =
            low == DataType::kFloat16 ? float_to_half_bits(x) : float_to_bfloat16_bits(x);
        if (x != 0.0f && (b & 0x7FFF) == 0) ++r.flushed;
        dst[i] = b;
    }
    return out;
}

class Converter {
  public:
    Converter(ir::Model& m, const ConvertFp16Options& o) : m_(m), o_(o), low_(o.target) {}

    ConvertFp16Report run();

  private:
    bool is_f32(const ir::Value* v) const {
        auto it = orig_.find(v);
        return v && it != orig_.end() && it->second == kF32;
    }
    DataType home(const ir::Value* v) const {
        auto it = home_.find(v);
        return it == home_.end() ? kF32 : it->second;
    }
    bool graph_is_low(const ir::Graph& g) const {
        return !g.owner_node() || !blocked_.count(g.owner_node());
    }
    DataType output_requirement(const ir::Graph& g) const {
        if (!g.parent() && o_.keep_io_types) return kF32;
        return graph_is_low(g) ? low_ : kF32;
    }

    bool is_blocked_op(const ir::Node& n) const;
    void mark_blocked(const ir::Graph& g, bool inside_blocked);
    std::optional<DataType> required(const ir::Node& n, size_t slot);
    bool is_free_source(const ir::Value& v) const;
    bool wants_low(const ir::Value& v);
    DataType decide_home(const ir::Value& v);
    void decide_homes(const ir::Graph& g);
    void convert_value(ir::Value& v);
    void convert_node_attributes(ir::Node& n);
    void convert_graph(ir::Graph& g);
    ir::Value* cast_of(ir::Graph& g, ir::Value* v, DataType to);
    std::string unique_node_name(const std::string& base);
    void fix_main_output(ir::Graph& g, size_t i, DataType to);
    void insert_casts(ir::Graph& g);

    ir::Model& m_;
    const ConvertFp16Options& o_;
    DataType low_;
    fp16::DtypeMap orig_;
    std::unordered_map<const ir::Value*, DataType> home_;
    std::unordered_set<const ir::Node*> blocked_;
    std::set<std::string> op_block_, node_block_, node_names_, seen_block_names_;
    std::set<std::string> untyped_;
    std::map<std::tuple<const ir::Graph*, const ir::Value*, DataType>, ir::Value*> casts_;
    std::unordered_map<const ir::Value*, ir::Value*> output_casts_;  // main-graph outputs
    ConvertFp16Report r_;
};

bool Converter::is_blocked_op(const ir::Node& n) const {
    if (op_block_.count(n.op_type) || fp16::must_stay_float32(n)) return true;
    if (n.op_type == "Constant" && n.find_attribute("sparse_value")) return true;
    for (const auto& f : m_.functions)  // model-local functions keep their float32 bodies
        if (f.name == n.op_type && f.domain == n.domain) return true;
    return false;
}

void Converter::mark_blocked(const ir::Graph& g, bool inside_blocked) {
    for (const auto& n : g.nodes()) {
        node_names_.insert(n->name);
        const bool by_name = node_block_.count(n->name) > 0;
        if (by_name) seen_block_names_.insert(n->name);
        const bool b = inside_blocked || by_name || is_blocked_op(*n);
        if (b) {
            blocked_.insert(n.get());
            ++r_.nodes_blocked;
        }
        for (ir::Graph* sub : n->subgraphs()) mark_blocked(*sub, b);
    }
}

// The type input `slot` of `n` must have, or nullopt when any type will do.
std::optional<DataType> Converter::required(const ir::Node& n, size_t slot) {
    const ir::Value* v = n.input(slot);
    const fp16::SlotKind kind = fp16::input_slot_kind(n, slot);
    if (!v || kind == fp16::SlotKind::kAny) return std::nullopt;
    const bool wants_f32 = blocked_.count(&n) || kind == fp16::SlotKind::kFixed32;
    if (!is_f32(v)) {
        if (wants_f32 && orig_[v] == DataType::kUndefined) untyped_.insert(v->name());
        return std::nullopt;
    }
    return wants_f32 ? kF32 : low_;
}

// Initializers, Constant nodes and Cast(to=FLOAT) take the type their consumers want.
bool Converter::is_free_source(const ir::Value& v) const {
    const ir::Node* p = v.producer();
    if (!p) return v.is_initializer();
    if (blocked_.count(p) || !ir::is_default_domain(p->domain)) return false;
    if (p->op_type == "Constant") return true;
    const ir::Attribute* to = p->find_attribute("to");
    return p->op_type == "Cast" && to && to->i == static_cast<int64_t>(kF32);
}

bool Converter::wants_low(const ir::Value& v) {
    const ir::Graph& g = *v.graph();
    const bool is_output = std::count(g.outputs().begin(), g.outputs().end(), &v) > 0;
    if (is_output && output_requirement(g) == low_) return true;
    for (const ir::Use& u : v.uses())
        if (required(*u.node, static_cast<size_t>(u.index)) == low_) return true;
    return v.uses().empty() && !is_output;
}

DataType Converter::decide_home(const ir::Value& v) {
    const ir::Graph& g = *v.graph();
    const bool is_input = std::count(g.inputs().begin(), g.inputs().end(), &v) > 0;
    if (is_input)
        return g.parent() ? (graph_is_low(g) ? low_ : kF32) : (o_.keep_io_types ? kF32 : low_);
    if (is_free_source(v)) return wants_low(v) ? low_ : kF32;
    const ir::Node* p = v.producer();
    if (!p || blocked_.count(p) || fp16::output_fixed_float32(*p, v.producer_index())) return kF32;
    return low_;
}

void Converter::decide_homes(const ir::Graph& g) {
    for (const auto& v : g.values())
        if (is_f32(v.get())) home_[v.get()] = decide_home(*v);
    for (const auto& n : g.nodes())
        for (ir::Graph* sub : n->subgraphs()) decide_homes(*sub);
}

// Converts a type's float32 elements (tensor, or inside sequence/optional/map types).
bool lower_type(ir::TypeInfo& t, DataType low) {
    bool changed = false;
    if ((t.kind == ir::TypeKind::kTensor || t.kind == ir::TypeKind::kSparseTensor) &&
        t.elem_type == kF32) {
        t.elem_type = low;
        changed = true;
    }
    if (t.kind != ir::TypeKind::kMap)
        for (auto& c : t.children) changed = lower_type(c, low) || changed;
    return changed;
}

void Converter::convert_value(ir::Value& v) {
    const bool lower = is_f32(&v) ? home(&v) == low_
                                  : v.has_type() && !v.type().is_tensor() && v.producer() &&
                                        !blocked_.count(v.producer());
    if (!lower) return;
    if (v.has_type()) {
        ir::TypeInfo t = v.type();
        if (lower_type(t, low_)) {
            v.set_type(std::move(t));
            ++r_.values;
        }
    }
    ir::NamedTensor* nt = v.mutable_initializer();
    if (nt && nt->tensor.dtype() == kF32) {
        nt->tensor = to_low(nt->tensor, low_, r_);
        ++r_.initializers;
    }
}

void Converter::convert_node_attributes(ir::Node& n) {
    if (blocked_.count(&n) || !ir::is_default_domain(n.domain) || !n.output(0)) return;
    if (!is_f32(n.output(0)) || home(n.output(0)) != low_) return;
    for (auto& a : n.attributes) {
        const bool dtype_attr = (n.op_type == "Cast" && a.name == "to") ||
                                (n.op_type == "EyeLike" && a.name == "dtype");
        if (dtype_attr && a.i == static_cast<int64_t>(kF32)) {
            a.i = static_cast<int64_t>(low_);
            ++r_.attributes;
        } else if (a.name == "value" && !a.tensors.empty() && a.tensors[0].tensor.dtype() == kF32) {
            a.tensors[0].tensor = to_low(a.tensors[0].tensor, low_, r_);
            ++r_.attributes;
        } else if (n.op_type == "Constant" &&
                   (a.name == "value_float" || a.name == "value_floats")) {
            const bool scalar = a.name == "value_float";
            const std::vector<float> v = scalar ? std::vector<float>{a.f} : a.floats;
            const std::vector<int64_t> dims =
                scalar ? std::vector<int64_t>{}
                       : std::vector<int64_t>{static_cast<int64_t>(v.size())};
            a = ir::Attribute::make_tensor("value",
                                           to_low(Tensor::from_values(kF32, dims, v), low_, r_));
            ++r_.attributes;
        }
    }
    if (n.op_type == "ConstantOfShape" && !n.find_attribute("value")) {
        n.attributes.push_back(ir::Attribute::make_tensor("value", Tensor::zeros(low_, {1})));
        ++r_.attributes;
    }
}

void Converter::convert_graph(ir::Graph& g) {
    for (const auto& v : g.values()) convert_value(*v);
    for (const auto& n : g.nodes()) {
        convert_node_attributes(*n);
        for (ir::Graph* sub : n->subgraphs()) convert_graph(*sub);
    }
}

std::string Converter::unique_node_name(const std::string& base) {
    std::string name = base;
    for (int k = 1; node_names_.count(name); ++k) name = base + "_" + std::to_string(k);
    node_names_.insert(name);
    return name;
}

// A value holding `v` cast to `to`, readable in `g`; one Cast per (graph, value, type).
ir::Value* Converter::cast_of(ir::Graph& g, ir::Value* v, DataType to) {
    const auto key = std::make_tuple(&g, static_cast<const ir::Value*>(v), to);
    if (auto it = casts_.find(key); it != casts_.end()) return it->second;
    std::string base = v->name() + "_" + dtype_name(to);
    std::string node_base = base;
    const auto& ins = g.inputs();
    if (auto it = std::find(ins.begin(), ins.end(), v); !g.parent() && it != ins.end()) {
        const std::string i = std::to_string(it - ins.begin());
        base = "graph_input_cast_" + i;  // Polygraphy's names
        node_base = "graph_input_cast" + i;
    }
    ir::Node* c = g.add_node("Cast", {v}, {g.unique_name(base)});
    c->name = unique_node_name(node_base);
    c->attributes.push_back(ir::Attribute::make_int("to", static_cast<int64_t>(to)));
    ir::Value* out = c->output(0);
    if (v->has_type() && v->type().is_tensor()) {
        out->set_type(ir::TypeInfo::tensor(to, v->type().shape));
        out->in_value_info = true;
    }
    orig_[out] = kF32;
    home_[out] = to;
    ++r_.casts_inserted;
    casts_[key] = out;
    return out;
}

// Main-graph output i keeps its name: the value is renamed and a Cast produces the old name.
void Converter::fix_main_output(ir::Graph& g, size_t i, DataType to) {
    ir::Value* v = g.outputs()[i];
    const std::string name = v->name();
    const ir::TypeInfo declared = v->type();
    g.rename_value(v, g.unique_name("graph_output_cast_" + std::to_string(i)));
    if (v->has_type()) {
        ir::TypeInfo t = declared;
        if (t.is_tensor()) t.elem_type = home(v);
        v->set_type(t);
        v->in_value_info = true;
    }
    ir::Node* c = g.add_node("Cast", {v}, {name});
    c->name = unique_node_name("graph_output_cast" + std::to_string(i));
    c->attributes.push_back(ir::Attribute::make_int("to", static_cast<int64_t>(to)));
    ir::Value* out = c->output(0);
    ir::TypeInfo t =
        declared.kind != ir::TypeKind::kNone ? declared : ir::TypeInfo::tensor(to, std::nullopt);
    t.kind = ir::TypeKind::kTensor;
    t.elem_type = to;
    out->set_type(t);
    orig_[out] = kF32;
    home_[out] = to;
    std::vector<ir::Value*> outs = g.outputs();
    outs[i] = out;
    g.set_outputs(outs);
    output_casts_[v] = out;
    ++r_.casts_inserted;
}

void Converter::insert_casts(ir::Graph& g) {
    std::vector<ir::Node*> nodes;
    for (const auto& n : g.nodes()) nodes.push_back(n.get());
    for (ir::Node* n : nodes) {
        for (size_t s = 0; s < n->inputs().size(); ++s) {
            const std::optional<DataType> want = required(*n, s);
            if (want && home(n->input(s)) != *want) n->set_input(s, cast_of(g, n->input(s), *want));
        }
        for (ir::Graph* sub : n->subgraphs()) insert_casts(*sub);
    }
    const DataType want = output_requirement(g);
    for (size_t i = 0; i < g.outputs().size(); ++i) {
        ir::Value* v = g.outputs()[i];
        if (!is_f32(v) || home(v) == want) continue;
        std::vector<ir::Value*> outs = g.outputs();
        if (g.parent() || v->graph() != &g) {
            outs[i] = cast_of(g, v, want);  // subgraph outputs are matched by position
        } else if (auto it = output_casts_.find(v); it != output_casts_.end()) {
            outs[i] = it->second;  // the same value listed twice
        } else {
            fix_main_output(g, i, want);
            continue;
        }
        g.set_outputs(outs);
    }
}

ConvertFp16Report Converter::run() {
    if (low_ != DataType::kFloat16 && low_ != DataType::kBFloat16)
        throw Error(
            ErrorKind::kUsage,
            "FP16 conversion: the target must be float16 or bfloat16, not " + dtype_name(low_));
    if (!m_.graph) return r_;
    ir::Graph& g = *m_.graph;
    const auto& ops = o_.op_block_list ? *o_.op_block_list : default_fp16_op_block_list();
    op_block_.insert(ops.begin(), ops.end());
    node_block_.insert(o_.node_block_list.begin(), o_.node_block_list.end());
    toposort(g);
    fp16::infer_dtypes(g, orig_);
    mark_blocked(g, false);
    for (const auto& name : node_block_)
        if (!seen_block_names_.count(name)) r_.unknown_node_names.push_back(name);
    decide_homes(g);
    convert_graph(g);
    insert_casts(g);
    toposort(g);
    r_.untyped_fixed_inputs.assign(untyped_.begin(), untyped_.end());
    return r_;
}

}  // namespace

const std::vector<std::string>& default_fp16_op_block_list() {
    static const std::vector<std::string> kList = {"ArrayFeatureExtractor",
                                                   "Binarizer",
                                                   "CastMap",
                                                   "CategoryMapper",
                                                   "DictVectorizer",
                                                   "FeatureVectorizer",
                                                   "Imputer",
                                                   "LabelEncoder",
                                                   "LinearClassifier",
                                                   "LinearRegressor",
                                                   "Normalizer",
                                                   "OneHotEncoder",
                                                   "SVMClassifier",
                                                   "SVMRegressor",
                                                   "Scaler",
                                                   "TreeEnsembleClassifier",
                                                   "TreeEnsembleRegressor",
                                                   "ZipMap",
                                                   "NonMaxSuppression",
                                                   "TopK",
                                                   "RoiAlign",
                                                   "Resize",
                                                   "Range",
                                                   "CumSum",
                                                   "Min",
                                                   "Max",
                                                   "Upsample"};
    return kList;
}

ConvertFp16Report convert_float_to_fp16(ir::Model& m, const ConvertFp16Options& options) {
    return Converter(m, options).run();
}

}  // namespace pg::passes
