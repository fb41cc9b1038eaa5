// passes::extract: cutting a graph between named tensors.
#include <gtest/gtest.h>

#include "base/error.h"
#include "ir/builder.h"
#include "passes/extract.h"

namespace pg {
namespace {

std::vector<std::string> ops(const ir::Graph& g) {
    std::vector<std::string> out;
    for (const auto& n : g.nodes()) out.push_back(n->op_type);
    return out;
}

std::vector<std::string> names(const std::vector<ir::Value*>& vs) {
    std::vector<std::string> out;
    for (ir::Value* v : vs) out.push_back(v->name());
    return out;
}

// The tutorial's model: Y = x0 + (a * x1 + b), intermediates without recorded types.
std::unique_ptr<ir::Model> tutorial_model() {
    auto m = ir::new_model(11);
    ir::Graph& g = *m->graph;
    ir::GraphBuilder b(g);
    ir::Value* x0 = b.input("x0", DataType::kFloat32, {1, 4});
    ir::Value* x1 = b.input("x1", DataType::kFloat32, {1, 4});
    ir::Value* a = b.constant_f32("a", {1, 4}, {1, 2, 3, 4});
    ir::Value* bb = b.constant_f32("b", {1, 4}, {5, 6, 7, 8});
    g.add_node("Mul", {a, x1}, {"mul_out"});
    g.add_node("Add", {g.find_value("mul_out"), bb}, {"add_out"});
    g.add_node("Add", {x0, g.find_value("add_out")}, {"Y"});
    b.output(g.find_value("Y"), DataType::kFloat32, {1, 4});
    return m;
}

TEST(PassesExtract, KeepsOnlyTheNodesBetweenInputsAndOutputs) {
    auto m = tutorial_model();
    passes::ExtractOptions o;
    o.inputs = {{"x1", std::nullopt, std::nullopt}};
    o.outputs = {{"add_out", DataType::kFloat32, std::nullopt}};
    passes::ExtractReport r = passes::extract(*m->graph, o);
    EXPECT_EQ(ops(*m->graph), (std::vector<std::string>{"Mul", "Add"}));
    EXPECT_EQ(names(m->graph->inputs()), std::vector<std::string>{"x1"});
    EXPECT_EQ(names(m->graph->outputs()), std::vector<std::string>{"add_out"});
    EXPECT_EQ(m->graph->outputs()[0]->type().elem_type, DataType::kFloat32);
    EXPECT_FALSE(m->graph->outputs()[0]->type().shape.has_value());
    EXPECT_EQ(m->graph->inputs()[0]->type().shape, ir::make_shape({1, 4}));  // from the model
    EXPECT_EQ(m->graph->find_value("x0"), nullptr);
    EXPECT_EQ(m->graph->find_value("Y"), nullptr);
    EXPECT_EQ(r.nodes_removed, 1u);
    EXPECT_TRUE(r.unbound.empty());
}

TEST(PassesExtract, IntermediateInputLosesItsProducer) {
    auto m = tutorial_model();
    passes::ExtractOptions o;
    o.inputs = {
        {"mul_out", DataType::kFloat16, ir::Shape{ir::Dim::symbolic("n"), ir::Dim::known(4)}},
        {"x0", std::nullopt, std::nullopt}};
    passes::extract(*m->graph, o);
    EXPECT_EQ(ops(*m->graph), (std::vector<std::string>{"Add", "Add"}));
    ir::Value* in = m->graph->find_value("mul_out");
    ASSERT_NE(in, nullptr);
    EXPECT_EQ(in->producer(), nullptr);
    EXPECT_EQ(in->type().elem_type, DataType::kFloat16);
    EXPECT_EQ((*in->type().shape)[0].param, "n");
    EXPECT_EQ(names(m->graph->inputs()), (std::vector<std::string>{"mul_out", "x0"}));
    EXPECT_EQ(names(m->graph->outputs()), std::vector<std::string>{"Y"});  // kept
    EXPECT_EQ(m->graph->find_value("x1"), nullptr);
    EXPECT_EQ(m->graph->find_value("a"), nullptr);  // its only reader is gone
}

TEST(PassesExtract, UnknownNameIsInvalidInputNamingIt) {
    auto m = tutorial_model();
    passes::ExtractOptions o;
    o.outputs = {{"nope", DataType::kFloat32, std::nullopt}};
    try {
        passes::extract(*m->graph, o);
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
        EXPECT_NE(std::string(e.what()).find("nope"), std::string::npos);
    }
    EXPECT_EQ(m->graph->num_nodes(), 3u);  // untouched
}

TEST(PassesExtract, AutoNeedsRecordedTypesElseUnsupported) {
    auto m = tutorial_model();
    passes::ExtractOptions o;
    o.inputs = {{"mul_out", std::nullopt, std::nullopt}};
    try {
        passes::extract(*m->graph, o);
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
        EXPECT_NE(std::string(e.what()).find("reference interpreter"), std::string::npos);
    }
    // With value_info recorded, `auto` works.
    ir::Value* mo = m->graph->find_value("mul_out");
    mo->set_type(ir::TypeInfo::tensor(DataType::kFloat32, ir::make_shape({1, 4})));
    mo->in_value_info = true;
    o.inputs.push_back({"x0", std::nullopt, std::nullopt});
    passes::extract(*m->graph, o);
    EXPECT_EQ(mo->type().shape, ir::make_shape({1, 4}));
    EXPECT_FALSE(mo->in_value_info);  // an input now, not value_info
    EXPECT_EQ(ops(*m->graph), (std::vector<std::string>{"Add", "Add"}));
}

TEST(PassesExtract, IncompleteCutIsReported) {
    auto m = tutorial_model();
    passes::ExtractOptions o;
    o.inputs = {{"x1", std::nullopt, std::nullopt}};
    passes::ExtractReport r = passes::extract(*m->graph, o);
    EXPECT_EQ(r.unbound, std::vector<std::string>{"x0"});
}

TEST(PassesExtract, ExplicitOutputShapeIsSet) {
    auto m = tutorial_model();
    passes::ExtractOptions o;
    o.outputs = {{"mul_out", DataType::kFloat32, ir::make_shape({1, 4})}};
    passes::extract(*m->graph, o);
    EXPECT_EQ(ops(*m->graph), std::vector<std::string>{"Mul"});
    EXPECT_EQ(m->graph->outputs()[0]->type().shape, ir::make_shape({1, 4}));
    EXPECT_EQ(names(m->graph->inputs()), (std::vector<std::string>{"x0", "x1"}));  // kept as is
}

}  // namespace
}  // namespace pg
