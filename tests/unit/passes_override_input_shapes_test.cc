// passes::override_input_shapes: new input shapes, other shapes cleared.
#include <gtest/gtest.h>

#include "base/error.h"
#include "ir/builder.h"
#include "passes/override_input_shapes.h"

namespace pg {
namespace {

TEST(PassesOverrideInputShapes, SetsSymbolicShapeAndClearsOthers) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, {1, 1, 2, 2});
    ir::Value* other = b.input("other", DataType::kInt64, std::vector<int64_t>{3});
    ir::Value* t = b.op("Relu", {x});
    t->set_type(ir::TypeInfo::tensor(DataType::kFloat32, ir::make_shape({1, 1, 2, 2})));
    t->in_value_info = true;
    ir::Value* y = b.op("Identity", {t});
    b.output(y, DataType::kFloat32, {1, 1, 2, 2});
    b.output(b.op("Identity", {other}));
    const ir::Shape batch = {ir::Dim::symbolic("batch"), ir::Dim::known(1), ir::Dim::known(2),
                             ir::Dim::known(2)};
    passes::OverrideInputShapesReport r = passes::override_input_shapes(*m->graph, {{"x", batch}});
    EXPECT_EQ(r.inputs, (std::vector<std::string>{"x", "other"}));
    EXPECT_EQ(x->type().shape, batch);
    EXPECT_EQ(x->type().elem_type, DataType::kFloat32);
    EXPECT_EQ(other->type().shape, ir::make_shape({3}));  // untouched input
    EXPECT_FALSE(t->type().shape.has_value());
    EXPECT_EQ(t->type().elem_type, DataType::kFloat32);  // dtype kept
    EXPECT_FALSE(y->type().shape.has_value());
    EXPECT_EQ(r.shapes_cleared, 2u);
    EXPECT_EQ(m->graph->num_nodes(), 3u);
}

TEST(PassesOverrideInputShapes, UnknownNameIsInvalidInput) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    b.output(b.op("Relu", {b.input("x", DataType::kFloat32, std::vector<int64_t>{2})}));
    try {
        passes::override_input_shapes(*m->graph, {{"nope", ir::make_shape({4})}});
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
        EXPECT_NE(std::string(e.what()).find("nope"), std::string::npos);
    }
}

}  // namespace
}  // namespace pg
