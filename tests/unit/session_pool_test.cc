// SessionOptions::pool: sessions that share a thread pool use it (threads() reports its size,
// `threads` is ignored) and compute what sessions with pools of their own compute, run after run
// in alternation.
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <vector>

#include "base/thread_pool.h"
#include "ir/builder.h"
#include "runtime/session.h"

namespace pg {
namespace {

// x [96, 256] -> MatMul with a random [256, 256] initializer -> Relu: large enough for the
// product to split over the pool.
std::unique_ptr<ir::Model> matmul_relu() {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<float> w(256 * 256);
    for (float& v : w) v = u(rng);
    ir::Value* x = b.input("x", DataType::kFloat32, {96, 256});
    ir::Value* wt = b.constant("w", Tensor::from_values(DataType::kFloat32, {256, 256}, w));
    ir::Value* y = b.op("Relu", {b.op("MatMul", {x, wt}, {}, "mm")}, {}, "relu");
    b.output(y, DataType::kFloat32, {96, 256});
    return m;
}

runtime::Feeds feeds(uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<float> x(96 * 256);
    for (float& v : x) v = u(rng);
    return {{"x", ops::RtValue::of(Tensor::from_values(DataType::kFloat32, {96, 256}, x))}};
}

std::vector<float> output(runtime::Session& s, uint32_t seed) {
    const runtime::Results r = s.run(feeds(seed));
    const Tensor& t = r.at(0).second.tensor();
    const float* p = t.data<float>();
    return std::vector<float>(p, p + t.numel());
}

TEST(SessionPool, SharedPoolIsUsedAndThreadsIgnored) {
    const auto m = matmul_relu();
    runtime::SessionOptions o;
    o.threads = 1;
    o.pool = std::make_shared<ThreadPool>(3);
    runtime::Session s(*m, o);
    EXPECT_EQ(s.threads(), 3);
    runtime::SessionOptions own;
    own.threads = 2;
    EXPECT_EQ(runtime::Session(*m, own).threads(), 2);
}

TEST(SessionPool, SessionsSharingAPoolMatchSessionsWithTheirOwn) {
    const auto m = matmul_relu();
    runtime::SessionOptions own;
    own.threads = 2;
    runtime::Session alone(*m, own);
    runtime::SessionOptions shared;
    shared.pool = std::make_shared<ThreadPool>(2);
    runtime::Session first(*m, shared), second(*m, shared);
    for (uint32_t seed = 1; seed <= 4; ++seed) {
        const std::vector<float> want = output(alone, seed);
        EXPECT_EQ(output(first, seed), want) << "seed " << seed;
        EXPECT_EQ(output(second, seed), want) << "seed " << seed;
    }
}

}  // namespace
}  // namespace pg
