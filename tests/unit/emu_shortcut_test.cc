// EmulationOptions::skip_exact_rounding (emu/emulation.h): outputs of ops that only move or
// select already-rounded elements are not rounded again (of them, the float compute ops the
// policy runs at reduced precision: Relu, MaxPool, Max/Min, Clip, Neg, Abs, ...). The shortcut must
// be a no-op: every output and every node's evidence must be bit-identical with and without it, on
// a model made of every op it covers (at each reduced float format) and on the zoo models.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "base/thread_pool.h"
#include "emu/emu_runner.h"
#include "ir/builder.h"
#include "support/emu_expect.h"
#include "zoo/zoo.h"

namespace pg::emu {
namespace {

std::vector<ir::Attribute> attrs(ir::Attribute a) {
    std::vector<ir::Attribute> v;
    v.push_back(std::move(a));
    return v;
}

ir::Value* i64(ir::GraphBuilder& b, const std::string& name, std::vector<int64_t> v) {
    const auto n = static_cast<int64_t>(v.size());
    return b.constant(name, Tensor::from_values<int64_t>(DataType::kInt64, {n}, v));
}

// Every op of the shortcut after a Mul that rounds (and overflows on large inputs).
std::unique_ptr<ir::Model> shortcut_ops_model() {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{1, 4, 8, 8});
    ir::Value* v = b.op("Mul", {x, b.constant_f32("k", {1}, {3.3f})}, {}, "mul");
    ir::Value* r = b.op("Relu", {v}, {}, "relu");
    std::vector<ir::Attribute> pool;
    pool.push_back(ir::Attribute::make_ints("kernel_shape", {2, 2}));
    pool.push_back(ir::Attribute::make_ints("strides", {2, 2}));
    v = b.op("MaxPool", {r}, std::move(pool), "maxpool");
    ir::Value* t =
        b.op("Transpose", {v}, attrs(ir::Attribute::make_ints("perm", {0, 2, 3, 1})), "transpose");
    ir::Value* ng = b.op("Neg", {t}, {}, "neg");
    v = b.op("Concat", {t, ng}, attrs(ir::Attribute::make_int("axis", 1)), "concat");
    v = b.op("Slice", {v, i64(b, "s0", {1}), i64(b, "s1", {7}), i64(b, "s2", {1})}, {}, "slice");
    v = b.op("Gather", {v, i64(b, "gi", {0, 2, 5})}, attrs(ir::Attribute::make_int("axis", 1)),
             "gather");
    v = b.op("Reshape", {v, i64(b, "shape", {1, 3, 16})}, {}, "reshape");
    ir::Node* sp = b.op_multi("Split", {v, i64(b, "split", {8, 8})}, 2,
                              attrs(ir::Attribute::make_int("axis", 2)), "split");
    ir::Value* mx = b.op("Max", {sp->output(0), sp->output(1)}, {}, "max");
    ir::Value* mn = b.op("Min", {sp->output(0), sp->output(1)}, {}, "min");
    ir::Value* cl =
        b.op("Clip", {mx, b.constant_f32("lo", {}, {-0.3f}), b.constant_f32("hi", {}, {0.7f})}, {},
             "clip");
    v = b.op("Abs", {mn}, {}, "abs");
    v = b.op("Unsqueeze", {v, i64(b, "ax", {0})}, {}, "unsqueeze");
    v = b.op("Squeeze", {v, i64(b, "ax2", {0})}, {}, "squeeze");
    v = b.op("Tile", {v, i64(b, "reps", {2, 1, 1})}, {}, "tile");
    v = b.op("Identity", {v}, {}, "identity");
    ir::Value* ex = b.op("Expand", {cl, i64(b, "eshape", {2, 3, 8})}, {}, "expand");
    v = b.op("Add", {ex, v}, {}, "add");
    v = b.op("Flatten", {v}, {}, "flatten");
    b.output(v, DataType::kFloat32, {2, 24});
    ir::Value* gm = b.op("GlobalMaxPool", {r}, {}, "globalmaxpool");
    b.output(gm, DataType::kFloat32, {1, 4, 1, 1});
    return m;
}

// Values spread over magnitudes 1e-9 .. 1e5 with both signs (underflow and overflow in the
// 16/8-bit formats) and one NaN, or uniform in [-1, 1).
std::map<std::string, Tensor> feeds_for(const runners::Runner& r, bool wide) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    std::map<std::string, Tensor> feeds;
    for (const auto& m : r.input_metadata()) {
        std::vector<int64_t> dims;
        for (const auto& d : *m.shape) dims.push_back(d.value.value_or(1));
        Tensor t = Tensor::zeros(m.dtype, dims);
        if (m.dtype == DataType::kFloat32) {
            float* d = reinterpret_cast<float*>(t.mutable_bytes());
            for (uint64_t i = 0; i < t.numel(); ++i)
                d[i] = wide ? (u(rng) < 0.5f ? -1.0f : 1.0f) * std::pow(10.0f, -9 + 14 * u(rng))
                            : 2 * u(rng) - 1;
            if (wide && t.numel() > 3) d[3] = std::nanf("");
        }
        feeds[m.name] = t;
    }
    return feeds;
}

void expect_same_stats(const RoundingStats& a, const RoundingStats& b, const std::string& what) {
    test::expect_same_rounding_stats(a, b, what);
}

// Runs `m` at `p` with and without the shortcut; outputs and evidence must match bit for bit.
void check_same(const ir::Model& m, Precision p, bool wide, const std::string& label) {
    EmuRunnerOptions on, off;
    on.policy.default_precision = off.policy.default_precision = p;
    on.session.threads = off.session.threads = 2;
    off.emulation.skip_exact_rounding = false;
    EmuRunner a(m, on), b(m, off);
    const auto feeds = feeds_for(a, wide);
    const auto oa = a.infer(feeds), ob = b.infer(feeds);
    ASSERT_EQ(oa.size(), ob.size());
    for (size_t i = 0; i < oa.size(); ++i) {
        const Tensor &x = oa[i].second, &y = ob[i].second;
        ASSERT_EQ(x.nbytes(), y.nbytes()) << label << " " << oa[i].first;
        EXPECT_EQ(std::memcmp(x.bytes(), y.bytes(), x.nbytes()), 0) << label << " " << oa[i].first;
    }
    const auto& ea = a.evidence().entries();
    const auto& eb = b.evidence().entries();
    ASSERT_EQ(ea.size(), eb.size()) << label;
    for (size_t i = 0; i < ea.size(); ++i) {
        const std::string what = label + " node " + ea[i].first;
        ASSERT_EQ(ea[i].first, eb[i].first) << what;
        expect_same_stats(ea[i].second.inputs, eb[i].second.inputs, what + " inputs");
        expect_same_stats(ea[i].second.outputs, eb[i].second.outputs, what + " outputs");
        EXPECT_EQ(ea[i].second.nonfinite_produced, eb[i].second.nonfinite_produced) << what;
    }
}

TEST(EmuShortcut, EveryCoveredOpAtEveryFormat) {
    auto m = shortcut_ops_model();
    {  // Every covered op runs at the reduced precision (else the comparison proves nothing).
        EmuRunnerOptions o;
        o.policy.default_precision = Precision::kFP16;
        EmuRunner r(*m, o);
        r.infer(feeds_for(r, true));
        // (Data movement ops run as written, policy.h: the shortcut never sees them.)
        for (const char* n :
             {"relu", "maxpool", "neg", "max", "min", "clip", "abs", "globalmaxpool"})
            EXPECT_NE(r.evidence().find(n), nullptr) << n;
        EXPECT_GT(r.evidence().find("mul")->outputs.overflow, 0u);
    }
    for (Precision p : {Precision::kFP16, Precision::kBF16, Precision::kFP8E4M3,
                        Precision::kFP8E5M2, Precision::kTF32})
        for (bool wide : {false, true})
            check_same(*m, p, wide, std::string(precision_name(p)) + (wide ? " wide" : ""));
}

TEST(EmuShortcut, ZooModels) {
    const std::vector<std::pair<std::string, std::unique_ptr<ir::Model>>> models = [] {
        std::vector<std::pair<std::string, std::unique_ptr<ir::Model>>> v;
        v.emplace_back("resnet", zoo::resnet_style());
        v.emplace_back("mobilenet", zoo::mobilenet_style());
        v.emplace_back("transformer", zoo::transformer_encoder());
        v.emplace_back("lstm", zoo::lstm_model());
        v.emplace_back("planted", zoo::planted_overflow_model());
        return v;
    }();
    for (const auto& [name, m] : models)
        for (Precision p : {Precision::kFP16, Precision::kBF16})
            for (bool wide : {false, true})
                check_same(*m, p, wide,
                           name + " " + precision_name(p) + (wide ? " wide" : " uniform"));
}

}  // namespace
}  // namespace pg::emu

namespace pg::emu {
namespace {

// The lowest / highest finite value of a rounded tensor (what Relu / Clip derive their output
// stats from), through the vectorized span loop and its chunked parallel split.
TEST(EmuShortcut, RoundedStatsCarryLowestAndHighest) {
    Tensor t = Tensor::from_values<float>(
        DataType::kFloat32, {6},
        {-3.0001f, 2.5f, std::nanf(""), std::numeric_limits<float>::infinity(), -0.0f, 1e-9f});
    RoundingStats s, again;
    round_tensor(Precision::kFP16, t, RoundingMode::kNearestEven, s, again, nullptr);
    EXPECT_EQ(again.lowest, -3.0);  // -3.0001 rounds to -3 in float16
    EXPECT_EQ(again.highest, 2.5);  // infinity is not finite
    EXPECT_EQ(again.max_abs, 3.0);
    EXPECT_EQ(again.nonfinite, 2u);
    const RoundingStats r = representable_stats(Precision::kFP16, t);
    EXPECT_EQ(r.lowest, -3.0);
    EXPECT_EQ(r.highest, 2.5);
    EXPECT_EQ(r.overflow + r.underflow, 0u);
    // All negative, large enough to split over a pool.
    ThreadPool pool(2);
    std::vector<float> v(300000);
    for (size_t i = 0; i < v.size(); ++i) v[i] = -1.0f - static_cast<float>(i % 1000);
    const Tensor big =
        Tensor::from_values<float>(DataType::kFloat32, {static_cast<int64_t>(v.size())}, v);
    const RoundingStats b = representable_stats(Precision::kFP16, big, &pool);
    EXPECT_EQ(b.lowest, -1000.0);
    EXPECT_EQ(b.highest, -1.0);
    EXPECT_EQ(b.values, v.size());
}

}  // namespace
}  // namespace pg::emu
