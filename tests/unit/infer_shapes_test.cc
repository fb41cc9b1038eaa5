// runtime::infer_shapes_by_running: types of intermediates and outputs come from one run on
// synthetic inputs; dynamic dims come from the given shapes or default to 1; failures name the
// node.
#include <gtest/gtest.h>

#include "base/error.h"
#include "ir/builder.h"
#include "runtime/infer_shapes.h"

namespace pg {
namespace {

// x [dims] -> Relu -> Neg -> y (no recorded types past the input)
std::unique_ptr<ir::Model> relu_neg_model(ir::Shape x_shape) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, std::move(x_shape));
    ir::Value* r = b.op("Relu", {x}, {}, "relu");
    b.output(b.op("Neg", {r}, {}, "neg"));
    return m;
}

TEST(InferShapes, RecordsIntermediatesAndOutputs) {
    auto m = relu_neg_model(ir::make_shape({2, 3}));
    runtime::InferShapesReport r = runtime::infer_shapes_by_running(*m);
    const ir::Value* relu = m->graph->find_value("relu_out");
    EXPECT_EQ(relu->type(), ir::TypeInfo::tensor(DataType::kFloat32, ir::make_shape({2, 3})));
    EXPECT_TRUE(relu->in_value_info);
    const ir::Value* y = m->graph->outputs()[0];
    EXPECT_EQ(y->type(), ir::TypeInfo::tensor(DataType::kFloat32, ir::make_shape({2, 3})));
    EXPECT_FALSE(y->in_value_info);
    EXPECT_EQ(r.values_typed, 2u);
    EXPECT_TRUE(r.defaulted_inputs.empty());
}

TEST(InferShapes, DynamicDimsFromGivenShapesOrOne) {
    ir::Shape dyn = {ir::Dim::symbolic("N"), ir::Dim::known(3)};
    auto given = relu_neg_model(dyn);
    runtime::InferShapesReport r = runtime::infer_shapes_by_running(*given, {{"x", {5, 3}}});
    EXPECT_EQ(given->graph->outputs()[0]->type().shape, ir::make_shape({5, 3}));
    EXPECT_EQ(r.input_shapes.at("x"), (std::vector<int64_t>{5, 3}));
    EXPECT_TRUE(r.defaulted_inputs.empty());
    // The input keeps its symbolic type.
    EXPECT_EQ(given->graph->inputs()[0]->type().shape, dyn);

    auto defaulted = relu_neg_model(dyn);
    r = runtime::infer_shapes_by_running(*defaulted);
    EXPECT_EQ(defaulted->graph->outputs()[0]->type().shape, ir::make_shape({1, 3}));
    EXPECT_EQ(r.defaulted_inputs, std::vector<std::string>{"x"});
}

TEST(InferShapes, ComparisonOutputsAreBool) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kInt64, std::vector<int64_t>{4});
    ir::Value* one =
        b.constant("one", Tensor::from_values(DataType::kInt64, {}, std::vector<int64_t>{1}));
    b.output(b.op("Equal", {x, one}, {}, "eq"));
    runtime::infer_shapes_by_running(*m);
    EXPECT_EQ(m->graph->outputs()[0]->type(),
              ir::TypeInfo::tensor(DataType::kBool, ir::make_shape({4})));
}

TEST(InferShapes, FailingNodeIsNamed) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{2});
    b.output(b.op("Add", {x, b.constant_f32("c", {3}, {1, 2, 3})}, {}, "bad_add"));
    try {
        runtime::infer_shapes_by_running(*m);
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("bad_add"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(m->graph->outputs()[0]->has_type());
}

TEST(InferShapes, MissingKernelIsUnsupported) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    b.output(b.op("NoSuchOp", {b.input("x", DataType::kFloat32, std::vector<int64_t>{2})}, {},
                  "custom"));
    try {
        runtime::infer_shapes_by_running(*m);
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
        EXPECT_NE(std::string(e.what()).find("NoSuchOp"), std::string::npos) << e.what();
    }
}

TEST(InferShapes, InputWithoutShapeNeedsOne) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{2});
    x->set_type(ir::TypeInfo::tensor(DataType::kFloat32, std::nullopt));
    b.output(b.op("Relu", {x}, {}, "relu"));
    EXPECT_THROW(runtime::infer_shapes_by_running(*m), Error);
    runtime::infer_shapes_by_running(*m, {{"x", {7}}});
    EXPECT_EQ(m->graph->outputs()[0]->type().shape, ir::make_shape({7}));
}

}  // namespace
}  // namespace pg
