#include "runtime/infer_shapes.h"

#include <algorithm>

#include "base/error.h"
#include "base/float16.h"
#include "base/log.h"
#include "runtime/session.h"

namespace pg::runtime {

namespace {

std::string dims_text(const std::vector<int64_t>& dims) {
    std::string s = "[";
    for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
    return s + "]";
}

template <typename T>
void fill_as(Tensor& t, T value) {
    T* p = reinterpret_cast<T*>(t.mutable_bytes());
    std::fill(p, p + t.numel(), value);
}

// A tensor of the documented synthetic value for its dtype (see infer_shapes.h).
Tensor synthetic_tensor(DataType dt, const std::vector<int64_t>& dims) {
    Tensor t = Tensor::zeros(dt, dims);
    if (t.numel() == 0) return t;
    switch (dt) {
        case DataType::kFloat32:
            fill_as<float>(t, 0.5f);
            break;
        case DataType::kFloat64:
            fill_as<double>(t, 0.5);
            break;
        case DataType::kFloat16:
            fill_as<uint16_t>(t, float_to_half_bits(0.5f));
            break;
        case DataType::kBFloat16:
            fill_as<uint16_t>(t, float_to_bfloat16_bits(0.5f));
            break;
        case DataType::kBool:
        case DataType::kUInt8:
            fill_as<uint8_t>(t, 1);
            break;
        case DataType::kInt8:
            fill_as<int8_t>(t, 1);
            break;
        case DataType::kUInt16:
            fill_as<uint16_t>(t, 1);
            break;
        case DataType::kInt16:
            fill_as<int16_t>(t, 1);
            break;
        case DataType::kUInt32:
            fill_as<uint32_t>(t, 1);
            break;
        case DataType::kInt32:
            fill_as<int32_t>(t, 1);
            break;
        case DataType::kUInt64:
            fill_as<uint64_t>(t, 1);
            break;
        case DataType::kInt64:
            fill_as<int64_t>(t, 1);
            break;
        default:
            break;  // zeros (float8/float4, sub-byte ints, complex, strings)
    }
    return t;
}

// The dims to feed for input `in`: the user's, else the model's with dynamic dims set to 1.
std::vector<int64_t> feed_dims(const ir::Value& in,
                               const std::map<std::string, std::vector<int64_t>>& input_shapes,
                               InferShapesReport& report) {
    if (auto it = input_shapes.find(in.name()); it != input_shapes.end()) return it->second;
    const ir::TypeInfo& t = in.type();
    if (!t.is_tensor() || !t.shape)
        throw Error(ErrorKind::kUnsupported, "the shape of input '" + in.name() +
                                                 "' is unknown; give it explicitly to run the "
                                                 "model for shape inference");
    std::vector<int64_t> dims;
    for (const ir::Dim& d : *t.shape) dims.push_back(d.value.value_or(1));
    if (std::any_of(t.shape->begin(), t.shape->end(), [](const ir::Dim& d) { return !d.value; })) {
        report.defaulted_inputs.push_back(in.name());
        log_warning(
            "Input tensor: {} [shape={}] | Will generate data of shape: {}.\nIf this is "
            "incorrect, please provide a custom data loader.",
            in.name(), ir::shape_to_string(*t.shape), dims_text(dims));
    }
    return dims;
}

Feeds synthetic_feeds(const ir::Graph& g,
                      const std::map<std::string, std::vector<int64_t>>& input_shapes,
                      InferShapesReport& report) {
    Feeds feeds;
    for (const ir::Value* in : g.inputs()) {
        if (in->is_initializer()) continue;
        const DataType dt = in->type().elem_type;
        if (!in->type().is_tensor() || dt == DataType::kUndefined)
            throw Error(ErrorKind::kUnsupported, "input '" + in->name() +
                                                     "' has no tensor data type; cannot "
                                                     "generate data for it");
        std::vector<int64_t> dims = feed_dims(*in, input_shapes, report);
        report.input_shapes[in->name()] = dims;
        feeds[in->name()] = ops::RtValue::of(synthetic_tensor(dt, dims));
    }
    return feeds;
}

// Records the type of every tensor produced by a main-graph node.
class TypeRecorder : public NodeHook {
  public:
    void on_node(const ir::Node& node, const std::vector<const ops::RtValue*>&,
                 const std::vector<ops::RtValue>& outputs) override {
        for (size_t i = 0; i < outputs.size(); ++i) {
            const ir::Value* v = node.output(i);
            if (!v || !outputs[i].is_tensor()) continue;
            const Tensor& t = outputs[i].tensor();
            types[v->name()] = ir::TypeInfo::tensor(t.dtype(), ir::make_shape(t.dims()));
        }
    }
    std::map<std::string, ir::TypeInfo> types;  // by value name
};

bool is_graph_output(const ir::Graph& g, const ir::Value* v) {
    return std::find(g.outputs().begin(), g.outputs().end(), v) != g.outputs().end();
}

}  // namespace

InferShapesReport infer_shapes_by_running(
    ir::Model& m, const std::map<std::string, std::vector<int64_t>>& input_shapes) {
    if (!m.graph) throw Error(ErrorKind::kInvalidInput, "the model has no graph");
    InferShapesReport report;
    TypeRecorder recorder;
    with_context("while inferring shapes by running the model", [&] {
        Feeds feeds = synthetic_feeds(*m.graph, input_shapes, report);
        Session session(m);
        session.run(feeds, &recorder);
    });
    for (const auto& [name, type] : recorder.types) {
        ir::Value* v = m.graph->find_value(name);
        if (!v) continue;
        v->set_type(type);
        v->in_value_info = !is_graph_output(*m.graph, v);
        ++report.values_typed;
    }
    return report;
}

}  // namespace pg::runtime
