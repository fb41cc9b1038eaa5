// The op table (ops/op_table.h): the definition in force at an opset, domains ("" and "ai.onnx"
// alike), registration order not mattering, and the sorted, de-duplicated name list.
#include "ops/op_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace pg {
namespace {

// OpDef views its names: string literals only.
ops::OpDef def(const char* domain, const char* name, int32_t since) {
    return ops::OpDef{domain, name, since, ops::NumericContract::kExact, nullptr};
}

TEST(OpTable, FindsTheDefinitionInForceAtAnOpset) {
    ops::OpTable t;
    t.add(def("", "Op", 13));
    t.add(def("", "Op", 1));  // registration order does not matter
    t.add(def("", "Op", 7));
    t.add(def("", "Other", 1));
    t.add(def("com.x", "Op", 2));
    EXPECT_EQ(t.find("", "Op", 0), nullptr);  // older than every definition
    EXPECT_EQ(t.find("", "Op", 1)->since_version, 1);
    EXPECT_EQ(t.find("", "Op", 12)->since_version, 7);
    EXPECT_EQ(t.find("ai.onnx", "Op", 20)->since_version, 13);
    EXPECT_EQ(t.find("com.x", "Op", 5)->domain, "com.x");
    EXPECT_EQ(t.find("com.x", "Op", 1), nullptr);
    EXPECT_EQ(t.find("", "Missing", 20), nullptr);
    EXPECT_EQ(t.find("", "Othe", 20), nullptr);
    EXPECT_EQ(t.find("", "Other", 20)->name, "Other");
}

TEST(OpTable, TheAiOnnxDomainIsTheDefaultOne) {
    ops::OpTable t;
    t.add(def("ai.onnx", "Op", 3));
    ASSERT_NE(t.find("", "Op", 3), nullptr);
    EXPECT_EQ(t.find("", "Op", 3)->domain, "");
}

TEST(OpTable, NamesAreSortedAndListedOnce) {
    ops::OpTable t;
    t.add(def("", "B", 1));
    t.add(def("com.x", "A", 1));
    t.add(def("", "A", 5));
    t.add(def("", "A", 1));
    EXPECT_EQ(t.names(), (std::vector<std::string>{"A", "B", "com.x::A"}));
}

TEST(OpTable, TheRegisteredTableFindsCommonOps) {
    const ops::OpTable& t = ops::op_table();
    for (const char* op : {"Conv", "Relu", "MatMul", "BatchNormalization", "LSTM", "Softmax"})
        EXPECT_NE(t.find("", op, 17), nullptr) << op;
    const std::vector<std::string> names = t.names();
    EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
    EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end());
    EXPECT_GT(names.size(), 150u);
}

}  // namespace
}  // namespace pg
