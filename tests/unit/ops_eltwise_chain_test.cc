// Fused element-wise chains (ops/eltwise_chain.h): the float32 fast path against the plain
// kernels run one after another, bit for bit (NaNs as NaNs), on random chains, shapes and operand
// layouts (the chain value's shape, one value, per-channel and other broadcast blocks), with NaN,
// infinities and signed zeros among the values, with AVX-512 and with the scalar loops; layouts
// it does not cover are declined.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <utility>

#include "base/thread_pool.h"
#include "ops/eltwise_chain.h"
#include "ops/vec_math.h"
#include "support/op_runner.h"

namespace pg {
namespace {

using Dims = std::vector<int64_t>;
using Op = ops::EltwiseLink::Op;

Tensor random_f32(const Dims& dims, std::mt19937& rng) {
    std::uniform_real_distribution<float> u(-2.0f, 2.0f);
    Tensor t = Tensor::zeros(DataType::kFloat32, dims);
    float* p = reinterpret_cast<float*>(t.mutable_bytes());
    const float special[] = {0.0f, -0.0f, std::numeric_limits<float>::infinity(),
                             -std::numeric_limits<float>::infinity(),
                             std::numeric_limits<float>::quiet_NaN()};
    for (uint64_t i = 0; i < t.numel(); ++i)
        p[i] = rng() % 16 == 0 ? special[rng() % std::size(special)] : u(rng);
    return t;
}

const char* op_name(Op op) {
    switch (op) {
        case Op::kAdd:
            return "Add";
        case Op::kSub:
            return "Sub";
        case Op::kMul:
            return "Mul";
        case Op::kDiv:
            return "Div";
        case Op::kRelu:
            return "Relu";
        case Op::kErf:
            return "Erf";
    }
    return "";
}

// A covered operand shape for output dims d: the same, one value, or one run of axes kept with
// at least 8 trailing elements.
Dims covered_operand(const Dims& d, std::mt19937& rng) {
    const int kind = static_cast<int>(rng() % 3);
    if (kind == 0) return d;
    if (kind == 1) return rng() % 2 ? Dims{} : Dims(d.size(), 1);
    Dims o(d.size(), 1);
    const size_t a = rng() % d.size(), b = a + 1 + rng() % (d.size() - a);
    int64_t inner = 1;
    for (size_t i = b; i < d.size(); ++i) inner *= d[i];
    if (inner < 8) return d;
    for (size_t i = a; i < b; ++i) o[i] = d[i];
    while (o.size() > 1 && o.front() == 1 && rng() % 2) o.erase(o.begin());  // lower rank
    return o;
}

// a and b hold the same bits, but for NaNs: a NaN where b has one, of any sign and payload (which
// operand's NaN a product of two NaNs keeps depends on how the compiler ordered the
// commutative operation: IEEE 754 leaves it open).
bool same_values(const Tensor& a, const Tensor& b) {
    if (a.nbytes() != b.nbytes()) return false;
    const float* p = reinterpret_cast<const float*>(a.bytes());
    const float* q = reinterpret_cast<const float*>(b.bytes());
    for (uint64_t i = 0; i < b.numel(); ++i)
        if (std::isnan(q[i]) ? !std::isnan(p[i]) : std::memcmp(p + i, q + i, sizeof(float)) != 0)
            return false;
    return true;
}

// 200 random chains, the fast path against the plain ops, in the current vec ISA.
void check_random_chains(uint32_t seed) {
    std::mt19937 rng(seed);
    ThreadPool pool(2);
    const Op kOps[] = {Op::kAdd, Op::kSub, Op::kMul, Op::kDiv, Op::kRelu, Op::kErf};
    for (int t = 0; t < 200; ++t) {
        Dims d;
        for (int i = 0, rank = 1 + t % 4; i < rank; ++i)
            d.push_back(1 + static_cast<int64_t>(rng() % (t % 10 == 0 ? 40 : 9)));
        if (t % 25 == 0) d = {1, 64, 56, 56};  // several chunks over the pool
        const Tensor x = random_f32(d, rng);
        std::vector<ops::EltwiseLink> links;
        std::vector<Tensor> operands;
        for (int k = 0, n = 1 + static_cast<int>(rng() % 4); k < n; ++k) {
            ops::EltwiseLink l{kOps[rng() % std::size(kOps)], rng() % 2 == 1};
            if (ops::eltwise_unary(l.op)) l.value_second = false;
            if (!ops::eltwise_unary(l.op))
                operands.push_back(random_f32(covered_operand(d, rng), rng));
            links.push_back(l);
        }
        std::vector<const Tensor*> ptrs;
        for (const Tensor& o : operands) ptrs.push_back(&o);
        Tensor fast;
        ASSERT_TRUE(ops::eltwise_chain_fast(links, x, ptrs, &fast, t % 2 ? &pool : nullptr))
            << "case " << t;
        Tensor want = x;
        size_t next = 0;
        for (const auto& l : links) {
            if (ops::eltwise_unary(l.op)) {
                want = test::run_op(op_name(l.op), {want}, {}, 14)[0];
                continue;
            }
            const Tensor& o = operands[next++];
            want = test::run_op(op_name(l.op),
                                l.value_second ? std::vector{o, want} : std::vector{want, o}, {},
                                14)[0];
        }
        ASSERT_EQ(fast.dims(), want.dims()) << "case " << t;
        ASSERT_TRUE(same_values(fast, want)) << "case " << t;
    }
}

TEST(OpsEltwiseChain, FastMatchesThePlainOpsOnRandomChains) {
    check_random_chains(41);  // AVX-512 where the CPU has it
}

TEST(OpsEltwiseChain, ScalarLoopsMatchThePlainOpsToo) {
    ops::vec_force_isa(ops::VecIsa::kScalar);
    check_random_chains(43);
    ops::vec_reset_isa();
}

// Blocks longer than a chunk (a [3, 1, 1] operand over 150 x 150 planes: 22500 elements against
// chunks of 16384) and a chain with no broadcast block at all (the transformer's Gelu shape),
// both split over the pool: the plain ops' values.
TEST(OpsEltwiseChain, ChunksCrossLongBlocksAndWholeTensors) {
    std::mt19937 rng(7);
    ThreadPool pool(2);
    const std::pair<Dims, Dims> cases[] = {{{1, 3, 150, 150}, {3, 1, 1}},
                                           {{1, 128, 1024}, {1, 128, 1024}}};
    for (const auto& [d, od] : cases) {
        const Tensor x = random_f32(d, rng), a = random_f32(od, rng), b = random_f32(d, rng);
        const std::vector<ops::EltwiseLink> links{{Op::kMul}, {Op::kErf}, {Op::kAdd}, {Op::kRelu}};
        Tensor fast;
        ASSERT_TRUE(ops::eltwise_chain_fast(links, x, {&a, &b}, &fast, &pool));
        Tensor want = test::run_op("Mul", {x, a}, {}, 14)[0];
        want = test::run_op("Erf", {want}, {}, 14)[0];
        want = test::run_op("Add", {want, b}, {}, 14)[0];
        want = test::run_op("Relu", {want}, {}, 14)[0];
        EXPECT_TRUE(same_values(fast, want)) << d.size();
    }
}

TEST(OpsEltwiseChain, UncoveredLayoutsAndTypesAreDeclined) {
    std::mt19937 rng(42);
    const Tensor x = random_f32({2, 3, 4, 5}, rng);
    const std::vector<ops::EltwiseLink> add{{Op::kAdd}};
    Tensor out;
    const Tensor small_blocks = random_f32({4, 1}, rng);  // constant over 5 elements: < 8
    EXPECT_FALSE(ops::eltwise_chain_fast(add, x, {&small_blocks}, &out, nullptr));
    const Tensor gap = random_f32({2, 1, 4, 1}, rng);  // two runs of axes
    EXPECT_FALSE(ops::eltwise_chain_fast(add, x, {&gap}, &out, nullptr));
    const Tensor bigger = random_f32({3, 2, 3, 4, 5}, rng);  // would grow the output
    EXPECT_FALSE(ops::eltwise_chain_fast(add, x, {&bigger}, &out, nullptr));
    const Tensor f64 = Tensor::zeros(DataType::kFloat64, {2, 3, 4, 5});
    EXPECT_FALSE(ops::eltwise_chain_fast(add, x, {&f64}, &out, nullptr));
    EXPECT_FALSE(ops::eltwise_chain_fast(add, f64, {&x}, &out, nullptr));
    const Tensor per_channel = random_f32({3, 1, 1}, rng);  // 20 trailing elements: covered
    EXPECT_TRUE(ops::eltwise_chain_fast(add, x, {&per_channel}, &out, nullptr));
}

}  // namespace
}  // namespace pg
