// The ONNX Runtime differential suite's pieces: the attribute changes it shares with the attribute
// sweep (tests/support/attribute_changes.h) and its output comparison (results_differ in
// tests/support/ort_differential.h).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ir/builder.h"
#include "ir/clone.h"
#include "support/attribute_changes.h"
#include "support/op_runner.h"
#include "support/ort_differential.h"

namespace pg {
namespace {

std::unique_ptr<ir::Model> reduce_model() {
    auto m = ir::new_model(13);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{2, 3});
    b.output(b.op("ReduceMax", {x}, ir::attrs(ir::Attribute::make_int("keepdims", 1))));
    return m;
}

TEST(AttributeChanges, EachChangeIsLabelledAndAppliesToAFreshCopy) {
    const auto model = reduce_model();
    test::AttributeExamples examples;
    examples["::ReduceMax"].emplace("axes", ir::Attribute::make_ints("axes", {1}));
    std::vector<std::string> labels;
    test::for_each_attribute_change(
        *model, examples,
        [&](const std::string& label, const test::AttributeTarget& t,
            const test::AttributeVariant* v) {
            labels.push_back(label);
            auto copy = ir::clone_model(*model);
            test::apply_attribute_change(*copy, examples, t, v);
            const ir::Node& n = *copy->graph->nodes()[0];
            if (label == "node 0 (ReduceMax) keepdims = 2") {
                EXPECT_EQ(n.find_attribute("keepdims")->i, 2);
            } else if (label == "node 0 (ReduceMax) keepdims removed") {
                EXPECT_EQ(n.find_attribute("keepdims"), nullptr);
            } else if (label == "node 0 (ReduceMax) axes added") {
                EXPECT_EQ(n.find_attribute("axes")->ints, (std::vector<int64_t>{1}));
            }
        });
    for (const char* want : {"node 0 (ReduceMax) keepdims removed", "node 0 (ReduceMax) keepdims = 2",
                             "node 0 (ReduceMax) keepdims as a float",
                             "node 0 (ReduceMax) axes added", "node 0 (ReduceMax) axes added all -1"})
        EXPECT_NE(std::find(labels.begin(), labels.end(), want), labels.end()) << want;
    // The original is untouched.
    EXPECT_EQ(model->graph->nodes()[0]->find_attribute("keepdims")->i, 1);
}

runners::NamedTensors one(const char* name, Tensor t) {
    runners::NamedTensors out;
    out.emplace_back(name, std::move(t));
    return out;
}

TEST(ResultsDiffer, ToleranceScalesWithTheLargestValue) {
    const auto ref = one("y", test::f32({3}, {100, 0, NAN}));
    EXPECT_EQ(test::results_differ(ref, one("y", test::f32({3}, {100.05f, 5e-4f, NAN}))), "");
    EXPECT_NE(test::results_differ(ref, one("y", test::f32({3}, {100, 2e-3f, NAN}))), "");
    EXPECT_NE(test::results_differ(ref, one("y", test::f32({3}, {100, 0, 1}))), "");
}

TEST(ResultsDiffer, NamesTypeShapeAndStringDifferences) {
    const auto ref = one("y", test::f32({2}, {1, 2}));
    EXPECT_NE(test::results_differ(ref, one("z", test::f32({2}, {1, 2}))).find("is 'z'"),
              std::string::npos);
    EXPECT_NE(test::results_differ(ref, one("y", test::f32({1, 2}, {1, 2}))).find("shape [1,2]"),
              std::string::npos);
    EXPECT_NE(test::results_differ(ref, one("y", test::i64({2}, {1, 2}))).find("type"),
              std::string::npos);
    const auto s = one("s", Tensor::from_strings({2}, {"a", "b "}));
    EXPECT_EQ(test::results_differ(s, one("s", Tensor::from_strings({2}, {"a", "b "}))), "");
    EXPECT_NE(test::results_differ(s, one("s", Tensor::from_strings({2}, {"a", "b"}))).find(
                  "element 1: \"b\", reference \"b \""),
              std::string::npos);
}

}  // namespace
}  // namespace pg
