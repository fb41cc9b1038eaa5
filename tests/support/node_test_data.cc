#include "support/node_test_data.h"

#include <cmath>
#include <filesystem>

namespace pg::test {

std::string pb_hint_for(const ir::Value* v) {
    if (!v || !v->has_type()) return "tensor";
    if (v->type().kind == ir::TypeKind::kSequence) return "sequence";
    if (v->type().kind == ir::TypeKind::kOptional) return "optional";
    return "tensor";
}

ops::RtValue to_rt_value(const onnx::StoredValue& v) {
    if (v.kind == onnx::StoredKind::kSequence) return ops::RtValue::of_sequence(v.sequence);
    if (v.kind == onnx::StoredKind::kNone) return ops::RtValue();
    return ops::RtValue::of(v.tensor);
}

ops::RtValue read_node_test_input(const std::string& path, const ir::Value* v) {
    return to_rt_value(onnx::read_value_pb(path, pb_hint_for(v)));
}

std::string values_differ(const Tensor& expected, const Tensor& actual) {
    if (expected.dims() != actual.dims()) return "shape differs";
    if (expected.is_string() || actual.is_string()) return "";
    for (uint64_t i = 0; i < expected.numel(); ++i) {
        const double e = expected.element_as_double(i), a = actual.element_as_double(i);
        if ((std::isnan(e) && std::isnan(a)) || e == a) continue;
        if (!(std::fabs(a - e) <= 1e-5 + 1e-3 * std::fabs(e)))
            return "element " + std::to_string(i) + ": " + std::to_string(a) + ", expected " +
                   std::to_string(e);
    }
    return "";
}

std::string outputs_differ(const ir::Graph& g, const std::string& data,
                           const std::vector<std::pair<std::string, const Tensor*>>& outputs) {
    for (size_t k = 0; k < outputs.size() && k < g.outputs().size(); ++k) {
        const std::filesystem::path f =
            std::filesystem::path(data) / ("output_" + std::to_string(k) + ".pb");
        if (!std::filesystem::exists(f) || !outputs[k].second) continue;
        const onnx::StoredValue e = onnx::read_value_pb(f.string());
        if (e.kind != onnx::StoredKind::kTensor ||
            e.tensor.dtype() != g.outputs()[k]->type().elem_type)
            continue;
        if (const std::string d = values_differ(e.tensor, *outputs[k].second); !d.empty())
            return "output '" + outputs[k].first + "' " + d;
    }
    return "";
}

}  // namespace pg::test
