#include "support/story_model.h"

#include <vector>

#include "ir/builder.h"
#include "onnx/model_io.h"

namespace pg::test {

std::string story_model(const std::string& dir, float c) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{1, 1, 4, 4});
    std::vector<float> eye(16, 0.0f);
    for (int i = 0; i < 4; ++i) eye[static_cast<size_t>(i * 5)] = 1.0f;
    ir::Value* I = b.constant_f32("eye", {4, 4}, eye);
    ir::Value* k = b.constant_f32("c", {}, {c});
    ir::Value* v = b.op("MatMul", {x, I}, {}, "MatMul_0");
    v = b.op("Add", {v, k}, {}, "Add");
    v = b.op("Sub", {v, k}, {}, "Sub");
    v = b.op("MatMul", {v, I}, {}, "MatMul_1");
    b.output(v, DataType::kFloat32, {1, 1, 4, 4});
    onnx::save_model(*m, dir + "/story.onnx");
    return dir + "/story.onnx";
}

}  // namespace pg::test
