// Graph's name index (ir/graph.h): its keys view the values' own names, so lookups must follow
// add_value, rename_value and remove_value for short (inline) and long (heap) names alike.
#include <gtest/gtest.h>

#include <string>

#include "base/error.h"
#include "ir/graph.h"

namespace pg {
namespace {

const std::string kLong = "densenet0_stage3_batchnorm12_running_mean";  // beyond the inline size

TEST(GraphNames, FindsAddedValuesByShortAndLongNames) {
    ir::Graph g;
    ir::Value* a = g.add_value("a");
    ir::Value* b = g.add_value(kLong);
    EXPECT_EQ(g.find_value("a"), a);
    EXPECT_EQ(g.find_value(kLong), b);
    EXPECT_EQ(g.find_value("b"), nullptr);
    EXPECT_THROW(g.add_value(std::string(kLong)), Error);  // duplicate
}

TEST(GraphNames, RenameReKeysTheIndex) {
    ir::Graph g;
    ir::Value* v = g.add_value("x");
    for (int i = 0; i < 200; ++i) g.add_value("filler_value_with_a_long_name_" + std::to_string(i));
    g.rename_value(v, kLong);
    EXPECT_EQ(g.find_value("x"), nullptr);
    EXPECT_EQ(g.find_value(kLong), v);
    EXPECT_EQ(v->name(), kLong);
    g.rename_value(v, "y");  // long back to short: the key must not view the old storage
    EXPECT_EQ(g.find_value(kLong), nullptr);
    EXPECT_EQ(g.find_value("y"), v);
    ir::Value* w = g.add_value(kLong);  // the old name is free again
    EXPECT_EQ(g.find_value(kLong), w);
    EXPECT_THROW(g.rename_value(w, "y"), Error);
}

TEST(GraphNames, RemovedValuesLeaveTheIndex) {
    ir::Graph g;
    ir::Value* v = g.add_value(kLong);
    g.remove_value(v);
    EXPECT_EQ(g.find_value(kLong), nullptr);
    EXPECT_NE(g.add_value(kLong), nullptr);
}

}  // namespace
}  // namespace pg
