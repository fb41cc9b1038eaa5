// debug/qdq_model.h: where the INT8 / FP8 Q/DQ pairs go and what they hold, on
// x -> MatMul_a(W) -> Relu -> MatMul_b(W) built here.
#include <gtest/gtest.h>

#include "base/error.h"
#include "debug/qdq_model.h"
#include "ir/builder.h"

namespace pg::debug {
namespace {

std::unique_ptr<ir::Model> two_matmuls(int64_t opset) {
    auto m = ir::new_model(opset);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{2, 3});
    ir::Value* w = b.constant_f32("W", {3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, -9});
    ir::Value* v = b.op("MatMul", {x, w}, {}, "MatMul_a");
    v = b.op("Relu", {v}, {}, "Relu");
    v = b.op("MatMul", {v, w}, {}, "MatMul_b");
    b.output(v, DataType::kFloat32, {2, 3});
    return m;
}

const ir::Node* find(const ir::Model& m, const std::string& name) {
    for (const auto& n : m.graph->nodes())
        if (n->name == name) return n.get();
    return nullptr;
}

std::map<std::string, DataType> dtypes_of(const ir::Model& m) {
    std::map<std::string, DataType> d;
    for (const auto& n : m.graph->nodes())
        for (const auto* v : n->outputs()) d[v->name()] = DataType::kFloat32;
    d["x"] = DataType::kFloat32;
    return d;
}

TEST(DebugQdq, Int8QuantizesOnlyTheChosenNodesInputs) {
    auto m = two_matmuls(13);
    const auto d = dtypes_of(*m);
    const std::string relu_out = find(*m, "Relu")->output(0)->name();
    const auto r = insert_qdq(*m, {"MatMul_b"}, emu::Precision::kINT8, d, {{relu_out, 0.5f}});
    EXPECT_EQ(r.nodes, 1u);
    EXPECT_EQ(r.pairs, 2u);  // the activation (per tensor) and W (per channel)
    const ir::Node* a = find(*m, "MatMul_a");
    EXPECT_EQ(a->input(0)->name(), "x");  // float32 node untouched
    EXPECT_EQ(a->input(1)->name(), "W");
    const ir::Node* b = find(*m, "MatMul_b");
    for (size_t slot = 0; slot < 2; ++slot) {
        const ir::Node* dq = b->input(slot)->producer();
        ASSERT_NE(dq, nullptr);
        EXPECT_EQ(dq->op_type, "DequantizeLinear");
        EXPECT_EQ(dq->input(0)->producer()->op_type, "QuantizeLinear");
        EXPECT_EQ(dq->input(2)->initializer()->tensor.dtype(), DataType::kInt8);
    }
    const ir::Node* act = b->input(0)->producer();
    EXPECT_EQ(act->find_attribute("axis"), nullptr);
    EXPECT_FLOAT_EQ(act->input(1)->initializer()->tensor.element_as_double(0), 0.5);
    const ir::Node* wdq = b->input(1)->producer();
    ASSERT_NE(wdq->find_attribute("axis"), nullptr);
    EXPECT_EQ(wdq->find_attribute("axis")->i, 1);  // MatMul weights: per output column
    const Tensor& ws = wdq->input(1)->initializer()->tensor;
    ASSERT_EQ(ws.numel(), 3u);
    EXPECT_FLOAT_EQ(static_cast<float>(ws.element_as_double(2)), 9.0f / 127.0f);  // |-9|
}

TEST(DebugQdq, Int8SharesOnePairPerTensorAndLayout) {
    auto m = two_matmuls(13);
    const auto d = dtypes_of(*m);
    const std::string relu_out = find(*m, "Relu")->output(0)->name();
    const auto r = insert_qdq(*m, {"MatMul_a", "MatMul_b"}, emu::Precision::kINT8, d,
                              {{"x", 0.1f}, {relu_out, 0.5f}});
    EXPECT_EQ(r.pairs, 3u);  // x, Relu's output, and W once for both
    EXPECT_EQ(find(*m, "MatMul_a")->input(1), find(*m, "MatMul_b")->input(1));
}

TEST(DebugQdq, Fp8RoundsInputsAndOutputUses) {
    auto m = two_matmuls(19);
    const auto d = dtypes_of(*m);
    const auto r = insert_qdq(*m, {"MatMul_a"}, emu::Precision::kFP8E5M2, d, {});
    // x and W into MatMul_a, and MatMul_a's output into Relu (a float32 node).
    EXPECT_EQ(r.pairs, 3u);
    const ir::Node* relu_dq = find(*m, "Relu")->input(0)->producer();
    ASSERT_EQ(relu_dq->op_type, "DequantizeLinear");
    const ir::Node* q = relu_dq->input(0)->producer();
    EXPECT_EQ(q->input(2)->initializer()->tensor.dtype(), DataType::kFloat8E5M2);
    ASSERT_NE(q->find_attribute("saturate"), nullptr);  // e5m2 overflows to inf, as emulated
    EXPECT_EQ(q->find_attribute("saturate")->i, 0);
    EXPECT_EQ(find(*m, "MatMul_b")->input(0)->producer()->op_type, "Relu");
}

TEST(DebugQdq, RefusesWhatItCannotWrite) {
    auto m = two_matmuls(13);
    const auto d = dtypes_of(*m);
    EXPECT_THROW(insert_qdq(*m, {"MatMul_a"}, emu::Precision::kFP8E4M3, d, {}), Error);  // opset
    EXPECT_THROW(insert_qdq(*m, {"MatMul_a"}, emu::Precision::kFP16, d, {}), Error);
    EXPECT_THROW(insert_qdq(*m, {"nope"}, emu::Precision::kINT8, d, {{"x", 1.0f}}), Error);
    EXPECT_THROW(insert_qdq(*m, {"MatMul_a"}, emu::Precision::kINT8, d, {}), Error);  // no scale
    auto old = two_matmuls(11);
    EXPECT_THROW(require_qdq_opset(*old, emu::Precision::kINT8), Error);
    EXPECT_NO_THROW(require_qdq_opset(*m, emu::Precision::kINT8));
}

}  // namespace
}  // namespace pg::debug
