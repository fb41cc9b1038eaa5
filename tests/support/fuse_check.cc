// Fusion checks (fuse_check.h).
#include "support/fuse_check.h"

#include <gtest/gtest.h>

#include <cstring>

#include "runners/ref_runner.h"

namespace pg::test {

namespace {

class CountingHook : public runtime::NodeHook {
  public:
    size_t nodes = 0;
    void on_node(const ir::Node&, const std::vector<const ops::RtValue*>&,
                 const std::vector<ops::RtValue>&) override {
        ++nodes;
    }
};

}  // namespace

runtime::Feeds random_fuse_feeds(const ir::Model& m, DataType dt) {
    std::mt19937 rng(3);
    runtime::Feeds feeds;
    for (const auto& meta : runners::graph_input_metadata(*m.graph)) {
        std::vector<int64_t> dims;
        for (const auto& d : *meta.shape) dims.push_back(*d.value);
        feeds[meta.name] = ops::RtValue::of(random_tensor(dt, dims, false, rng));
    }
    return feeds;
}

void expect_same_results(const runtime::Results& a, const runtime::Results& b) {
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
        const Tensor& x = a[i].second.tensor();
        const Tensor& y = b[i].second.tensor();
        ASSERT_EQ(a[i].first, b[i].first);
        ASSERT_EQ(x.dims(), y.dims());
        ASSERT_EQ(x.nbytes(), y.nbytes());
        EXPECT_EQ(std::memcmp(x.bytes(), y.bytes(), x.nbytes()), 0) << a[i].first;
    }
}

int check_fused_matches_plain(const ir::Model& m, DataType dt) {
    runtime::SessionOptions on, off;
    on.threads = off.threads = 2;
    off.fuse = false;
    // Blocked regions sum their Convs as gemm_direct does, which the plain Convs need not
    // (tests/unit/session_nchwc_test.cc checks them); every other fusion keeps the bits.
    const bool blocked = runtime::set_nchwc_layout(false);
    runtime::Session fused(m, on), plain(m, off);
    runtime::set_nchwc_layout(blocked);
    EXPECT_EQ(plain.fused_nodes(), 0);
    const runtime::Feeds feeds = random_fuse_feeds(m, dt);
    const runtime::Results want = plain.run(feeds);
    expect_same_results(fused.run(feeds), want);
    CountingHook hook;  // with a hook the fused session takes the plain steps
    expect_same_results(fused.run(feeds, &hook), want);
    EXPECT_EQ(hook.nodes, m.graph->nodes().size());
    return fused.fused_nodes();
}

Tensor random_tensor(DataType dt, std::vector<int64_t> dims, bool positive, std::mt19937& rng) {
    std::uniform_real_distribution<double> u(-1.0, 1.0), pos(0.5, 2.0);
    Tensor t = Tensor::zeros(dt, std::move(dims));
    if (dt != DataType::kFloat32 && dt != DataType::kFloat64) return t;  // zeros: no values to draw
    for (uint64_t i = 0; i < t.numel(); ++i) {
        const double v = positive ? pos(rng) : u(rng);
        if (dt == DataType::kFloat32)
            reinterpret_cast<float*>(t.mutable_bytes())[i] = static_cast<float>(v);
        else
            reinterpret_cast<double*>(t.mutable_bytes())[i] = v;
    }
    return t;
}

ir::Value* batch_norm(ir::GraphBuilder& b, ir::Value* y, DataType dt, int64_t c, std::mt19937& rng,
                      const std::string& name) {
    auto t = [&](bool positive) { return random_tensor(dt, {c}, positive, rng); };
    return b.op("BatchNormalization",
                {y, b.constant(name + "_s", t(false)), b.constant(name + "_b", t(false)),
                 b.constant(name + "_mean", t(false)), b.constant(name + "_var", t(true))},
                {}, name);
}

ir::Value* int64_constant(ir::GraphBuilder& b, const std::string& name,
                          const std::vector<int64_t>& v) {
    return b.constant(name, Tensor::from_values<int64_t>(DataType::kInt64,
                                                         {static_cast<int64_t>(v.size())}, v));
}

}  // namespace pg::test
