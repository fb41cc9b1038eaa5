// passes::fold_constants: constant chains become initializers, failures are tolerated and
// reported, the size threshold and Shape folding on static shapes are honoured.
#include <gtest/gtest.h>

#include "base/error.h"
#include "ir/builder.h"
#include "passes/fold_constants.h"
#include "support/subgraph_attr.h"

namespace pg {
namespace {

std::vector<std::string> op_types(const ir::Graph& g) {
    std::vector<std::string> out;
    for (const auto& n : g.nodes()) out.push_back(n->op_type);
    return out;
}

std::vector<float> floats_of(const ir::Value* v) {
    const Tensor& t = v->initializer()->tensor;
    return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
}

std::vector<int64_t> ints_of(const ir::Value* v) {
    const Tensor& t = v->initializer()->tensor;
    return std::vector<int64_t>(t.data<int64_t>(), t.data<int64_t>() + t.numel());
}

// y = x + ((a + b) * d), the constant part in two nodes.
std::unique_ptr<ir::Model> chain_model() {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{2});
    ir::Value* c = b.op("Add", {b.constant_f32("a", {2}, {1, 2}), b.constant_f32("b", {2}, {3, 4})},
                        {}, "add_ab");
    ir::Value* e = b.op("Mul", {c, b.constant_f32("d", {2}, {2, 2})}, {}, "mul_d");
    b.output(b.op("Add", {x, e}, {}, "add_x"), DataType::kFloat32, {2});
    return m;
}

TEST(PassesFoldConstants, ChainBecomesOneInitializer) {
    auto m = chain_model();
    passes::FoldReport r = passes::fold_constants(*m);
    const ir::Graph& g = *m->graph;
    EXPECT_EQ(op_types(g), std::vector<std::string>{"Add"});
    ir::Value* e = g.find_value("mul_d_out");
    ASSERT_NE(e, nullptr);
    ASSERT_TRUE(e->is_initializer());
    EXPECT_EQ(floats_of(e), (std::vector<float>{8, 12}));
    EXPECT_EQ(g.nodes()[0]->input(1), e);
    EXPECT_EQ(g.find_value("add_ab_out"), nullptr);  // intermediate removed by cleanup
    EXPECT_EQ(g.find_value("a"), nullptr);
    EXPECT_EQ(g.initializers().size(), 1u);
    EXPECT_EQ(r.nodes_folded, 2u);
    EXPECT_EQ(r.bytes_folded, 8u);
    EXPECT_EQ(r.passes, 2u);  // the second pass finds nothing left
    EXPECT_TRUE(r.failures.empty());
}

TEST(PassesFoldConstants, NumPassesLimitsThePasses) {
    auto m = chain_model();
    passes::FoldOptions o;
    o.num_passes = 1;
    EXPECT_EQ(passes::fold_constants(*m, o).passes, 1u);
    o.num_passes = 0;
    auto m2 = chain_model();
    EXPECT_EQ(passes::fold_constants(*m2, o).passes, 0u);
    EXPECT_EQ(m2->graph->num_nodes(), 3u);
}

TEST(PassesFoldConstants, ConstantNodeBecomesInitializer) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{2});
    ir::Value* k =
        b.op("Constant", {},
             ir::attrs(ir::Attribute::make_tensor(
                 "value", Tensor::from_values(DataType::kFloat32, {2}, std::vector<float>{5, 6}))),
             "k");
    b.output(b.op("Add", {x, k}, {}, "add"), DataType::kFloat32, {2});
    passes::FoldReport r = passes::fold_constants_pass(*m);
    EXPECT_EQ(op_types(*m->graph), std::vector<std::string>{"Add"});
    ASSERT_TRUE(m->graph->find_value("k_out")->is_initializer());
    EXPECT_EQ(floats_of(m->graph->find_value("k_out")), (std::vector<float>{5, 6}));
    EXPECT_EQ(r.nodes_folded, 1u);
}

TEST(PassesFoldConstants, FailingNodeIsKeptAndReported) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{2});
    // [2] + [3] does not broadcast: the kernel throws.
    ir::Value* bad =
        b.op("Add", {b.constant_f32("a", {2}, {1, 2}), b.constant_f32("c3", {3}, {1, 2, 3})}, {},
             "bad_add");
    ir::Value* good = b.op("Neg", {b.constant_f32("n", {2}, {1, 2})}, {}, "neg");
    b.output(b.op("Add", {x, bad}, {}, "use_bad"));
    b.output(b.op("Add", {x, good}, {}, "use_good"));
    passes::FoldReport r = passes::fold_constants(*m);
    EXPECT_EQ(op_types(*m->graph), (std::vector<std::string>{"Add", "Add", "Add"}));
    ASSERT_EQ(r.failures.size(), 1u);  // reported once over both passes
    EXPECT_NE(r.failures[0].node.find("bad_add"), std::string::npos);
    EXPECT_FALSE(r.failures[0].reason.empty());
    EXPECT_TRUE(m->graph->find_value("neg_out")->is_initializer());
    EXPECT_FALSE(m->graph->find_value("bad_add_out")->is_initializer());
}

TEST(PassesFoldConstants, SizeThresholdKeepsLargeOutputs) {
    passes::FoldOptions o;
    o.size_threshold = 7;  // the folded tensors hold 8 bytes
    auto m = chain_model();
    passes::FoldReport r = passes::fold_constants(*m, o);
    EXPECT_EQ(m->graph->num_nodes(), 3u);
    EXPECT_EQ(r.nodes_folded, 0u);
    EXPECT_TRUE(r.failures.empty());
    o.size_threshold = 8;  // not larger than the threshold: folded
    auto m2 = chain_model();
    passes::fold_constants(*m2, o);
    EXPECT_EQ(m2->graph->num_nodes(), 1u);
}

TEST(PassesFoldConstants, GraphOutputStaysAnOutput) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    b.input("x", DataType::kFloat32, std::vector<int64_t>{2});
    ir::Value* y =
        b.op("Add", {b.constant_f32("a", {2}, {1, 2}), b.constant_f32("b", {2}, {3, 4})}, {}, "y");
    b.output(y, DataType::kFloat32, {2});
    passes::fold_constants(*m);
    const ir::Graph& g = *m->graph;
    EXPECT_EQ(g.num_nodes(), 0u);
    ASSERT_EQ(g.outputs().size(), 1u);
    EXPECT_EQ(g.outputs()[0]->name(), "y_out");
    ASSERT_TRUE(g.outputs()[0]->is_initializer());
    EXPECT_EQ(floats_of(g.outputs()[0]), (std::vector<float>{4, 6}));
    EXPECT_EQ(g.outputs()[0]->type().elem_type, DataType::kFloat32);
    EXPECT_EQ(g.inputs().size(), 1u);  // graph inputs are kept, as graphsurgeon's cleanup does
}

// x [2, 3, 'N'] or static: Shape(x), Shape(x, start=1), Size(x) are graph outputs.
std::unique_ptr<ir::Model> shape_model(ir::Shape x_shape) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, std::move(x_shape));
    b.output(b.op("Shape", {x}, {}, "shape"));
    b.output(b.op("Shape", {x}, ir::attrs(ir::Attribute::make_int("start", -2)), "shape_tail"));
    b.output(b.op("Size", {x}, {}, "size"));
    return m;
}

TEST(PassesFoldConstants, ShapeOfStaticInputFolds) {
    auto m = shape_model(ir::make_shape({2, 3, 4}));
    passes::FoldReport r = passes::fold_constants(*m);
    const ir::Graph& g = *m->graph;
    EXPECT_EQ(g.num_nodes(), 0u);
    EXPECT_EQ(r.nodes_folded, 3u);
    EXPECT_EQ(ints_of(g.find_value("shape_out")), (std::vector<int64_t>{2, 3, 4}));
    EXPECT_EQ(ints_of(g.find_value("shape_tail_out")), (std::vector<int64_t>{3, 4}));
    EXPECT_EQ(g.find_value("size_out")->initializer()->tensor.rank(), 0);
    EXPECT_EQ(ints_of(g.find_value("size_out")), std::vector<int64_t>{24});
}

TEST(PassesFoldConstants, ShapeOfDynamicInputOrWithoutFoldShapesStays) {
    ir::Shape dynamic = ir::make_shape({2, 3});
    dynamic.push_back(ir::Dim::symbolic("N"));
    auto m = shape_model(dynamic);
    EXPECT_EQ(passes::fold_constants(*m).nodes_folded, 0u);
    EXPECT_EQ(m->graph->num_nodes(), 3u);
    passes::FoldOptions o;
    o.fold_shapes = false;
    auto m2 = shape_model(ir::make_shape({2, 3, 4}));
    EXPECT_EQ(passes::fold_constants(*m2, o).nodes_folded, 0u);
    EXPECT_EQ(m2->graph->num_nodes(), 3u);
}

TEST(PassesFoldConstants, UnknownOpsAndOverridableInputsAreNotFolded) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* a = b.constant_f32("a", {2}, {1, 2});
    b.output(b.op("NoSuchOp", {a}, {}, "unknown"));
    // An initializer that is also a graph input may be overridden at run time.
    ir::Value* w = b.constant_f32("w", {2}, {1, 2});
    m->graph->add_input(w);
    b.output(b.op("Neg", {w}, {}, "neg_w"));
    passes::FoldReport r = passes::fold_constants(*m);
    EXPECT_EQ(op_types(*m->graph), (std::vector<std::string>{"NoSuchOp", "Neg"}));
    EXPECT_TRUE(r.failures.empty());
}

using test::add_branch;

TEST(PassesFoldConstants, SubgraphsAreFoldedButTheirNodeIsKept) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* cond = b.input("cond", DataType::kBool, std::vector<int64_t>{});
    ir::Value* a = b.constant_f32("a", {2}, {1, 2});
    ir::Node* iff = b.op_multi("If", {cond}, 1, {}, "if");
    ir::Graph* then_g = add_branch(iff, "then_branch");
    ir::GraphBuilder tb(*then_g);
    tb.output(tb.op("Neg", {a}, {}, "then_neg"), DataType::kFloat32, {2});
    ir::Graph* else_g = add_branch(iff, "else_branch");
    ir::GraphBuilder eb(*else_g);
    eb.output(eb.op("Identity", {a}, {}, "else_id"), DataType::kFloat32, {2});
    b.output(iff->output(0));
    passes::FoldReport r = passes::fold_constants(*m);
    EXPECT_EQ(op_types(*m->graph), std::vector<std::string>{"If"});
    EXPECT_EQ(then_g->num_nodes(), 0u);
    EXPECT_EQ(else_g->num_nodes(), 0u);
    ASSERT_TRUE(then_g->outputs()[0]->is_initializer());
    EXPECT_EQ(floats_of(then_g->outputs()[0]), (std::vector<float>{-1, -2}));
    EXPECT_EQ(r.nodes_folded, 2u);
    EXPECT_EQ(passes::count_nodes(*m->graph), 1u);
}

TEST(PassesFoldConstants, CountNodesIncludesSubgraphs) {
    auto m = chain_model();
    ir::Node* n = m->graph->nodes()[0].get();
    ir::GraphBuilder sb(*add_branch(n, "body"));
    sb.op("Relu", {m->graph->find_value("a")}, {}, "inner");
    EXPECT_EQ(passes::count_nodes(*m->graph), 4u);
}

}  // namespace
}  // namespace pg
