// Candidate subgraphs of `debug reduce` (debug/subgraph.h): output and input cuts, a side branch
// cut off by the new inputs, omitted optional inputs, an If node reading outer values, and the
// per-sample reference values (symbolic dims where samples differ), kept or recomputed on demand.
#include <gtest/gtest.h>

#include <memory>

#include "base/error.h"
#include "debug/subgraph.h"
#include "ir/builder.h"
#include "ir/graph.h"
#include "runners/ref_runner.h"
#include "support/subgraph_attr.h"

namespace pg {
namespace {

Tensor f32(std::vector<int64_t> dims, std::vector<float> v) {
    return Tensor::from_values(DataType::kFloat32, std::move(dims), v);
}

std::vector<std::string> input_names(const ir::Model& m) {
    std::vector<std::string> out;
    for (const ir::Value* v : m.graph->inputs()) out.push_back(v->name());
    return out;
}

std::vector<std::string> output_names(const ir::Model& m) {
    std::vector<std::string> out;
    for (const ir::Value* v : m.graph->outputs()) out.push_back(v->name());
    return out;
}

// Two samples of x [1, 3].
data::FeedList two_feeds(const std::string& name = "x") {
    return {{{name, f32({1, 3}, {1, -2, 3})}}, {{name, f32({1, 3}, {-4, 5, 0.5f})}}};
}

// The candidate on the reference interpreter, fed from `ref`, sample `i`.
runners::NamedTensors run(const ir::Model& m, const debug::ReferenceValues& ref, size_t i) {
    runners::RefRunner r(m, {});
    const auto feed = ref.feeds_for(m).at(i);
    return r.infer(std::map<std::string, Tensor>(feed.begin(), feed.end()));
}

void expect_same(const Tensor& a, const Tensor* ref) {
    ASSERT_NE(ref, nullptr);
    const Tensor& b = *ref;
    ASSERT_EQ(a.numel(), b.numel());
    for (uint64_t k = 0; k < a.numel(); ++k)
        EXPECT_EQ(a.element_as_double(k), b.element_as_double(k));
}

// A(x) -> a (Neg), B(a) -> b (Abs), C(x) -> c (Sigmoid), D(b, c) -> y (Add)
std::unique_ptr<ir::Model> side_branch_model() {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{1, 3});
    ir::Value* a = b.op("Neg", {x}, {}, "A");
    ir::Value* bb = b.op("Abs", {a}, {}, "B");
    ir::Value* c = b.op("Sigmoid", {x}, {}, "C");
    b.output(b.op("Add", {bb, c}, {}, "D"), DataType::kFloat32, {1, 3});
    return m;
}

TEST(DebugSubgraph, CutOutputsKeepsTheNodesBefore) {
    auto m = side_branch_model();
    const debug::ReferenceValues ref(*m, two_feeds(), {});
    auto c = debug::cut_outputs(*m, 1, ref);
    EXPECT_EQ(debug::node_names(*c), (std::vector<std::string>{"A", "B"}));
    EXPECT_EQ(input_names(*c), std::vector<std::string>{"x"});
    EXPECT_EQ(output_names(*c), std::vector<std::string>{"B_out"});
    EXPECT_EQ(debug::node_names(*m).size(), 4u);  // the original is untouched
    for (size_t i = 0; i < 2; ++i) expect_same(run(*c, ref, i)[0].second, ref.find(i, "B_out"));
}

TEST(DebugSubgraph, CutInputsTurnsTheSideBranchIntoAnInput) {
    auto m = side_branch_model();
    const debug::ReferenceValues ref(*m, two_feeds(), {});
    auto c = debug::cut_inputs(*m, 1, ref);  // the inputs of B
    EXPECT_EQ(debug::node_names(*c), (std::vector<std::string>{"B", "D"}));
    EXPECT_EQ(input_names(*c), (std::vector<std::string>{"A_out", "C_out"}));
    EXPECT_EQ(output_names(*c), std::vector<std::string>{"D_out"});
    // Each sample takes its own cut values and reproduces its own reference output.
    const auto feeds = ref.feeds_for(*c);
    ASSERT_EQ(feeds.size(), 2u);
    expect_same(feeds[1][0].second, ref.find(1, "A_out"));
    for (size_t i = 0; i < 2; ++i) expect_same(run(*c, ref, i)[0].second, ref.find(i, "D_out"));
    // Types of new inputs come from the reference values.
    const ir::Value* in = c->graph->find_value("C_out");
    EXPECT_EQ(in->type().elem_type, DataType::kFloat32);
    EXPECT_EQ(*in->type().shape, ir::make_shape({1, 3}));
}

TEST(DebugSubgraph, CutInputsSkipsOmittedAndConstantInputs) {
    // r = Relu(x); y = Clip(r, "", hi): the omitted min stays omitted, hi stays an initializer.
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{1, 3});
    ir::Value* r = b.op("Relu", {x}, {}, "relu");
    ir::Value* hi = b.constant_f32("hi", {}, {2.0f});
    b.output(b.op("Clip", {r, nullptr, hi}, {}, "clip"), DataType::kFloat32, {1, 3});
    const debug::ReferenceValues ref(*m, two_feeds(), {});
    auto c = debug::cut_inputs(*m, 1, ref);
    EXPECT_EQ(debug::node_names(*c), std::vector<std::string>{"clip"});
    EXPECT_EQ(input_names(*c), std::vector<std::string>{"relu_out"});
    const ir::Node* clip = c->graph->nodes()[0].get();
    EXPECT_EQ(clip->input(1), nullptr);
    ASSERT_NE(clip->input(2), nullptr);
    EXPECT_TRUE(clip->input(2)->is_initializer());
    for (size_t i = 0; i < 2; ++i) expect_same(run(*c, ref, i)[0].second, ref.find(i, "clip_out"));
    // A node that reads only constants cannot be a cut point.
    auto only_const = ir::new_model(17);
    ir::GraphBuilder ob(*only_const->graph);
    ir::Value* k = ob.constant_f32("k", {1, 3}, {1, 2, 3});
    ob.output(ob.op("Neg", {k}, {}, "neg"), DataType::kFloat32, {1, 3});
    const debug::ReferenceValues none(*only_const, {{}}, {});
    EXPECT_THROW(debug::cut_inputs(*only_const, 0, none), Error);
}

TEST(DebugSubgraph, ConstantComputationsAreNeverCutPoints) {
    // w = ConstantOfShape(shape); y = Mul(Relu(x), w): w is constant, so the cut at Mul keeps
    // ConstantOfShape and feeds only Relu's output; ConstantOfShape is no cut point.
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{1, 3});
    ir::Value* shape =
        b.constant("shape", Tensor::from_values<int64_t>(DataType::kInt64, {2}, {1, 3}));
    ir::Value* w = b.op("ConstantOfShape", {shape}, {}, "cos");
    ir::Value* r = b.op("Relu", {x}, {}, "relu");
    b.output(b.op("Mul", {r, w}, {}, "mul"), DataType::kFloat32, {1, 3});
    const debug::ReferenceValues ref(*m, two_feeds(), {});
    const auto constants = debug::constant_values(*m->graph);
    EXPECT_TRUE(constants.count(w));
    EXPECT_TRUE(constants.count(shape));
    EXPECT_FALSE(constants.count(r));
    EXPECT_EQ(debug::input_cut_points(*m), (std::vector<size_t>{1, 2}));
    EXPECT_EQ(debug::output_cut_points(*m, ref), (std::vector<size_t>{1, 2}));
    auto c = debug::cut_inputs(*m, 2, ref);
    EXPECT_EQ(debug::node_names(*c), (std::vector<std::string>{"cos", "mul"}));
    EXPECT_EQ(debug::compute_node_names(*c), std::vector<std::string>{"mul"});
    EXPECT_EQ(debug::compute_node_names(*m), (std::vector<std::string>{"relu", "mul"}));
    EXPECT_EQ(input_names(*c), std::vector<std::string>{"relu_out"});
    for (size_t i = 0; i < 2; ++i) expect_same(run(*c, ref, i)[0].second, ref.find(i, "mul_out"));
}

using test::add_branch;

// t = Neg(x); s = Sigmoid(x); z = Relu(s); y = If(cond) { then: Add(z, t) ; else: Sub(z, t) }
std::unique_ptr<ir::Model> if_model() {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{1, 3});
    ir::Value* cond = b.input("cond", DataType::kBool, std::vector<int64_t>{});
    ir::Value* t = b.op("Neg", {x}, {}, "neg");
    ir::Value* s = b.op("Sigmoid", {x}, {}, "sigmoid");
    ir::Value* z = b.op("Relu", {s}, {}, "relu");
    ir::Node* iff = b.op_multi("If", {cond}, 1, {}, "if");
    for (const auto& [branch, op] : {std::pair{"then_branch", "Add"}, {"else_branch", "Sub"}}) {
        ir::Graph* sub = add_branch(iff, branch);
        ir::GraphBuilder sb(*sub);
        sb.output(sb.op(op, {z, t}, {}, std::string(branch) + "_op"), DataType::kFloat32, {1, 3});
    }
    b.output(iff->output(0), DataType::kFloat32, {1, 3});
    return m;
}

data::FeedList if_feeds() {
    auto feeds = two_feeds();
    feeds[0].emplace_back("cond", Tensor::from_values<uint8_t>(DataType::kBool, {}, {1}));
    feeds[1].emplace_back("cond", Tensor::from_values<uint8_t>(DataType::kBool, {}, {0}));
    return feeds;
}

TEST(DebugSubgraph, IfNodeReadingOuterValuesKeepsThemAvailable) {
    auto m = if_model();
    const debug::ReferenceValues ref(*m, if_feeds(), {});
    const std::string y = m->graph->outputs()[0]->name();
    // Cut at Relu's input: the If reads z (downstream) and t (a side branch) from its branches.
    auto c = debug::cut_inputs(*m, 2, ref);
    EXPECT_EQ(debug::node_names(*c), (std::vector<std::string>{"relu", "if"}));
    EXPECT_EQ(input_names(*c), (std::vector<std::string>{"sigmoid_out", "cond", "neg_out"}));
    for (size_t i = 0; i < 2; ++i) expect_same(run(*c, ref, i)[0].second, ref.find(i, y));
    // Cut at the If itself: everything it reads, directly or from its branches, is an input.
    auto only_if = debug::cut_inputs(*m, 3, ref);
    EXPECT_EQ(debug::node_names(*only_if), std::vector<std::string>{"if"});
    EXPECT_EQ(input_names(*only_if), (std::vector<std::string>{"cond", "relu_out", "neg_out"}));
    for (size_t i = 0; i < 2; ++i) expect_same(run(*only_if, ref, i)[0].second, ref.find(i, y));
    // Output cut before the If keeps the branch-read values' producers.
    auto before = debug::cut_outputs(*m, 2, ref);
    EXPECT_EQ(debug::node_names(*before), (std::vector<std::string>{"sigmoid", "relu"}));
}

// t = Neg(x); v0 = Relu(x); y = Loop(M = 3, cond = true, v0) { v = Add(v_in, t) }
std::unique_ptr<ir::Model> loop_model() {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{1, 3});
    ir::Value* trips = b.constant("trips", Tensor::from_values<int64_t>(DataType::kInt64, {}, {3}));
    ir::Value* cond = b.constant("cond", Tensor::from_values<uint8_t>(DataType::kBool, {}, {1}));
    ir::Value* t = b.op("Neg", {x}, {}, "neg");
    ir::Value* v0 = b.op("Relu", {x}, {}, "relu");
    ir::Node* loop = b.op_multi("Loop", {trips, cond, v0}, 1, {}, "loop");
    ir::Graph* body = add_branch(loop, "body");
    ir::GraphBuilder sb(*body);
    sb.input("i", DataType::kInt64, std::vector<int64_t>{});
    ir::Value* c_in = sb.input("c_in", DataType::kBool, std::vector<int64_t>{});
    ir::Value* v_in = sb.input("v_in", DataType::kFloat32, std::vector<int64_t>{1, 3});
    sb.output(sb.op("Identity", {c_in}, {}, "body_cond"), DataType::kBool, {});
    sb.output(sb.op("Add", {v_in, t}, {}, "body_add"), DataType::kFloat32, {1, 3});
    b.output(loop->output(0), DataType::kFloat32, {1, 3});
    return m;
}

TEST(DebugSubgraph, LoopBodyReadingAnOuterValueGetsItAsAnInput) {
    auto m = loop_model();
    const debug::ReferenceValues ref(*m, two_feeds(), {});
    const std::string y = m->graph->outputs()[0]->name();
    ASSERT_NE(ref.find(0, y), nullptr);
    // Cut at the Loop: v0 (a direct input) and t (read by the body) become inputs; the
    // constant trip count and condition stay initializers.
    EXPECT_EQ(debug::input_cut_points(*m), (std::vector<size_t>{0, 1, 2}));
    auto c = debug::cut_inputs(*m, 2, ref);
    EXPECT_EQ(debug::node_names(*c), std::vector<std::string>{"loop"});
    EXPECT_EQ(input_names(*c), (std::vector<std::string>{"relu_out", "neg_out"}));
    for (size_t i = 0; i < 2; ++i) expect_same(run(*c, ref, i)[0].second, ref.find(i, y));
}

TEST(DebugSubgraph, ReferenceValuesPerSampleAndSymbolicDims) {
    std::vector<std::map<std::string, Tensor>> samples(2);
    samples[0]["a"] = f32({1, 2}, {1, 2});
    samples[1]["a"] = f32({1, 3}, {1, 2, 3});
    samples[0]["b"] = f32({2}, {1, 2});
    samples[1]["b"] = f32({2}, {3, 4});
    const debug::ReferenceValues ref(std::move(samples));
    auto a = ref.spec("a");
    ASSERT_TRUE(a && a->shape);
    EXPECT_EQ((*a->shape)[0], ir::Dim::known(1));
    EXPECT_EQ((*a->shape)[1], ir::Dim::symbolic("a_d1"));
    EXPECT_EQ(*ref.spec("b")->shape, ir::make_shape({2}));
    EXPECT_FALSE(ref.spec("missing"));
    EXPECT_EQ(ref.find(1, "b")->element_as_double(0), 3.0);
    EXPECT_EQ(ref.find(2, "b"), nullptr);
}

TEST(DebugSubgraph, ReferenceRunKeepsEveryIntermediatePerSample) {
    auto m = side_branch_model();
    const debug::ReferenceValues ref(*m, two_feeds(), {});
    ASSERT_EQ(ref.num_samples(), 2u);
    for (const char* name : {"x", "A_out", "B_out", "C_out", "D_out"}) {
        ASSERT_NE(ref.find(0, name), nullptr) << name;
        EXPECT_NE(ref.find(0, name)->element_as_double(0), ref.find(1, name)->element_as_double(0))
            << name;
    }
    EXPECT_EQ(ref.find(0, "A_out")->element_as_double(1), 2.0);  // Neg(-2)
    const auto golden = ref.outputs_for(*m);
    ASSERT_EQ(golden.runners.size(), 1u);
    EXPECT_EQ(golden.runners[0].iterations.size(), 2u);
    EXPECT_EQ(golden.runners[0].iterations[1].outputs[0].first, "D_out");
}

}  // namespace
}  // namespace pg

namespace pg {
namespace {

// Budget 0: nothing is kept; the cut's values come from a re-run per request, equal to the
// kept ones, and a second request for the same values hits the cache.
TEST(DebugSubgraph, OnDemandValuesEqualKeptValues) {
    auto m = side_branch_model();
    const debug::ReferenceValues kept(*m, two_feeds(), {});
    const debug::ReferenceValues lean(*m, two_feeds(), {}, 0);
    EXPECT_FALSE(kept.on_demand());
    ASSERT_TRUE(lean.on_demand());
    EXPECT_EQ(lean.recorded_bytes(), kept.recorded_bytes());
    EXPECT_EQ(lean.find(0, "A_out"), nullptr);  // nothing held before a request
    auto c = debug::cut_inputs(*m, 1, lean);    // specs are known without values
    EXPECT_EQ(input_names(*c), (std::vector<std::string>{"A_out", "C_out"}));
    const auto feeds = lean.feeds_for(*c);
    EXPECT_EQ(lean.reruns(), 1u);
    const auto outs = lean.outputs_for(*c);  // same candidate: cached
    EXPECT_EQ(lean.reruns(), 1u);
    for (size_t i = 0; i < 2; ++i) {
        for (const auto& [name, t] : feeds[i]) expect_same(t, kept.find(i, name));
        for (const auto& [name, t] : outs.runners[0].iterations[i].outputs)
            expect_same(t, kept.find(i, name));
    }
    EXPECT_EQ(lean.find(0, "B_out"), nullptr);  // only the asked-for tensors are held
    lean.feeds_for(*debug::cut_outputs(*m, 1, lean));
    EXPECT_EQ(lean.reruns(), 2u);
    expect_same(*kept.find(1, "B_out"), lean.find(1, "B_out"));
}

}  // namespace
}  // namespace pg
