// Attributes a kernel never looks at: Attrs::tracked notes the lookups, and a session lists the
// attributes of its nodes that no kernel read (runtime::IgnoredAttribute), as ReduceMean-18's
// `axes`, which became an input at opset 18.
#include <gtest/gtest.h>

#include "base/error.h"
#include "ir/builder.h"
#include "ops/attrs.h"
#include "runtime/session.h"

namespace pg {
namespace {

using ir::Attribute;

ir::Node& node_with(ir::Graph& g, std::vector<Attribute> attrs) {
    ir::GraphBuilder b(g);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{2});
    return *b.op("Relu", {x}, std::move(attrs), "n")->producer();
}

TEST(AttrsTracking, UnreadNamesTheAttributesNoLookupTouched) {
    ir::Graph g;
    const ir::Node& n =
        node_with(g, ir::attrs(Attribute::make_int("a", 1), Attribute::make_float("b", 2.0f),
                               Attribute::make_string("c", "x")));
    const ops::Attrs attrs = ops::Attrs::tracked(n);
    EXPECT_EQ(attrs.unread(), (std::vector<std::string>{"a", "b", "c"}));
    EXPECT_EQ(attrs.get_int("a", 0), 1);
    EXPECT_FALSE(attrs.has("missing"));
    const ops::Attrs copy = attrs;  // kernels keep copies; their lookups count too
    EXPECT_TRUE(copy.has("c"));
    EXPECT_EQ(attrs.unread(), (std::vector<std::string>{"b"}));
    // A lookup with the wrong type still looked at the attribute.
    EXPECT_THROW(attrs.get_int("b", 0), Error);
    EXPECT_TRUE(attrs.unread().empty());
}

TEST(AttrsTracking, AnUntrackedAttrsNamesNothing) {
    ir::Graph g;
    const ir::Node& n = node_with(g, ir::attrs(Attribute::make_int("a", 1)));
    EXPECT_TRUE(ops::Attrs(n).unread().empty());
}

// ReduceMean over x[2, 3] with an `axes` attribute of {1}, at `opset`.
std::unique_ptr<ir::Model> reduce_mean_with_axes_attribute(int64_t opset) {
    auto m = ir::new_model(opset);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{2, 3});
    b.output(b.op("ReduceMean", {x},
                  ir::attrs(Attribute::make_ints("axes", {1}), Attribute::make_int("keepdims", 0)),
                  "mean"));
    return m;
}

std::vector<int64_t> output_dims(runtime::Session& s) {
    runtime::Feeds feeds;
    feeds["x"] = ops::RtValue::of(
        Tensor::from_values(DataType::kFloat32, {2, 3}, std::vector<float>{1, 2, 3, 4, 5, 6}));
    return s.run(feeds).at(0).second.tensor().dims();
}

TEST(SessionIgnoredAttributes, AnAttributeTheOpsetDoesNotDefineIsListedAndIgnored) {
    auto m = reduce_mean_with_axes_attribute(18);
    runtime::Session s(*m);
    ASSERT_EQ(s.ignored_attributes().size(), 1u);
    EXPECT_EQ(s.ignored_attributes()[0].name, "axes");
    EXPECT_EQ(s.ignored_attributes()[0].opset, 18);
    EXPECT_EQ(s.ignored_attributes()[0].node->name, "mean");
    EXPECT_EQ(output_dims(s), std::vector<int64_t>{});  // no axes input: every axis reduced
}

TEST(SessionIgnoredAttributes, AnAttributeTheOpsetDefinesIsRead) {
    auto m = reduce_mean_with_axes_attribute(13);
    runtime::Session s(*m);
    EXPECT_TRUE(s.ignored_attributes().empty());
    EXPECT_EQ(output_dims(s), std::vector<int64_t>{2});
}

// One `op` node at `opset` over a float32 input, with attribute `a`: the names its session lists as
// ignored (planning only; nothing runs).
std::vector<std::string> ignored_by(const std::string& op, int64_t opset, Attribute a) {
    auto m = ir::new_model(opset);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{2, 3});
    std::vector<Attribute> attrs;
    attrs.push_back(std::move(a));
    if (op == "Cast") attrs.push_back(Attribute::make_int("to", 1));
    b.output(b.op(op, {x}, std::move(attrs), "n"));
    runtime::Session s(*m);
    std::vector<std::string> names;
    for (const auto& i : s.ignored_attributes()) names.push_back(i.name);
    return names;
}

TEST(SessionIgnoredAttributes, AttributesFollowTheOpsetsThatDefineThem) {
    const std::vector<std::string> none, axes{"axes"};
    // Moved to inputs.
    EXPECT_EQ(ignored_by("Unsqueeze", 13, Attribute::make_ints("axes", {0})), axes);
    EXPECT_EQ(ignored_by("Squeeze", 13, Attribute::make_ints("axes", {0})), axes);
    EXPECT_EQ(ignored_by("Unsqueeze", 11, Attribute::make_ints("axes", {0})), none);
    EXPECT_EQ(ignored_by("DFT", 20, Attribute::make_int("axis", 1)),
              std::vector<std::string>{"axis"});
    EXPECT_EQ(ignored_by("DFT", 17, Attribute::make_int("axis", 1)), none);
    // Added in a later version.
    EXPECT_EQ(ignored_by("Reshape", 13, Attribute::make_int("allowzero", 1)),
              std::vector<std::string>{"allowzero"});
    EXPECT_EQ(ignored_by("Reshape", 14, Attribute::make_int("allowzero", 1)), none);
    EXPECT_EQ(ignored_by("Shape", 13, Attribute::make_int("start", 1)),
              std::vector<std::string>{"start"});
    EXPECT_EQ(ignored_by("Shape", 15, Attribute::make_int("start", 1)), none);
    EXPECT_EQ(ignored_by("Cast", 23, Attribute::make_string("round_mode", "down")),
              std::vector<std::string>{"round_mode"});
    EXPECT_EQ(ignored_by("Cast", 24, Attribute::make_string("round_mode", "down")), none);
    EXPECT_EQ(ignored_by("QuantizeLinear", 21, Attribute::make_int("precision", 10)),
              std::vector<std::string>{"precision"});
    EXPECT_EQ(ignored_by("QuantizeLinear", 23, Attribute::make_int("precision", 10)), none);
    EXPECT_EQ(ignored_by("DequantizeLinear", 21, Attribute::make_int("output_dtype", 10)),
              std::vector<std::string>{"output_dtype"});
    EXPECT_EQ(ignored_by("DequantizeLinear", 23, Attribute::make_int("output_dtype", 10)), none);
    // Training-only attributes are read (for their types), not ignored.
    EXPECT_EQ(ignored_by("Dropout", 10, Attribute::make_float("ratio", 0.2f)), none);
    EXPECT_EQ(ignored_by("Dropout", 13, Attribute::make_int("seed", 3)), none);
    // Opset 1-6's legacy hint is not worth a warning.
    EXPECT_EQ(ignored_by("Relu", 1, Attribute::make_ints("consumed_inputs", {0})), none);
}

TEST(SessionIgnoredAttributes, AnAttributeGivenTwiceIsRefused) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{2});
    b.output(
        b.op("LeakyRelu", {x},
             ir::attrs(Attribute::make_float("alpha", 0.1f), Attribute::make_float("alpha", 0.2f)),
             "leaky"));
    try {
        runtime::Session s(*m);
        FAIL() << "a node with two 'alpha' attributes was planned";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
        EXPECT_NE(std::string(e.what()).find(
                      "node 'leaky' (LeakyRelu) has attribute 'alpha' more than once"),
                  std::string::npos)
            << e.what();
    }
}

}  // namespace
}  // namespace pg
