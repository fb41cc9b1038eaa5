// Identity and inference Dropout steps skipped in runs without a hook (runtime/fuse.h,
// skip_identities): their readers read the input's slot, the outputs stay bit for bit the plain
// steps', and a node whose output is a graph output, read by a subgraph, a used mask or a
// training_mode that is not a constant false keeps its step.
#include <gtest/gtest.h>

#include <random>

#include "ir/builder.h"
#include "runtime/session.h"
#include "support/fuse_check.h"
#include "support/subgraph_attr.h"

namespace pg {
namespace {

using test::check_fused_matches_plain;

ir::Value* bool_constant(ir::GraphBuilder& b, const std::string& name, bool v) {
    return b.constant(name, Tensor::from_values<uint8_t>(DataType::kBool, {}, {uint8_t(v)}));
}

// x -> Sigmoid = a; a -> Identity -> Identity -> Tanh = c; a + c (a read after the skipped
// steps: its release moves to the Add); c -> Dropout (opset 13, training_mode false) -> Neg.
std::unique_ptr<ir::Model> identity_chain() {
    auto m = ir::new_model(13);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, {2, 3, 5});
    ir::Value* a = b.op("Sigmoid", {x}, {}, "a");
    ir::Value* i2 = b.op("Identity", {b.op("Identity", {a}, {}, "i1")}, {}, "i2");
    ir::Value* c = b.op("Tanh", {i2}, {}, "c");
    ir::Value* d =
        b.op("Dropout", {c, b.constant_f32("ratio", {}, {0.5f}), bool_constant(b, "mode", false)},
             {}, "drop");
    b.output(b.op("Add", {a, c}, {}, "sum"), DataType::kFloat32, {2, 3, 5});
    b.output(b.op("Neg", {d}, {}, "neg"), DataType::kFloat32, {2, 3, 5});
    return m;
}

TEST(SessionSkipIdentity, IdentitiesAndInferenceDropoutsAreSkipped) {
    EXPECT_EQ(check_fused_matches_plain(*identity_chain()), 3);
}

// A graph input read through an Identity, twice in a row (run after run reuses the plan).
TEST(SessionSkipIdentity, AGraphInputIsReadThroughThem) {
    auto m = ir::new_model(13);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, {4, 4});
    b.output(b.op("Relu", {b.op("Identity", {x}, {}, "id")}, {}, "relu"), DataType::kFloat32,
             {4, 4});
    EXPECT_EQ(check_fused_matches_plain(*m), 1);
    runtime::Session s(*m, runtime::SessionOptions{});
    const runtime::Feeds feeds = test::random_fuse_feeds(*m);
    test::expect_same_results(s.run(feeds), s.run(feeds));
}

// Kept: an Identity whose output is also a graph output, a Dropout whose mask is read, a Dropout
// whose training_mode is a graph input, an Identity read only by an If's branch.
TEST(SessionSkipIdentity, StepsWhoseOutputIsNeededStay) {
    auto m = ir::new_model(13);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, {3, 4});
    ir::Value* cond = b.input("cond", DataType::kBool, std::vector<int64_t>{});
    ir::Value* mode = b.input("mode", DataType::kBool, std::vector<int64_t>{});
    ir::Value* kept = b.op("Identity", {x}, {}, "out_id");
    b.output(kept, DataType::kFloat32, {3, 4});
    b.output(b.op("Exp", {kept}, {}, "exp"), DataType::kFloat32, {3, 4});
    ir::Node* masked = b.op_multi("Dropout", {x}, 2, {}, "masked");
    b.output(b.op("Not", {masked->output(1)}, {}, "not"), DataType::kBool, {3, 4});
    b.output(b.op("Neg", {masked->output(0)}, {}, "neg"), DataType::kFloat32, {3, 4});
    ir::Value* trained = b.op("Dropout", {x, b.constant_f32("ratio", {}, {0.0f}), mode}, {}, "t");
    b.output(b.op("Abs", {trained}, {}, "abs"), DataType::kFloat32, {3, 4});
    ir::Value* outer = b.op("Identity", {x}, {}, "outer_id");
    ir::Node* iff = b.op_multi("If", {cond}, 1, {}, "if");
    for (const char* branch : {"then_branch", "else_branch"}) {
        ir::GraphBuilder sb(*test::add_branch(iff, branch));
        sb.output(sb.op("Sqrt", {outer}, {}, std::string(branch) + "_op"), DataType::kFloat32, {});
    }
    b.output(iff->output(0), DataType::kFloat32, {});
    runtime::SessionOptions fused, plain;
    plain.fuse = false;
    runtime::Session a(*m, fused), p(*m, plain);
    EXPECT_EQ(a.fused_nodes(), 0);
    runtime::Feeds feeds;
    std::mt19937 rng(3);
    feeds["x"] = ops::RtValue::of(test::random_tensor(DataType::kFloat32, {3, 4}, true, rng));
    feeds["cond"] = ops::RtValue::of(Tensor::from_values<uint8_t>(DataType::kBool, {}, {1}));
    feeds["mode"] = ops::RtValue::of(Tensor::from_values<uint8_t>(DataType::kBool, {}, {1}));
    test::expect_same_results(a.run(feeds), p.run(feeds));
}

}  // namespace
}  // namespace pg
