// Attributes a kernel never looks at: Attrs::tracked notes the lookups, and a session lists the
// attributes of its nodes that no kernel read (runtime::IgnoredAttribute), as ReduceMean-18's
// `axes`, which became an input at opset 18.
#include <gtest/gtest.h>

#include "base/error.h"
#include "ir/builder.h"
#include "ops/attrs.h"
#include "runtime/session.h"
#include "support/expect_error.h"

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

// An op, an opset, one attribute (an int unless `text` is set) and whether the session ignores it.
struct AttributeCase {
    const char* op;
    int64_t opset;
    const char* name;
    int64_t value;
    bool ignored;
    const char* text = nullptr;
};

TEST(SessionIgnoredAttributes, AttributesFollowTheOpsetsThatDefineThem) {
    const AttributeCase cases[] = {
        // Moved to inputs.
        {"Unsqueeze", 13, "axes", 0, true},
        {"Squeeze", 13, "axes", 0, true},
        {"Unsqueeze", 11, "axes", 0, false},
        {"DFT", 20, "axis", 1, true},
        {"DFT", 17, "axis", 1, false},
        // Added in a later version.
        {"Reshape", 13, "allowzero", 1, true},
        {"Reshape", 14, "allowzero", 1, false},
        {"Shape", 13, "start", 1, true},
        {"Shape", 15, "start", 1, false},
        {"Cast", 23, "round_mode", 0, true, "down"},
        {"Cast", 24, "round_mode", 0, false, "down"},
        {"QuantizeLinear", 21, "precision", 10, true},
        {"QuantizeLinear", 23, "precision", 10, false},
        {"DequantizeLinear", 21, "output_dtype", 10, true},
        {"DequantizeLinear", 23, "output_dtype", 10, false},
        // Training-only attributes are read (for their types), not ignored.
        {"Dropout", 13, "seed", 3, false},
    };
    for (const AttributeCase& c : cases) {
        Attribute a = c.text                          ? Attribute::make_string(c.name, c.text)
                      : std::string(c.name) == "axes" ? Attribute::make_ints(c.name, {c.value})
                                                      : Attribute::make_int(c.name, c.value);
        const std::vector<std::string> want =
            c.ignored ? std::vector<std::string>{c.name} : std::vector<std::string>{};
        EXPECT_EQ(ignored_by(c.op, c.opset, std::move(a)), want) << c.op << "-" << c.opset;
    }
    EXPECT_TRUE(ignored_by("Dropout", 10, Attribute::make_float("ratio", 0.2f)).empty());
    // Opset 1-6's legacy hint is not worth a warning.
    EXPECT_TRUE(ignored_by("Relu", 1, Attribute::make_ints("consumed_inputs", {0})).empty());
}

TEST(SessionIgnoredAttributes, AnAttributeGivenTwiceIsRefused) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{2});
    b.output(
        b.op("LeakyRelu", {x},
             ir::attrs(Attribute::make_float("alpha", 0.1f), Attribute::make_float("alpha", 0.2f)),
             "leaky"));
    test::expect_error([&] { runtime::Session s(*m); }, ErrorKind::kInvalidInput,
                       "node 'leaky' (LeakyRelu) has attribute 'alpha' more than once");
}

}  // namespace
}  // namespace pg
