// How a run binds its feeds and reads the initializers (runtime/feeds.h, the plan's constants in
// runtime/session.cc): initializers are read in place, a feed replaces an initializer that is also
// a graph input for that run only, an initializer can be a graph output, a subgraph reads the
// outer graph's, and models listing every initializer as an input (IR version 3) need only
// their data fed.
#include <gtest/gtest.h>

#include "base/error.h"
#include "ir/builder.h"
#include "runtime/session.h"
#include "support/subgraph_attr.h"

namespace pg {
namespace {

using runtime::Feeds;

ops::RtValue vec(std::vector<float> v) {
    const auto n = static_cast<int64_t>(v.size());
    return ops::RtValue::of(Tensor::from_values(DataType::kFloat32, {n}, v));
}

std::vector<float> values(const runtime::Results& r, const std::string& name) {
    for (const auto& [n, v] : r)
        if (n == name) {
            const Tensor& t = v.tensor();
            return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
        }
    ADD_FAILURE() << "no output " << name;
    return {};
}

// y = x * w, with w an initializer {1, 2} that is also listed as a graph input (after x), as
// models of IR version 3 list every initializer; w is a graph output too.
std::unique_ptr<ir::Model> default_weight_model() {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{2});
    ir::Value* w = b.constant_f32("w", {2}, {1, 2});
    m->graph->add_input(w);
    b.output(b.op("Mul", {x, w}, {}, "mul"), DataType::kFloat32, {2});
    m->graph->set_outputs({m->graph->outputs()[0], w});
    return m;
}

TEST(SessionFeeds, AnInitializerInputKeepsItsDefaultUnlessFed) {
    auto m = default_weight_model();
    runtime::Session s(*m);
    const std::string y = m->graph->outputs()[0]->name();
    EXPECT_EQ(values(s.run({{"x", vec({3, 4})}}), y), (std::vector<float>{3, 8}));
    const runtime::Results fed = s.run({{"x", vec({3, 4})}, {"w", vec({10, 100})}});
    EXPECT_EQ(values(fed, y), (std::vector<float>{30, 400}));
    EXPECT_EQ(values(fed, "w"), (std::vector<float>{10, 100}));
    // The feed held for its run only.
    const runtime::Results again = s.run({{"x", vec({3, 4})}});
    EXPECT_EQ(values(again, y), (std::vector<float>{3, 8}));
    EXPECT_EQ(values(again, "w"), (std::vector<float>{1, 2}));
}

TEST(SessionFeeds, UnknownAndMissingFeedsAreNamed) {
    auto m = default_weight_model();
    runtime::Session s(*m);
    try {
        s.run({{"x", vec({3, 4})}, {"nope", vec({1})}});
        FAIL() << "an unknown feed ran";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
        EXPECT_NE(std::string(e.what()).find("no input named 'nope'"), std::string::npos);
    }
    try {
        s.run({{"w", vec({1, 1})}});
        FAIL() << "a run without x ran";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
        EXPECT_NE(std::string(e.what()).find("no value given for input 'x'"), std::string::npos);
    }
}

// A graph listing its input twice: the feed binds both entries.
TEST(SessionFeeds, AnInputListedTwiceTakesTheFeedForBoth) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{2});
    m->graph->add_input(x);
    b.output(b.op("Neg", {x}, {}, "neg"), DataType::kFloat32, {2});
    runtime::Session s(*m);
    EXPECT_EQ(values(s.run({{"x", vec({1, -2})}}), m->graph->outputs()[0]->name()),
              (std::vector<float>{-1, 2}));
}

// Many initializer inputs after the data, none fed: each keeps its value.
TEST(SessionFeeds, ManyInitializerInputsNeedOnlyTheData) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* y = b.input("x", DataType::kFloat32, std::vector<int64_t>{2});
    for (int i = 0; i < 300; ++i) {
        ir::Value* w = b.constant_f32("w" + std::to_string(i), {2}, {1, static_cast<float>(i)});
        m->graph->add_input(w);
        y = b.op("Add", {y, w}, {}, "add" + std::to_string(i));
    }
    b.output(y, DataType::kFloat32, {2});
    runtime::Session s(*m);
    const runtime::Results r = s.run({{"x", vec({0, 0})}});
    EXPECT_EQ(values(r, y->name()), (std::vector<float>{300, 299 * 300 / 2}));
}

// An If branch reads the outer graph's initializer.
TEST(SessionFeeds, ASubgraphReadsAnOuterInitializer) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* cond = b.input("cond", DataType::kBool, std::vector<int64_t>{});
    ir::Value* k = b.constant_f32("k", {3}, {1, -2, 3});
    ir::Node* iff = b.op_multi("If", {cond}, 1, {}, "if");
    for (const char* branch : {"then_branch", "else_branch"}) {
        ir::GraphBuilder sb(*test::add_branch(iff, branch));
        const char* op = std::string(branch) == "then_branch" ? "Neg" : "Abs";
        sb.output(sb.op(op, {k}, {}, std::string(branch) + "_op"), DataType::kFloat32, {3});
    }
    b.output(iff->output(0), DataType::kFloat32, {3});
    runtime::Session s(*m);
    const auto flag = [](bool v) {
        return ops::RtValue::of(Tensor::from_values(DataType::kBool, {}, std::vector<uint8_t>{v}));
    };
    const std::string out = iff->output(0)->name();
    EXPECT_EQ(values(s.run({{"cond", flag(true)}}), out), (std::vector<float>{-1, 2, -3}));
    EXPECT_EQ(values(s.run({{"cond", flag(false)}}), out), (std::vector<float>{1, 2, 3}));
}

}  // namespace
}  // namespace pg
