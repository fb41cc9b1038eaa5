// The error context of a failing step (runtime/plan.h step_context): a plain step names its node,
// op and opset; a fused step names the node it was planned from and each node fused into it.
#include <gtest/gtest.h>

#include <string>

#include "base/error.h"
#include "ir/builder.h"
#include "runtime/session.h"

namespace pg {
namespace {

// Add(a, c) -> Relu where a [2, 3] and c [4] do not broadcast: the Add fails at run time.
std::unique_ptr<ir::Model> failing_add_relu() {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* a = b.input("a", DataType::kFloat32, {2, 3});
    ir::Value* c = b.input("c", DataType::kFloat32, std::vector<int64_t>{4});
    ir::Value* y = b.op("Relu", {b.op("Add", {a, c}, {}, "add")}, {}, "relu");
    b.output(y, DataType::kFloat32, {2, 3});
    return m;
}

std::string run_error(const ir::Model& m, bool fuse) {
    runtime::SessionOptions o;
    o.threads = 1;
    o.fuse = fuse;
    runtime::Session s(m, o);
    runtime::Feeds feeds{{"a", ops::RtValue::of(Tensor::zeros(DataType::kFloat32, {2, 3}))},
                         {"c", ops::RtValue::of(Tensor::zeros(DataType::kFloat32, {4}))}};
    try {
        s.run(feeds);
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

TEST(SessionContext, PlainStepNamesItsNodeOpAndOpset) {
    auto m = failing_add_relu();
    const std::string msg = run_error(*m, false);
    EXPECT_NE(msg.find("while running node 'add' (Add, opset 17)"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("fused with"), std::string::npos) << msg;
}

TEST(SessionContext, FusedStepNamesTheNodesFusedIntoIt) {
    auto m = failing_add_relu();
    runtime::Session probe(*m);
    ASSERT_EQ(probe.fused_nodes(), 1);  // Add -> Relu runs as one element-wise chain step
    const std::string msg = run_error(*m, true);
    EXPECT_NE(msg.find("while running node 'add' (Add, opset 17), fused with 'relu' (Relu)"),
              std::string::npos)
        << msg;
}

}  // namespace
}  // namespace pg
