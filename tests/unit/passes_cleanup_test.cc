// passes::cleanup: dead nodes and values go, outputs and subgraph reads stay.
#include <gtest/gtest.h>

#include "base/error.h"
#include "ir/builder.h"
#include "passes/cleanup.h"
#include "support/subgraph_attr.h"

namespace pg {
namespace {

std::vector<std::string> node_names(const ir::Graph& g) {
    std::vector<std::string> out;
    for (const auto& n : g.nodes()) out.push_back(n->name);
    return out;
}

using test::add_branch;

TEST(PassesCleanup, RemovesNodesThatDoNotReachOutputs) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{2});
    ir::Value* y = b.op("Relu", {x}, {}, "relu");
    ir::Value* dead = b.op("Neg", {x}, {}, "neg");
    b.op("Abs", {dead}, {}, "abs");
    b.output(y, DataType::kFloat32, {2});
    passes::CleanupReport r = passes::cleanup(*m->graph);
    EXPECT_EQ(node_names(*m->graph), std::vector<std::string>{"relu"});
    EXPECT_EQ(r.nodes_removed, 2u);
    EXPECT_EQ(m->graph->find_value("neg_out"), nullptr);
    EXPECT_EQ(m->graph->find_value("abs_out"), nullptr);
    ASSERT_EQ(m->graph->outputs().size(), 1u);
    EXPECT_EQ(m->graph->outputs()[0], y);
}

TEST(PassesCleanup, DeadNodesInAnyOrderAreRemoved) {
    auto m = ir::new_model(17);
    ir::Graph& g = *m->graph;
    ir::GraphBuilder b(g);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{2});
    ir::Value* t = g.add_value("t");
    g.add_node("Abs", {t}, {"u"})->name = "consumer_first";  // reads t before it is produced
    g.add_node("Neg", {x}, {"t"})->name = "producer_second";
    b.output(b.op("Relu", {x}, {}, "relu"));
    passes::cleanup(g);
    EXPECT_EQ(node_names(g), std::vector<std::string>{"relu"});
}

TEST(PassesCleanup, DropsUnusedInitializersOnly) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{2});
    ir::Value* w = b.constant_f32("w", {2}, {1, 2});
    b.constant_f32("unused", {2}, {3, 4});
    b.output(b.op("Add", {x, w}, {}, "add"));
    passes::CleanupReport r = passes::cleanup(*m->graph);
    EXPECT_EQ(r.values_removed, 1u);
    ASSERT_EQ(m->graph->initializers().size(), 1u);
    EXPECT_EQ(m->graph->initializers()[0]->name(), "w");
    EXPECT_EQ(m->graph->find_value("unused"), nullptr);
}

TEST(PassesCleanup, GraphInputsStayUnlessAsked) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{2});
    b.input("spare", DataType::kFloat32, std::vector<int64_t>{2});
    b.output(b.op("Relu", {x}));
    passes::cleanup(*m->graph);
    EXPECT_EQ(m->graph->inputs().size(), 2u);
    passes::CleanupOptions opts;
    opts.remove_unused_graph_inputs = true;
    passes::CleanupReport r = passes::cleanup(*m->graph, opts);
    EXPECT_EQ(r.inputs_removed, 1u);
    ASSERT_EQ(m->graph->inputs().size(), 1u);
    EXPECT_EQ(m->graph->inputs()[0]->name(), "x");
    EXPECT_EQ(m->graph->find_value("spare"), nullptr);
}

TEST(PassesCleanup, GraphOutputThatIsAnInputIsKept) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{2});
    b.op("Relu", {x});
    b.output(x);
    passes::CleanupOptions opts;
    opts.remove_unused_graph_inputs = true;
    passes::cleanup(*m->graph, opts);
    EXPECT_EQ(m->graph->num_nodes(), 0u);
    ASSERT_EQ(m->graph->inputs().size(), 1u);
    EXPECT_EQ(m->graph->outputs()[0], x);
}

TEST(PassesCleanup, UnusedNodeOutputsBecomeOmittedOnlyWhenAsked) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{4});
    ir::Node* split = b.op_multi("Split", {x}, 3, {}, "split");
    b.output(split->output(1));
    passes::cleanup(*m->graph);
    EXPECT_NE(split->output(0), nullptr);
    passes::CleanupOptions opts;
    opts.remove_unused_node_outputs = true;
    passes::CleanupReport r = passes::cleanup(*m->graph, opts);
    EXPECT_EQ(r.node_outputs_removed, 2u);
    ASSERT_EQ(split->outputs().size(), 3u);  // positions kept
    EXPECT_EQ(split->output(0), nullptr);
    EXPECT_EQ(split->output(1)->name(), "split_out1");
    EXPECT_EQ(split->output(2), nullptr);
    EXPECT_EQ(m->graph->find_value("split_out0"), nullptr);
}

// main: t = Neg(x); If(cond) { then: Identity(t) -> o ; dead Abs(u) } ; u = Sigmoid(x) read only by
// the dead subgraph node.
TEST(PassesCleanup, SubgraphReadsKeepProducersAndDeadSubgraphNodesGo) {
    auto m = ir::new_model(17);
    ir::Graph& g = *m->graph;
    ir::GraphBuilder b(g);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{2});
    ir::Value* cond = b.input("cond", DataType::kBool, std::vector<int64_t>{});
    ir::Value* t = b.op("Neg", {x}, {}, "neg");
    ir::Value* u = b.op("Sigmoid", {x}, {}, "sigmoid");
    ir::Node* iff = b.op_multi("If", {cond}, 1, {}, "if");
    for (const char* branch : {"then_branch", "else_branch"}) {
        ir::Graph* sub = add_branch(iff, branch);
        ir::GraphBuilder sb(*sub);
        sb.op("Abs", {u}, {}, std::string(branch) + "_dead");
        sb.output(sb.op("Identity", {t}, {}, std::string(branch) + "_id"));
    }
    b.output(iff->output(0));
    EXPECT_EQ(u->uses().size(), 2u);
    passes::CleanupReport r = passes::cleanup(g);
    EXPECT_EQ(node_names(g), (std::vector<std::string>{"neg", "if"}));
    EXPECT_EQ(node_names(*iff->subgraphs()[0]), std::vector<std::string>{"then_branch_id"});
    EXPECT_EQ(r.nodes_removed, 3u);  // two dead Abs, then Sigmoid
    EXPECT_EQ(g.find_value("sigmoid_out"), nullptr);
    EXPECT_EQ(t->uses().size(), 2u);
}

}  // namespace
}  // namespace pg
