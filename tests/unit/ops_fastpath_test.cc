// Fast paths of the data-movement, normalization and elementwise kernels diffed against the
// plain kernels on random shapes and types (Conv/GEMM: ops_conv_test.cc / ops_matmul_test.cc,
// pooling: ops_pool_test.cc), the variadic Sum/Max/Min and the recurrent product split over the
// pool. Also the storage helpers they rely on (Tensor::uninitialized,
// Tensor::reshaped).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <random>
#include <string>

#include "base/error.h"
#include "base/thread_pool.h"
#include "ops/broadcast.h"
#include "ops/normalization_kernels.h"
#include "ops/tensor_shape_take.h"
#include "runtime/session.h"
#include "support/op_runner.h"
#include "zoo/zoo.h"

namespace pg {
namespace {

using Dims = std::vector<int64_t>;

// A tensor of `dt` with random bytes (strings: random short strings).
Tensor random_tensor(DataType dt, Dims dims, std::mt19937& rng) {
    if (dt == DataType::kString) {
        std::vector<std::string> v(static_cast<size_t>(*checked_numel(dims)));
        for (auto& s : v) s = std::to_string(rng() % 1000);
        return Tensor::from_strings(std::move(dims), std::move(v));
    }
    Tensor t = Tensor::zeros(dt, std::move(dims));
    uint8_t* p = t.mutable_bytes();
    for (uint64_t i = 0; i < t.nbytes(); ++i) p[i] = static_cast<uint8_t>(rng());
    return t;
}

Dims random_dims(std::mt19937& rng, int rank, int64_t max_dim) {
    Dims d;
    for (int i = 0; i < rank; ++i) d.push_back(1 + static_cast<int64_t>(rng() % max_dim));
    return d;
}

// Fixed-size types take the fast paths; strings and packed int4 fall back to the plain ones.
const DataType kTypes[] = {DataType::kFloat32, DataType::kInt8, DataType::kInt64,
                           DataType::kFloat16, DataType::kBool, DataType::kFloat64,
                           DataType::kString,  DataType::kInt4};

TEST(OpsFastPath, ConcatMatchesPlainOnRandomShapes) {
    std::mt19937 rng(21);
    ThreadPool pool(2);
    for (int t = 0; t < 120; ++t) {
        const DataType dt = kTypes[t % std::size(kTypes)];
        const int rank = 1 + t % 4;
        const size_t axis = static_cast<size_t>(rng() % rank);
        Dims out = random_dims(rng, rank, t % 10 == 0 ? 40 : 6);
        out[axis] = 0;
        std::vector<Tensor> parts;
        for (int k = 0, n = 1 + static_cast<int>(rng() % 4); k < n; ++k) {
            Dims d = out;
            d[axis] = static_cast<int64_t>(rng() % 5) + (k == 0);
            out[axis] += d[axis];
            parts.push_back(random_tensor(dt, d, rng));
        }
        std::vector<const Tensor*> in;
        for (const Tensor& p : parts) in.push_back(&p);
        ThreadPool* p = t % 2 ? &pool : nullptr;
        const Tensor fast = ops::concat_fast(in, out, axis, p);
        const Tensor plain = ops::concat_plain(in, out, axis, p);
        ASSERT_TRUE(fast.same_contents(plain)) << "case " << t;
    }
}

TEST(OpsFastPath, LargeConcatAndTransposeRunInParallel) {
    std::mt19937 rng(22);
    ThreadPool pool(2);
    const Tensor a = random_tensor(DataType::kFloat32, {300, 200, 3}, rng);
    const Tensor b = random_tensor(DataType::kFloat32, {300, 100, 3}, rng);
    const Tensor fast = ops::concat_fast({&a, &b}, {300, 300, 3}, 1, &pool);
    EXPECT_TRUE(fast.same_contents(ops::concat_plain({&a, &b}, {300, 300, 3}, 1, nullptr)));
    // A channel concat of one image: rows longer than a piece, cut and shared by the pool.
    const Tensor c = random_tensor(DataType::kFloat32, {1, 100, 401}, rng);
    const Tensor d = random_tensor(DataType::kFloat32, {1, 60, 401}, rng);
    EXPECT_TRUE(ops::concat_fast({&c, &d, &c}, {1, 260, 401}, 1, &pool)
                    .same_contents(ops::concat_plain({&c, &d, &c}, {1, 260, 401}, 1, nullptr)));
    for (const Dims& perm : {Dims{2, 0, 1}, Dims{1, 0, 2}, Dims{0, 2, 1}})
        EXPECT_TRUE(ops::transpose_fast(a, perm, &pool)
                        .same_contents(ops::transpose_plain(a, perm, nullptr)));
}

TEST(OpsFastPath, TransposeMatchesPlainOnRandomShapes) {
    std::mt19937 rng(23);
    ThreadPool pool(2);
    for (int t = 0; t < 150; ++t) {
        const DataType dt = kTypes[t % std::size(kTypes)];
        const int rank = 1 + t % 5;
        const Dims dims = random_dims(rng, rank, t % 10 == 0 ? 70 : 7);
        Dims perm(static_cast<size_t>(rank));
        for (int i = 0; i < rank; ++i) perm[static_cast<size_t>(i)] = i;
        std::shuffle(perm.begin(), perm.end(), rng);
        const Tensor x = random_tensor(dt, dims, rng);
        ThreadPool* p = t % 2 ? &pool : nullptr;
        ASSERT_TRUE(
            ops::transpose_fast(x, perm, p).same_contents(ops::transpose_plain(x, perm, nullptr)))
            << "case " << t;
    }
}

// Perms that keep trailing axes in place (channel shuffles: (n, g, c/g, h, w) -> (n, c/g, g, h,
// w)) and dims of 1: the fast path merges those axes into one contiguous run per copy.
TEST(OpsFastPath, TransposeWithContiguousRunsMatchesPlain) {
    std::mt19937 rng(31);
    ThreadPool pool(2);
    for (int t = 0; t < 120; ++t) {
        const DataType dt = kTypes[t % 6];
        const int rank = 2 + t % 4;
        Dims dims = random_dims(rng, rank, 6);
        for (int64_t& d : dims)
            if (rng() % 4 == 0) d = 1;
        Dims perm(static_cast<size_t>(rank));
        for (int i = 0; i < rank; ++i) perm[static_cast<size_t>(i)] = i;
        const int moved = 1 + static_cast<int>(rng() % static_cast<unsigned>(rank - 1));
        std::shuffle(perm.begin(), perm.begin() + moved + 1, rng);
        const Tensor x = random_tensor(dt, dims, rng);
        ThreadPool* p = t % 2 ? &pool : nullptr;
        ASSERT_TRUE(
            ops::transpose_fast(x, perm, p).same_contents(ops::transpose_plain(x, perm, nullptr)))
            << "case " << t;
    }
    const Tensor x = random_tensor(DataType::kFloat32, {1, 4, 34, 28, 28}, rng);
    EXPECT_TRUE(ops::transpose_fast(x, {0, 2, 1, 3, 4}, &pool)
                    .same_contents(ops::transpose_plain(x, {0, 2, 1, 3, 4}, nullptr)));
}

// Elementwise binary kernels iterate broadcast_runs; they must visit exactly the (output, a, b)
// offsets for_each_broadcast2 visits, in the same order.
TEST(OpsFastPath, BroadcastRunsVisitWhatForEachBroadcastVisits) {
    std::mt19937 rng(24);
    for (int t = 0; t < 400; ++t) {
        const int rank = t % 6;
        const Dims out = random_dims(rng, rank, t % 3 ? 4 : 9);
        Dims a = out, b = out;
        for (int i = 0; i < rank; ++i) {
            if (rng() % 3 == 0) a[static_cast<size_t>(i)] = 1;
            if (rng() % 3 == 0) b[static_cast<size_t>(i)] = 1;
        }
        if (t % 7 == 0 && rank > 0)
            a.erase(a.begin(), a.begin() + static_cast<int64_t>(rng() % rank));
        if (t % 11 == 0 && rank > 0) b[0] = 0, a[0] = 1;  // empty output
        const Dims od = ops::broadcast_shape(a, b);
        const Dims sa = ops::broadcast_strides(a, od), sb = ops::broadcast_strides(b, od);
        std::vector<std::array<int64_t, 3>> plain, runs;
        ops::for_each_broadcast2(od, sa, sb, [&](int64_t o, int64_t i, int64_t j) {
            plain.push_back({o, i, j});
        });
        const ops::BroadcastRuns r = ops::broadcast_runs(od, sa, sb);
        const int64_t split = r.runs / 2;  // two calls, as the pool splits the runs
        for (auto [b0, e0] : {std::pair{int64_t{0}, split}, std::pair{split, r.runs}})
            ops::for_each_run(r, b0, e0, [&](int64_t o, int64_t i, int64_t j) {
                for (int64_t k = 0; k < r.inner; ++k)
                    runs.push_back({o + k, i + k * r.step_a, j + k * r.step_b});
            });
        ASSERT_EQ(runs, plain) << "case " << t;
    }
}

std::vector<float> random_floats(size_t n, std::mt19937& rng, float lo, float hi) {
    std::uniform_real_distribution<float> d(lo, hi);
    std::vector<float> v(n);
    for (float& x : v) x = d(rng);
    return v;
}

TEST(OpsFastPath, BatchNormMatchesPlainExactly) {
    std::mt19937 rng(25);
    ThreadPool pool(2);
    for (int t = 0; t < 30; ++t) {
        const Dims dims = {1 + t % 2, 1 + int64_t(rng() % 20), 1 + int64_t(rng() % 40),
                           1 + int64_t(rng() % (t % 5 ? 9 : 300))};
        const size_t c = size_t(dims[1]);
        const Tensor x = Tensor::from_values(
            DataType::kFloat32, dims, random_floats(size_t(*checked_numel(dims)), rng, -3, 3));
        const auto scale = random_floats(c, rng, -2, 2), bias = random_floats(c, rng, -1, 1);
        const auto mean = random_floats(c, rng, -1, 1), var = random_floats(c, rng, 0, 2);
        std::vector<float> fast(x.numel(), NAN), plain(x.numel(), NAN);
        ops::batch_norm_fast(x, scale.data(), bias.data(), mean.data(), var.data(), 1e-5,
                             fast.data(), t % 2 ? &pool : nullptr);
        ops::batch_norm<float>(x, scale.data(), bias.data(), mean.data(), var.data(), 1e-5,
                               plain.data());
        ASSERT_EQ(fast, plain) << "case " << t;
    }
}

TEST(OpsFastPath, LrnMatchesPlainWithinFloatRounding) {
    std::mt19937 rng(26);
    ThreadPool pool(2);
    for (int t = 0; t < 30; ++t) {
        const Dims dims = {1 + t % 2, 1 + int64_t(rng() % 20), 1 + int64_t(rng() % 30),
                           1 + int64_t(rng() % 30)};
        const Tensor x = Tensor::from_values(
            DataType::kFloat32, dims, random_floats(size_t(*checked_numel(dims)), rng, -5, 5));
        const ops::LrnParams p{t % 3 ? 1e-4 : 0.5, t % 2 ? 0.75 : 0.6, t % 4 ? 1.0 : 2.0,
                               1 + int64_t(rng() % 6)};
        std::vector<float> fast(x.numel(), NAN), plain(x.numel(), NAN);
        ops::lrn_fast(x, p, fast.data(), t % 3 ? &pool : nullptr);
        ops::lrn<float>(x, p, plain.data());
        for (size_t i = 0; i < fast.size(); ++i)
            ASSERT_NEAR(fast[i], plain[i], 2e-6 * (1 + std::fabs(plain[i]))) << "case " << t;
    }
}

// One random recurrent problem of the fast-path test: inputs X, W, R, B, sequence_lens, initial_h,
// initial_c, P (some omitted) in float32 and the same values in float64, and its attributes.
struct RecurrentCase {
    std::string op;
    std::vector<Tensor> f32s, f64s;
    int64_t hidden = 0, dirs = 1, layout = 0;
    std::string direction = "forward";
    double clip = 0;
    bool input_forget = false, linear_before_reset = false;
    std::vector<std::string> activations;  // empty: the defaults
    std::vector<float> alphas, betas;

    std::vector<ir::Attribute> attrs() const {  // move-only: a fresh list per run
        std::vector<ir::Attribute> v;
        v.push_back(ir::Attribute::make_int("hidden_size", hidden));
        v.push_back(ir::Attribute::make_string("direction", direction));
        if (layout) v.push_back(ir::Attribute::make_int("layout", layout));
        if (clip > 0) v.push_back(ir::Attribute::make_float("clip", float(clip)));
        if (input_forget) v.push_back(ir::Attribute::make_int("input_forget", 1));
        if (linear_before_reset) v.push_back(ir::Attribute::make_int("linear_before_reset", 1));
        if (!activations.empty()) {
            ir::Attribute a;
            a.name = "activations", a.type = ir::AttrType::kStrings, a.strings = activations;
            v.push_back(std::move(a));
            v.push_back(ir::Attribute::make_floats("activation_alpha", alphas));
            v.push_back(ir::Attribute::make_floats("activation_beta", betas));
        }
        return v;
    }
};

// Appends one input of `dims` with values uniform in +-scale, as float32 and as float64.
void push_random(RecurrentCase& c, const Dims& dims, float scale, std::mt19937& rng) {
    const auto v = random_floats(size_t(*checked_numel(dims)), rng, -scale, scale);
    c.f32s.push_back(Tensor::from_values(DataType::kFloat32, dims, v));
    c.f64s.push_back(
        Tensor::from_values(DataType::kFloat64, dims, std::vector<double>(v.begin(), v.end())));
}

RecurrentCase random_recurrent_case(int t, std::mt19937& rng) {
    RecurrentCase c;
    const char* ops[] = {"RNN", "GRU", "LSTM"};
    c.op = ops[t % 3];
    const int64_t gates = c.op == "RNN" ? 1 : c.op == "GRU" ? 3 : 4;
    const bool big = t % 7 == 3;  // 4-row blocks, column tails and a row split over the pool
    const int64_t seq = 1 + rng() % 5, batch = 1 + rng() % 3, input = 1 + rng() % (big ? 70 : 20);
    c.hidden = big ? 60 + rng() % 80 : 1 + rng() % 24;
    const int kind = t / 3 % 4;  // forward, reverse, bidirectional, bidirectional
    c.direction = kind == 0 ? "forward" : kind == 1 ? "reverse" : "bidirectional";
    c.dirs = kind >= 2 ? 2 : 1;
    c.layout = t % 5 == 2;
    c.clip = t % 4 == 3 ? 0.7 : 0;
    c.input_forget = c.op == "LSTM" && t % 8 == 5;
    c.linear_before_reset = c.op == "GRU" && t % 4 == 1;
    if (t % 6 == 4) {  // non-default activations with alpha / beta
        const std::vector<std::vector<std::string>> per_op = {
            {"Relu"}, {"HardSigmoid", "ScaledTanh"}, {"HardSigmoid", "Softsign", "LeakyRelu"}};
        const auto& names = per_op[size_t(gates == 1 ? 0 : gates == 3 ? 1 : 2)];
        for (int64_t d = 0; d < c.dirs; ++d)
            c.activations.insert(c.activations.end(), names.begin(), names.end());
        c.alphas = {0.3f, 0.8f, 0.1f, 0.25f, 0.9f, 0.05f};
        c.betas = {0.4f, 1.5f, 0.6f, 0.5f};
    }
    const int64_t H = c.hidden, D = c.dirs;
    auto state = [&](int64_t n) { return c.layout ? Dims{batch, D, n} : Dims{D, batch, n}; };
    const Dims shapes[] = {c.layout ? Dims{batch, seq, input} : Dims{seq, batch, input},
                           {D, gates * H, input},
                           {D, gates * H, H},
                           {D, 2 * gates * H},
                           {},
                           state(H),
                           state(H),
                           {D, 3 * H}};
    const size_t n_inputs = c.op == "LSTM" ? 8 : 6;
    for (size_t i = 0; i < n_inputs; ++i) {
        const bool omit = (i == 3 && t % 9 == 8) || (i >= 5 && t % 5 == 1) || (i == 7 && t % 2);
        if (i == 4 || omit) {  // sequence_lens: given in some cases, some rows shorter
            Tensor lens;
            if (i == 4 && t % 3 == 1) {
                std::vector<int32_t> l(static_cast<size_t>(batch));
                for (auto& v : l) v = int32_t(rng() % (seq + 1));
                lens = Tensor::from_values(DataType::kInt32, {batch}, l);
            }
            c.f32s.push_back(lens), c.f64s.push_back(lens);
            continue;
        }
        push_random(c, shapes[i],
                    i == 1 || i == 2 ? 2.0f / std::sqrt(float(i == 1 ? input : H)) : 1.0f, rng);
    }
    return c;
}

// float32 RNN / GRU / LSTM take the fast path (rnn_f32.cc); float64 runs the plain loops. The
// same random problem in both types must agree to float32 accuracy, over directions, layouts,
// sequence lengths, clip, peepholes, input_forget, linear_before_reset and activations.
TEST(OpsFastPath, RecurrentFloat32MatchesFloat64Plain) {
    std::mt19937 rng(27);
    for (int t = 0; t < 120; ++t) {
        const RecurrentCase c = random_recurrent_case(t, rng);
        const size_t outs = c.op == "LSTM" ? 3 : 2;
        const auto a = test::run_op(c.op, c.f32s, c.attrs(), 14, outs);
        const auto b = test::run_op(c.op, c.f64s, c.attrs(), 14, outs);
        for (size_t k = 0; k < outs; ++k) {
            ASSERT_EQ(a[k].dtype(), DataType::kFloat32);
            ASSERT_EQ(a[k].dims(), b[k].dims()) << c.op << " case " << t << " output " << k;
            for (uint64_t i = 0; i < a[k].numel(); ++i)
                ASSERT_NEAR(a[k].data<float>()[i], b[k].data<double>()[i],
                            2e-5 * (1 + std::fabs(b[k].data<double>()[i])))
                    << c.op << " case " << t << " output " << k << " element " << i;
        }
    }
}

// With 2 or 4 threads a large recurrent product is split over the pool (a lone LSTM chain runs
// on a team whose members each take a range of hidden units through the gate math too, and join
// as they come, so a run mixes steps of 1 to 4 parts); every random case, peepholes, clip,
// input_forget and activations included, gives the single-threaded bits.
TEST(OpsFastPath, RecurrentTwoThreadsMatchOneThread) {
    std::mt19937 rng(31);
    int split = 0;
    for (int t = 0; t < 120; ++t) {
        const RecurrentCase c = random_recurrent_case(t, rng);
        split += c.hidden >= 91;  // 4 H x H rows: large enough to split
        const size_t outs = c.op == "LSTM" ? 3 : 2;
        const auto a = test::run_op(c.op, c.f32s, c.attrs(), 14, outs, 1);
        for (const int threads : {2, 4}) {
            const auto b = test::run_op(c.op, c.f32s, c.attrs(), 14, outs, threads);
            for (size_t k = 0; k < outs; ++k) {
                ASSERT_EQ(a[k].dims(), b[k].dims()) << c.op << " case " << t;
                ASSERT_EQ(std::memcmp(a[k].bytes(), b[k].bytes(), a[k].nbytes()), 0)
                    << c.op << " case " << t << " output " << k << ", " << threads << " threads";
            }
        }
    }
    EXPECT_GT(split, 3);
}

// A lone chain (batch 1, one direction) large enough to run on a team (base/team.h): RNN
// (hidden 192: H x H rows past the threshold), GRU with and without linear_before_reset (two team
// steps per time step), LSTM with peepholes; forward and reverse, a sequence_lens shorter than
// the sequence. With 2 and 4 threads every output has the 1-thread bits, and it stays within
// float32 accuracy of the float64 plain kernel.
TEST(OpsFastPath, RecurrentTeamsMatchOneThreadAndTheFloat64Kernel) {
    std::mt19937 rng(41);
    const int64_t H = 192, I = 33, S = 20;
    const std::pair<std::string, bool> ops[] = {
        {"RNN", false}, {"GRU", false}, {"GRU", true}, {"LSTM", false}};
    for (const auto& [op, lbr] : ops) {
        for (const bool reverse : {false, true}) {
            RecurrentCase c;
            c.op = op, c.hidden = H, c.direction = reverse ? "reverse" : "forward";
            c.linear_before_reset = lbr;
            const int64_t G = op == "RNN" ? 1 : op == "GRU" ? 3 : 4;
            const Dims shapes[] = {{S, 1, I}, {1, G * H, I}, {1, G * H, H}, {1, 2 * G * H},
                                   {1},       {1, 1, H},     {1, 1, H},     {1, 3 * H}};
            for (size_t i = 0; i < (op == "LSTM" ? 8u : 6u); ++i) {
                if (i == 4) {
                    const Tensor lens =
                        Tensor::from_values(DataType::kInt32, {1}, std::vector<int32_t>{13});
                    c.f32s.push_back(lens), c.f64s.push_back(lens);
                    continue;
                }
                push_random(c, shapes[i],
                            i == 1 || i == 2 ? 2.0f / std::sqrt(float(i == 1 ? I : H)) : 1.0f, rng);
            }
            const size_t outs = op == "LSTM" ? 3 : 2;
            const auto one = test::run_op(op, c.f32s, c.attrs(), 14, outs, 1);
            const auto plain = test::run_op(op, c.f64s, c.attrs(), 14, outs);
            for (size_t k = 0; k < outs; ++k)
                for (uint64_t i = 0; i < one[k].numel(); ++i)
                    ASSERT_NEAR(one[k].data<float>()[i], plain[k].data<double>()[i],
                                2e-5 * (1 + std::fabs(plain[k].data<double>()[i])))
                        << op << " output " << k << " element " << i;
            for (const int threads : {2, 4}) {
                const auto team = test::run_op(op, c.f32s, c.attrs(), 14, outs, threads);
                for (size_t k = 0; k < outs; ++k)
                    ASSERT_EQ(std::memcmp(one[k].bytes(), team[k].bytes(), one[k].nbytes()), 0)
                        << op << " lbr " << c.linear_before_reset << " reverse " << reverse
                        << " output " << k << ", " << threads << " threads";
            }
        }
    }
}

TEST(OpsFastPath, UninitializedTensorsArePoisonedOnRequest) {
    Tensor::set_poison_uninitialized(true);
    const Tensor t = Tensor::uninitialized(DataType::kFloat32, {3, 5});
    Tensor::set_poison_uninitialized(false);
    ASSERT_EQ(t.nbytes(), 60u);
    for (uint64_t i = 0; i < t.nbytes(); ++i) ASSERT_EQ(t.bytes()[i], 0xA5);
    EXPECT_EQ(Tensor::uninitialized(DataType::kString, {2}).strings().size(), 2u);
    EXPECT_EQ(Tensor::uninitialized(DataType::kFloat32, {0, 4}).numel(), 0u);
    EXPECT_THROW(Tensor::uninitialized(DataType::kFloat32, {-1}), Error);
}

TEST(OpsFastPath, ReshapedSharesStorageAndCopiesOnWrite) {
    Tensor a = Tensor::from_values<float>(DataType::kFloat32, {2, 3}, {1, 2, 3, 4, 5, 6});
    Tensor b = a.reshaped({3, 2});
    EXPECT_EQ(b.dims(), (Dims{3, 2}));
    EXPECT_EQ(b.bytes(), a.bytes());
    reinterpret_cast<float*>(b.mutable_bytes())[0] = 9;  // copy on write: a keeps its value
    EXPECT_EQ(a.data<float>()[0], 1.0f);
    EXPECT_EQ(b.data<float>()[0], 9.0f);
    EXPECT_THROW(a.reshaped({4}), Error);
}

}  // namespace
}  // namespace pg

namespace pg {
namespace {

// Sum / Max / Min of equal shapes take a flat loop; it must give the broadcast loop's values
// (here: the same inputs with one broadcast from [1, n], and the element-wise definitions,
// NaN propagating in Max / Min).
TEST(OpsFastPath, VariadicEqualShapesMatchBroadcastAndDefinition) {
    std::mt19937 rng(21);
    std::uniform_real_distribution<float> val(-1.0f, 1.0f);
    const int64_t n = 40000;
    std::vector<float> a(static_cast<size_t>(n)), b(static_cast<size_t>(n));
    for (auto* v : {&a, &b})
        for (float& e : *v) e = val(rng);
    a[7] = std::numeric_limits<float>::quiet_NaN();
    const Tensor ta = test::f32({1, n}, a), tb = test::f32({1, n}, b);
    const Tensor tb3 = test::f32({1, 1, n}, b);  // broadcast against [1, n]: the odometer path
    for (const char* op : {"Sum", "Max", "Min"}) {
        const std::vector<float> flat = test::values_f32(test::run_op(op, {ta, tb}, {}, 13)[0]);
        const std::vector<float> bcast = test::values_f32(test::run_op(op, {ta, tb3}, {}, 13)[0]);
        ASSERT_EQ(flat.size(), size_t(n));
        ASSERT_EQ(std::memcmp(flat.data(), bcast.data(), flat.size() * sizeof(float)), 0) << op;
        for (int64_t i = 0; i < n; ++i) {
            const float x = a[size_t(i)], y = b[size_t(i)];
            const float want = std::string(op) == "Sum"   ? x + y
                               : std::isnan(x)            ? x
                               : std::string(op) == "Max" ? (x < y ? y : x)
                                                          : (y < x ? y : x);
            if (std::isnan(want))
                ASSERT_TRUE(std::isnan(flat[size_t(i)])) << op << " " << i;
            else
                ASSERT_EQ(flat[size_t(i)], want) << op << " " << i;
        }
    }
}

}  // namespace
}  // namespace pg

namespace pg {
namespace {

// The float32 recurrent product split over the pool (hidden 128: large enough to split) gives
// the single-threaded values bit for bit.
TEST(OpsFastPath, RecurrentRowsSplitOverThePoolMatchOneThread) {
    // batch 1: one chain, its rows split; batch 3: the chains run in parallel.
    for (const int64_t batch : {1, 3}) {
        auto m = zoo::lstm_model({.batch = batch});
        runtime::Feeds feeds;
        std::mt19937 rng(4);
        std::uniform_real_distribution<float> u(-1.0f, 1.0f);
        for (const ir::Value* v : m->graph->inputs()) {
            if (v->is_initializer()) continue;
            std::vector<int64_t> dims;
            for (const auto& d : *v->type().shape) dims.push_back(*d.value);
            Tensor t = Tensor::zeros(DataType::kFloat32, dims);
            for (uint64_t i = 0; i < t.numel(); ++i)
                reinterpret_cast<float*>(t.mutable_bytes())[i] = u(rng);
            feeds[v->name()] = ops::RtValue::of(std::move(t));
        }
        runtime::SessionOptions one, two;
        one.threads = 1, two.threads = 2;
        const runtime::Results a = runtime::Session(*m, one).run(feeds);
        const runtime::Results b = runtime::Session(*m, two).run(feeds);
        ASSERT_EQ(a.size(), b.size());
        for (size_t i = 0; i < a.size(); ++i) {
            const Tensor& x = a[i].second.tensor();
            const Tensor& y = b[i].second.tensor();
            ASSERT_EQ(x.nbytes(), y.nbytes());
            EXPECT_EQ(std::memcmp(x.bytes(), y.bytes(), x.nbytes()), 0) << a[i].first;
        }
    }
}

}  // namespace
}  // namespace pg
