// passes::set_outputs / mark_all_outputs / exclude_outputs.
#include <gtest/gtest.h>

#include "base/error.h"
#include "ir/builder.h"
#include "passes/outputs.h"

namespace pg {
namespace {

std::unique_ptr<ir::Model> small_model() {
    auto m = ir::new_model(17);
    ir::Graph& g = *m->graph;
    ir::GraphBuilder b(g);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{2});
    g.add_node("Constant", {}, {"c"});
    g.add_node("Add", {x, g.find_value("c")}, {"t"});
    g.add_node("Relu", {g.find_value("t")}, {"y"});
    b.output(g.find_value("y"));
    return m;
}

TEST(PassesOutputs, MarkAllSkipsConstantsInNodeOrder) {
    auto m = small_model();
    passes::OutputsReport r = passes::mark_all_outputs(*m->graph);
    EXPECT_EQ(r.outputs, (std::vector<std::string>{"t", "y"}));
    EXPECT_EQ(m->graph->outputs()[0]->name(), "t");
}

TEST(PassesOutputs, SetListsEveryMissingName) {
    auto m = small_model();
    try {
        passes::set_outputs(*m->graph, {"t", "a", "b"});
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
        EXPECT_NE(std::string(e.what()).find("a, b"), std::string::npos);
    }
    EXPECT_EQ(passes::set_outputs(*m->graph, {"c", "t"}).outputs,
              (std::vector<std::string>{"c", "t"}));
}

TEST(PassesOutputs, ExcludeRemovesNamedOutputs) {
    auto m = small_model();
    passes::mark_all_outputs(*m->graph);
    EXPECT_EQ(passes::exclude_outputs(*m->graph, {"t"}).outputs, std::vector<std::string>{"y"});
    EXPECT_THROW(passes::exclude_outputs(*m->graph, {"t"}), Error);
}

}  // namespace
}  // namespace pg
