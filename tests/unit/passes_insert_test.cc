// passes::insert_node: placement, tensors both read and written, replaced subgraphs.
#include <gtest/gtest.h>

#include "base/error.h"
#include "ir/builder.h"
#include "passes/insert.h"

namespace pg {
namespace {

std::vector<std::string> ops(const ir::Graph& g) {
    std::vector<std::string> out;
    for (const auto& n : g.nodes()) out.push_back(n->op_type);
    return out;
}

// x -> Relu -> y -> Neg -> z (output); y optionally an output too.
std::unique_ptr<ir::Model> chain(bool y_is_output) {
    auto m = ir::new_model(17);
    ir::Graph& g = *m->graph;
    ir::GraphBuilder b(g);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{2});
    g.add_node("Relu", {x}, {"y"})->name = "relu";
    g.add_node("Neg", {g.find_value("y")}, {"z"})->name = "neg";
    if (y_is_output) b.output(g.find_value("y"), DataType::kFloat32, {2});
    b.output(g.find_value("z"), DataType::kFloat32, {2});
    return m;
}

TEST(PassesInsert, SameTensorInAndOutGetsANewTensorForReaders) {
    auto m = chain(false);
    passes::InsertOptions o;
    o.op = "Identity";
    o.name = "inserted";
    o.inputs = {"y"};
    o.outputs = {"y"};
    o.attributes = ir::attrs(ir::Attribute::make_int("k", 3));
    passes::InsertReport r = passes::insert_node(*m->graph, std::move(o));
    ir::Graph& g = *m->graph;
    EXPECT_EQ(ops(g), (std::vector<std::string>{"Relu", "Identity", "Neg"}));
    EXPECT_EQ(r.position, 1u);
    EXPECT_EQ(r.node->input(0)->name(), "y");
    EXPECT_EQ(r.node->output(0)->name(), "y_polygraphy_surgeon_insert_output");
    EXPECT_EQ(g.nodes()[2]->input(0), r.node->output(0));
    ASSERT_NE(r.node->find_attribute("k"), nullptr);
    EXPECT_EQ(r.node->find_attribute("k")->i, 3);
    EXPECT_EQ(r.node->name, "inserted");
}

TEST(PassesInsert, GraphOutputKeepsItsNameOnTheNewTensor) {
    auto m = chain(true);
    passes::InsertOptions o;
    o.op = "Identity";
    o.inputs = {"y"};
    o.outputs = {"y"};
    passes::InsertReport r = passes::insert_node(*m->graph, std::move(o));
    ir::Graph& g = *m->graph;
    EXPECT_EQ(r.node->output(0)->name(), "y");
    EXPECT_EQ(r.node->input(0)->name(), "y_polygraphy_surgeon_insert_output");
    EXPECT_EQ(g.outputs()[0], r.node->output(0));
    EXPECT_EQ(g.outputs()[0]->type().elem_type, DataType::kFloat32);
    EXPECT_EQ(g.nodes()[2]->input(0)->name(), "y");  // Neg reads the new tensor
    EXPECT_EQ(r.renamed, std::vector<std::string>{"y -> y_polygraphy_surgeon_insert_output"});
}

TEST(PassesInsert, ReplacesTheSubgraphBetweenInputsAndOutputs) {
    auto m = chain(false);
    passes::InsertOptions o;
    o.op = "Sigmoid";
    o.inputs = {"x"};
    o.outputs = {"z"};
    passes::InsertReport r = passes::insert_node(*m->graph, std::move(o));
    EXPECT_EQ(ops(*m->graph), std::vector<std::string>{"Sigmoid"});
    EXPECT_EQ(r.nodes_removed, 2u);
    EXPECT_EQ(m->graph->outputs()[0]->producer(), r.node);
    EXPECT_EQ(m->graph->find_value("y"), nullptr);
}

TEST(PassesInsert, PlacedAfterTheLastProducerOfItsInputs) {
    auto m = chain(false);
    ir::Graph& g = *m->graph;
    ir::GraphBuilder b(g);
    ir::Value* w = b.op("Abs", {g.find_value("x")}, {}, "abs");  // index 2, after Neg
    b.output(w);
    passes::InsertOptions o;
    o.op = "Add";
    o.inputs = {"y", "x"};
    o.outputs = {"abs_out"};
    passes::InsertReport r = passes::insert_node(g, std::move(o));
    EXPECT_EQ(ops(g), (std::vector<std::string>{"Relu", "Add", "Neg"}));
    EXPECT_EQ(r.position, 1u);
}

TEST(PassesInsert, UnknownTensorIsInvalidInput) {
    auto m = chain(false);
    passes::InsertOptions o;
    o.op = "Identity";
    o.inputs = {"y"};
    o.outputs = {"missing"};
    try {
        passes::insert_node(*m->graph, std::move(o));
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
        EXPECT_NE(std::string(e.what()).find("missing"), std::string::npos);
    }
    EXPECT_EQ(m->graph->num_nodes(), 2u);
}

}  // namespace
}  // namespace pg
