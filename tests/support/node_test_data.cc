#include "support/node_test_data.h"

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

}  // namespace pg::test
