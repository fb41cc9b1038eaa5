// Initializers without values (weight-stripped models, external data not loaded): a session
// whose graph or subgraphs read one is refused at construction with kInvalidInput naming it; one
// nobody reads is harmless.
#include <gtest/gtest.h>

#include "base/error.h"
#include "ir/builder.h"
#include "runtime/session.h"
#include "support/subgraph_attr.h"

namespace pg {
namespace {

// x[2] * w[2] -> y; an unread placeholder "spare" beside it.
std::unique_ptr<ir::Model> mul_model(bool strip_w) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{2});
    ir::Value* w = strip_w ? b.constant("w", Tensor::placeholder(DataType::kFloat32, {2}))
                           : b.constant_f32("w", {2}, {1, 2});
    b.constant("spare", Tensor::placeholder(DataType::kFloat32, {8}));
    b.output(b.op("Mul", {x, w}, {}, "mul"), DataType::kFloat32, {2});
    return m;
}

std::string refusal(const ir::Model& m) {
    try {
        runtime::Session s(m);
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput) << e.what();
        return e.what();
    }
    return "";
}

TEST(SessionStripped, AReadPlaceholderIsRefusedByName) {
    const std::string what = refusal(*mul_model(true));
    EXPECT_NE(what.find("1 initializer(s) hold no values"), std::string::npos) << what;
    EXPECT_NE(what.find("    w"), std::string::npos) << what;
    EXPECT_EQ(what.find("spare"), std::string::npos) << what;
}

TEST(SessionStripped, AnUnreadPlaceholderIsHarmless) {
    EXPECT_EQ(refusal(*mul_model(false)), "");
}

TEST(SessionStripped, ASubgraphsPlaceholderIsRefused) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* cond = b.input("cond", DataType::kBool, std::vector<int64_t>{});
    ir::Node* iff = b.op_multi("If", {cond}, 1, {}, "if");
    for (const char* branch : {"then_branch", "else_branch"}) {
        ir::GraphBuilder sb(*test::add_branch(iff, branch));
        ir::Value* k =
            sb.constant(std::string(branch) + "_k", Tensor::placeholder(DataType::kFloat32, {3}));
        sb.output(sb.op("Neg", {k}, {}, std::string(branch) + "_neg"), DataType::kFloat32, {3});
    }
    b.output(iff->output(0), DataType::kFloat32, {3});
    const std::string what = refusal(*m);
    EXPECT_NE(what.find("2 initializer(s)"), std::string::npos) << what;
    EXPECT_NE(what.find("then_branch_k"), std::string::npos) << what;
}

}  // namespace
}  // namespace pg
