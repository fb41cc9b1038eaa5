#include "debug/qdq_model.h"

#include <cfloat>
#include <cmath>
#include <set>

#include "base/error.h"
#include "ir/graph.h"

namespace pg::debug {

namespace {

bool is_constant(const ir::Value* v) {
    return v && (v->is_initializer() || (v->producer() && v->producer()->op_type == "Constant"));
}

// The data of an initializer or a Constant's "value", or nullptr.
const Tensor* constant_data(const ir::Value* v) {
    if (v->is_initializer()) return &v->initializer()->tensor;
    const ir::Attribute* a = v->producer()->find_attribute("value");
    return a && a->tensors.size() == 1 ? &a->tensors[0].tensor : nullptr;
}

DataType dtype_of(const ir::Value* v, const std::map<std::string, DataType>& dtypes) {
    if (v->is_initializer()) return v->initializer()->tensor.dtype();
    if (v->has_type() && v->type().is_tensor() && v->type().elem_type != DataType::kUndefined)
        return v->type().elem_type;
    auto it = dtypes.find(v->name());
    return it == dtypes.end() ? DataType::kUndefined : it->second;
}

std::string fresh_name(const ir::Graph& g, const std::string& base) {
    std::string name = base;
    for (int i = 1; g.lookup(name); ++i) name = base + "_" + std::to_string(i);
    return name;
}

// A usable QuantizeLinear scale: the emulator maps everything to 0 for a scale <= 0 (an
// all-zero tensor at calibration); the smallest normal float comes closest.
float usable_scale(float s) {
    return std::isfinite(s) && s > 0 ? s : FLT_MIN;
}

struct PairSpec {
    std::string key;  // one pair per key
    Tensor scale, zero_point;
    int64_t axis = -1;  // per-channel axis, -1 = per tensor
    bool saturate = true;
};

class Inserter {
  public:
    Inserter(ir::Graph& g, QdqReport& r) : g_(g), report_(r) {}
    // Rewires input `slot` of `consumer` to the pair's dequantized value (created once, before
    // the first consumer in graph order).
    void rewire(ir::Node* consumer, size_t slot, PairSpec spec) {
        ir::Value* v = consumer->input(slot);
        auto it = pairs_.find(spec.key);
        if (it == pairs_.end()) it = pairs_.emplace(spec.key, make_pair(consumer, v, spec)).first;
        consumer->set_input(slot, it->second);
    }

  private:
    ir::Value* constant(const std::string& name, const Tensor& t) {
        ir::NamedTensor nt;
        nt.name = fresh_name(g_, name);
        nt.tensor = t;
        return g_.add_initializer(std::move(nt));
    }
    ir::Value* make_pair(ir::Node* before, ir::Value* v, PairSpec& spec) {
        const std::string base = v->name();
        ir::Value* scale = constant(base + "_qdq_scale", spec.scale);
        ir::Value* zp = constant(base + "_qdq_zero_point", spec.zero_point);
        ir::Node* q = g_.insert_node_before(before, "QuantizeLinear", {v, scale, zp},
                                            {fresh_name(g_, base + "_quantized")});
        q->name = fresh_name(g_, base + "_QuantizeLinear");
        ir::Node* dq = g_.insert_node_before(before, "DequantizeLinear", {q->output(0), scale, zp},
                                             {fresh_name(g_, base + "_dequantized")});
        dq->name = fresh_name(g_, base + "_DequantizeLinear");
        if (spec.axis >= 0) {
            q->attributes.push_back(ir::Attribute::make_int("axis", spec.axis));
            dq->attributes.push_back(ir::Attribute::make_int("axis", spec.axis));
        }
        if (!spec.saturate) q->attributes.push_back(ir::Attribute::make_int("saturate", 0));
        ++report_.pairs;
        return dq->output(0);
    }
    ir::Graph& g_;
    QdqReport& report_;
    std::map<std::string, ir::Value*> pairs_;
};

Tensor f32_scalar(float x) {
    return Tensor::from_values<float>(DataType::kFloat32, {}, {x});
}

// The INT8 pair for input `slot` of `n` (value `v`, float32), as the emulator quantizes it.
PairSpec int8_pair(const ir::Node& n, size_t slot, const ir::Value* v,
                   const emu::ScaleTable& scales) {
    PairSpec s;
    if (!is_constant(v)) {
        auto it = scales.find(v->name());
        if (it == scales.end())
            throw Error(ErrorKind::kInvalidInput, "INT8 Q/DQ: no calibration scale for '" +
                                                      v->name() + "', an input of " + n.describe());
        s.key = v->name();
        s.scale = f32_scalar(usable_scale(it->second));
        s.zero_point = Tensor::from_values<int8_t>(DataType::kInt8, {}, {0});
        return s;
    }
    const Tensor* w = constant_data(v);
    if (!w || w->dtype() != DataType::kFloat32)
        throw Error(ErrorKind::kUnsupported, "INT8 Q/DQ: cannot read the float32 weights '" +
                                                 v->name() + "' of " + n.describe());
    const int axis = emu::int8_weight_axis(n, slot, w->dims().size());
    if (axis < 0) {
        double amax = 0;
        for (uint64_t i = 0; i < w->numel(); ++i) {
            const double x = std::fabs(w->element_as_double(i));
            if (std::isfinite(x)) amax = std::max(amax, x);
        }
        s.key = v->name() + "|tensor";
        s.scale = f32_scalar(usable_scale(emu::int8_scale(amax)));
        s.zero_point = Tensor::from_values<int8_t>(DataType::kInt8, {}, {0});
        return s;
    }
    std::vector<float> ch = emu::int8_channel_scales(*w, static_cast<size_t>(axis));
    for (float& c : ch) c = usable_scale(c);
    const auto c = static_cast<int64_t>(ch.size());
    s.key = v->name() + "|axis" + std::to_string(axis);
    s.axis = axis;
    s.scale = Tensor::from_values<float>(DataType::kFloat32, {c}, ch);
    s.zero_point =
        Tensor::from_values<int8_t>(DataType::kInt8, {c}, std::vector<int8_t>(ch.size(), 0));
    return s;
}

PairSpec fp8_pair(const ir::Value* v, emu::Precision p) {
    PairSpec s;
    s.key = v->name();
    s.scale = f32_scalar(1.0f);
    const DataType t =
        p == emu::Precision::kFP8E4M3 ? DataType::kFloat8E4M3FN : DataType::kFloat8E5M2;
    s.zero_point = Tensor::from_bytes(t, {}, std::string(1, '\0'));
    s.saturate = p == emu::Precision::kFP8E4M3;  // e5m2 overflows to inf in the emulator
    return s;
}

}  // namespace

void require_qdq_opset(const ir::Model& m, emu::Precision p) {
    const int64_t need = p == emu::Precision::kINT8 ? 13 : 19;
    const int64_t have = m.opset_version("");
    if (have < need)
        throw Error(ErrorKind::kUnsupported,
                    std::string("-o / --check with ") + emu::precision_name(p) +
                        ": the Q/DQ model needs opset >= " + std::to_string(need) +
                        " (the model imports opset " + std::to_string(have) +
                        "); upgrade the model's opset first");
}

QdqReport insert_qdq(ir::Model& model, const std::vector<std::string>& quantized, emu::Precision p,
                     const std::map<std::string, DataType>& dtypes, const emu::ScaleTable& scales) {
    const bool int8 = p == emu::Precision::kINT8;
    if (!int8 && p != emu::Precision::kFP8E4M3 && p != emu::Precision::kFP8E5M2)
        throw Error(ErrorKind::kUnsupported,
                    std::string("Q/DQ export: no Q/DQ form for ") + emu::precision_name(p));
    require_qdq_opset(model, p);
    ir::Graph& g = *model.graph;
    std::set<std::string> wanted(quantized.begin(), quantized.end());
    std::set<const ir::Node*> qnodes;
    std::vector<ir::Node*> order;
    for (const auto& n : g.nodes()) {
        order.push_back(n.get());
        if (wanted.erase(n->name)) qnodes.insert(n.get());
    }
    if (!wanted.empty())
        throw Error(ErrorKind::kInvalidInput,
                    "Q/DQ export: no node named '" + *wanted.begin() + "'");
    QdqReport report;
    report.nodes = qnodes.size();
    Inserter ins(g, report);
    for (ir::Node* n : order) {
        const bool q = qnodes.count(n) > 0;
        for (size_t slot = 0; slot < n->inputs().size(); ++slot) {
            const ir::Value* v = n->input(slot);
            if (!v || dtype_of(v, dtypes) != DataType::kFloat32) continue;
            if (int8) {
                if (q && emu::int8_quantizes_input(*n, slot))
                    ins.rewire(n, slot, int8_pair(*n, slot, v, scales));
            } else if (q || (v->producer() && qnodes.count(v->producer()))) {
                ins.rewire(n, slot, fp8_pair(v, p));
            }
        }
    }
    return report;
}

}  // namespace pg::debug
