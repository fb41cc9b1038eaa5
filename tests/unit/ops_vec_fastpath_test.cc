// The float32 fast paths built on ops/vec_math diffed against their plain kernels on random
// shapes, under every ISA the CPU has: Softmax / LogSoftmax rows (softmax_row_fast vs normalize),
// Erf / Exp / Tanh (vec_erf / vec_exp / vec_tanh vs std::erf / std::exp / std::tanh), Sigmoid and
// Gelu (sigmoid_fast / gelu_fast / gelu_tanh_fast vs sigmoid / gelu_erf / gelu_tanh) and
// LayerNormalization (layer_norm_fast vs layer_norm), directly and through a two-thread session
// (so the rows / chunks split over the pool).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "base/thread_pool.h"
#include "ir/builder.h"
#include "ops/activation_kernels.h"
#include "ops/normalization_kernels.h"
#include "ops/softmax_kernels.h"
#include "ops/vec_math.h"
#include "runtime/session.h"

namespace pg {
namespace {

using ops::VecIsa;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

struct ForceIsa {
    explicit ForceIsa(VecIsa isa) { ops::vec_force_isa(isa); }
    ~ForceIsa() { ops::vec_reset_isa(); }
};

std::vector<VecIsa> isas() {
    std::vector<VecIsa> v;
    for (VecIsa i : {VecIsa::kScalar, VecIsa::kAvx2, VecIsa::kAvx512})
        if (ops::vec_isa_available(i)) v.push_back(i);
    return v;
}

// Distance in representable floats between a and b (0 when both are NaN; huge when only one is).
int64_t ulp_dist(float a, float b) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : 1ll << 40;
    auto key = [](float f) {
        const auto u = static_cast<int64_t>(std::bit_cast<uint32_t>(f));
        return u & 0x80000000 ? -(u & 0x7fffffff) : u;
    };
    return std::llabs(key(a) - key(b));
}

// The spacing of floats at |v|.
double ulp_of(double v) {
    const float a = std::fabs(static_cast<float>(v));
    if (a < std::numeric_limits<float>::min()) return std::ldexp(1.0, -149);
    int e = 0;
    std::frexp(a, &e);
    return std::ldexp(1.0, e - 24);
}

// Runs a one-node model on two threads and returns its outputs.
std::vector<Tensor> run_two_threads(const std::string& op, const std::vector<Tensor>& inputs,
                                    std::vector<ir::Attribute> attrs, size_t outputs = 1) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    std::vector<ir::Value*> ins;
    runtime::Feeds feeds;
    for (size_t i = 0; i < inputs.size(); ++i) {
        const std::string name = "x" + std::to_string(i);
        ins.push_back(b.input(name, inputs[i].dtype(), inputs[i].dims()));
        feeds[name] = ops::RtValue::of(inputs[i]);
    }
    ir::Node* n = b.op_multi(op, ins, outputs, std::move(attrs), "node");
    for (ir::Value* out : n->outputs()) b.output(out);
    runtime::SessionOptions opts;
    opts.threads = 2;
    std::vector<Tensor> out;
    for (auto& [name, v] : runtime::Session(*m, opts).run(feeds)) out.push_back(v.tensor());
    return out;
}

Tensor f32_tensor(std::vector<int64_t> dims, const std::vector<float>& v) {
    return Tensor::from_values(DataType::kFloat32, std::move(dims), v);
}

// Random rows: normal values with a spread from 0.01 to 300 (so exps underflow into the
// subnormals and to 0), and some rows with -inf, +inf or NaN entries.
std::vector<float> random_row(std::mt19937& rng, int64_t n, int kind) {
    const float spreads[] = {0.01f, 1.0f, 10.0f, 60.0f, 300.0f};
    std::normal_distribution<float> g(0.0f, spreads[rng() % 5]);
    std::vector<float> row(static_cast<size_t>(n));
    const float offset = static_cast<float>(rng() % 200) - 100.0f;
    for (float& v : row) v = g(rng) + offset;
    auto at = [&] { return static_cast<size_t>(rng() % static_cast<uint32_t>(n)); };
    switch (kind) {
        case 1:
            row[at()] = -kInf, row[at()] = -kInf;
            break;
        case 2:
            std::fill(row.begin(), row.end(), -kInf);
            break;
        case 3:
            row[at()] = kInf;
            break;
        case 4:
            row[at()] = kNaN;
            break;
        default:
            break;
    }
    return row;
}

// Softmax is within 4 ulp of normalize; LogSoftmax within 2 * (ulp of the result + ulp of
// log(sum) + 2^-47): the result is a difference (x - max) - log(sum), and both kernels round their
// double sums, which moves log(sum) by ~2^-53 * n absolutely (visible when log(sum) is tiny).
TEST(OpsVecFastPath, SoftmaxRowsMatchPlainOnRandomRows) {
    std::mt19937 rng(31);
    const int64_t lengths[] = {1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100, 129, 1000, 4099};
    for (VecIsa isa : isas()) {
        ForceIsa f(isa);
        int64_t worst_soft = 0;
        double worst_log = 0;
        for (int t = 0; t < 400; ++t) {
            const int64_t n = lengths[static_cast<size_t>(t) % std::size(lengths)];
            const int kind = t % 9 < 4 ? 0 : t % 9 - 4;
            const std::vector<float> x = random_row(rng, n, kind);
            for (bool log : {false, true}) {
                std::vector<float> plain(x.size(), kNaN), fast(x.size(), kNaN);
                ops::normalize(x.data(), plain.data(), n, 1,
                               log ? ops::Norm::kLogSoftmax : ops::Norm::kSoftmax);
                ops::softmax_row_fast(x.data(), fast.data(), n, log);
                double sum = 0;
                const float m = *std::max_element(x.begin(), x.end());
                for (float v : x) sum += std::exp(static_cast<double>(v - m));
                for (size_t i = 0; i < x.size(); ++i) {
                    SCOPED_TRACE("isa " + std::to_string(int(isa)) + " n " + std::to_string(n) +
                                 " kind " + std::to_string(kind) + " i " + std::to_string(i));
                    ASSERT_EQ(std::isnan(plain[i]), std::isnan(fast[i]))
                        << plain[i] << " " << fast[i];
                    if (std::isnan(plain[i]) || plain[i] == fast[i]) continue;
                    if (!log) {
                        const int64_t d = ulp_dist(plain[i], fast[i]);
                        worst_soft = std::max(worst_soft, d);
                        ASSERT_LE(d, 4) << plain[i] << " vs " << fast[i];
                    } else {
                        // Both kernels round the double sum (error ~2^-53 * sum each), which
                        // shifts log(sum) by that much absolutely: counted as 2^-47.
                        const double err =
                            std::fabs(double(plain[i]) - double(fast[i])) /
                            (ulp_of(plain[i]) + ulp_of(std::log(sum)) + std::ldexp(1.0, -47));
                        worst_log = std::max(worst_log, err);
                        ASSERT_LE(err, 2.0) << plain[i] << " vs " << fast[i];
                    }
                }
            }
        }
        std::printf(
            "isa %d: softmax max %lld ulp, log-softmax max %.3f (ulp(y) + ulp(lse) + 2^-47)\n",
            int(isa), static_cast<long long>(worst_soft), worst_log);
    }
}

// Rows with a NaN, a +inf, or only -inf come out all NaN (as from normalize); -inf entries
// among finite ones give 0 (Softmax) / -inf (LogSoftmax).
TEST(OpsVecFastPath, SoftmaxSpecialRows) {
    for (VecIsa isa : isas()) {
        ForceIsa f(isa);
        for (int64_t n : {1, 3, 16, 21}) {
            for (int64_t pos = 0; pos < n; pos += 5) {
                for (float special : {kNaN, kInf}) {
                    std::vector<float> x(static_cast<size_t>(n), 0.5f), y(x.size(), 1.0f);
                    x[static_cast<size_t>(pos)] = special;
                    for (bool log : {false, true}) {
                        ops::softmax_row_fast(x.data(), y.data(), n, log);
                        for (float v : y) EXPECT_TRUE(std::isnan(v)) << n << " " << pos;
                    }
                }
                if (n == 1) continue;  // a row of only -inf
                std::vector<float> x(static_cast<size_t>(n), 2.0f), y(x.size());
                x[static_cast<size_t>(pos)] = -kInf;
                ops::softmax_row_fast(x.data(), y.data(), n, false);
                EXPECT_EQ(y[static_cast<size_t>(pos)], 0.0f);
                ops::softmax_row_fast(x.data(), y.data(), n, true);
                EXPECT_EQ(y[static_cast<size_t>(pos)], -kInf);
            }
            std::vector<float> x(static_cast<size_t>(n), -kInf), y(x.size());
            ops::softmax_row_fast(x.data(), y.data(), n, false);
            for (float v : y) EXPECT_TRUE(std::isnan(v));
        }
    }
}

// Through the op: the contiguous axis takes the fast path, axis 1 of a 3-D tensor the plain one;
// both agree with normalize row by row, on two threads (rows split over the pool).
TEST(OpsVecFastPath, SoftmaxOpUsesFastPathOnContiguousAxis) {
    std::mt19937 rng(32);
    std::normal_distribution<float> g(0.0f, 5.0f);
    const int64_t a = 7, b = 33, c = 129;  // 29799 elements: above the parallel threshold
    std::vector<float> x(static_cast<size_t>(a * b * c));
    for (float& v : x) v = g(rng);
    const Tensor t = f32_tensor({a, b, c}, x);
    for (const char* op : {"Softmax", "LogSoftmax"}) {
        const ops::Norm kind = op[0] == 'L' ? ops::Norm::kLogSoftmax : ops::Norm::kSoftmax;
        const Tensor last =
            run_two_threads(op, {t}, ir::attrs(ir::Attribute::make_int("axis", -1)))[0];
        const Tensor mid =
            run_two_threads(op, {t}, ir::attrs(ir::Attribute::make_int("axis", 1)))[0];
        std::vector<float> want(x.size());
        for (int64_t r = 0; r < a * b; ++r)
            ops::normalize(x.data() + r * c, want.data() + r * c, c, 1, kind);
        for (size_t i = 0; i < x.size(); ++i)
            ASSERT_LE(std::fabs(last.data<float>()[i] - want[i]),
                      4 * ulp_of(want[i]) + (kind == ops::Norm::kLogSoftmax ? 1e-6 : 0))
                << op << " " << i;
        for (int64_t o = 0; o < a; ++o)
            for (int64_t k = 0; k < c; ++k) {
                std::vector<float> col(static_cast<size_t>(b)), out(col.size());
                for (int64_t j = 0; j < b; ++j) col[size_t(j)] = x[size_t((o * b + j) * c + k)];
                ops::normalize(col.data(), out.data(), b, 1, kind);
                for (int64_t j = 0; j < b; ++j)  // the plain kernel, strided: the same values
                    ASSERT_EQ(mid.data<float>()[(o * b + j) * c + k], out[size_t(j)]) << op;
            }
    }
}

// vec_erf is within 3 ulp of std::erf (itself within 1 ulp); through the Erf op (two threads,
// parallel chunks) the float32 values are vec_erf's and float64 stays std::erf.
TEST(OpsVecFastPath, ErfMatchesPlainOnRandomTensors) {
    std::mt19937 rng(33);
    std::normal_distribution<float> g(0.0f, 2.0f);
    for (VecIsa isa : isas()) {
        ForceIsa f(isa);
        int64_t worst = 0;
        for (int64_t n : {int64_t(1), int64_t(15), int64_t(17), int64_t(1000), int64_t(40000)}) {
            std::vector<float> x(static_cast<size_t>(n)), y(x.size(), kNaN);
            for (float& v : x) v = g(rng) * (rng() % 4 == 0 ? 1e-3f : 1.0f);
            if (n > 10) x[3] = kNaN, x[5] = -kInf, x[7] = -0.0f, x[9] = 1e-40f;
            ops::vec_erf(x.data(), y.data(), n);
            for (size_t i = 0; i < x.size(); ++i) {
                const float want = std::erf(x[i]);
                worst = std::max(worst, ulp_dist(y[i], want));
                ASSERT_LE(ulp_dist(y[i], want), 3) << x[i];
                ASSERT_EQ(std::signbit(y[i]), std::signbit(want)) << x[i];
            }
            const Tensor out = run_two_threads("Erf", {f32_tensor({n}, x)}, {})[0];
            ASSERT_EQ(std::memcmp(out.data<float>(), y.data(), y.size() * sizeof(float)), 0);
        }
        std::printf("isa %d: erf max %lld ulp from std::erf(float)\n", int(isa),
                    static_cast<long long>(worst));
    }
    const Tensor d = Tensor::from_values(DataType::kFloat64, {3}, std::vector<double>{0.3, -2, 5});
    const Tensor out = run_two_threads("Erf", {d}, {})[0];
    for (int i = 0; i < 3; ++i) EXPECT_EQ(out.data<double>()[i], std::erf(d.data<double>()[i]));
}

// Random floats for the pointwise ops: normal values at several scales and the special ones.
std::vector<float> pointwise_inputs(std::mt19937& rng, int64_t n) {
    std::normal_distribution<float> g(0.0f, 1.0f);
    const float scales[] = {1e-3f, 1.0f, 4.0f, 30.0f, 1e4f};
    std::vector<float> x(static_cast<size_t>(n));
    for (float& v : x) v = g(rng) * scales[rng() % 5];
    const float specials[] = {kNaN, kInf, -kInf, 0.0f, -0.0f, 1e-40f, -1e-40f, 88.8f, -104.0f};
    for (size_t i = 0; i < std::size(specials) && i * 3 < x.size(); ++i) x[i * 3] = specials[i];
    return x;
}

// sigmoid_fast within 4 ulp of sigmoid<float> (1.5 + 2.4); gelu_fast within 2 ulp + 2^-22 |x| of
// gelu_erf<float>; Exp's float32 op within 1 ulp of std::exp(float) (both are below 1 ulp of the
// exact value); the ops on two threads give the array functions' values.
TEST(OpsVecFastPath, SigmoidGeluExpMatchPlain) {
    std::mt19937 rng(36);
    for (VecIsa isa : isas()) {
        ForceIsa f(isa);
        int64_t worst_sig = 0, worst_exp = 0;
        double worst_gelu = 0;
        for (int64_t n : {int64_t(1), int64_t(17), int64_t(300), int64_t(40000)}) {
            const std::vector<float> x = pointwise_inputs(rng, n);
            std::vector<float> sig(x.size(), kNaN), gelu(x.size(), kNaN), ex(x.size(), kNaN);
            ops::sigmoid_fast(x.data(), sig.data(), n);
            ops::gelu_fast(x.data(), gelu.data(), n);
            ops::vec_exp(x.data(), ex.data(), n);
            for (size_t i = 0; i < x.size(); ++i) {
                SCOPED_TRACE(x[i]);
                const float ws = ops::sigmoid(x[i]), wg = ops::gelu_erf(x[i]);
                worst_sig = std::max(worst_sig, ulp_dist(sig[i], ws));
                ASSERT_LE(ulp_dist(sig[i], ws), 4) << sig[i] << " vs " << ws;
                ASSERT_EQ(std::isnan(gelu[i]), std::isnan(wg));
                if (!std::isnan(wg) && gelu[i] != wg) {
                    const double err = std::fabs(double(gelu[i]) - wg) /
                                       (2 * ulp_of(wg) + std::ldexp(std::fabs(x[i]), -22));
                    worst_gelu = std::max(worst_gelu, err);
                    ASSERT_LE(err, 1.0) << gelu[i] << " vs " << wg;
                }
                worst_exp = std::max(worst_exp, ulp_dist(ex[i], std::exp(x[i])));
                ASSERT_LE(ulp_dist(ex[i], std::exp(x[i])), 1);
            }
            const Tensor t = f32_tensor({n}, x);
            const Tensor so = run_two_threads("Sigmoid", {t}, {})[0];
            const Tensor eo = run_two_threads("Exp", {t}, {})[0];
            ASSERT_EQ(std::memcmp(so.data<float>(), sig.data(), sig.size() * 4), 0);
            ASSERT_EQ(std::memcmp(eo.data<float>(), ex.data(), ex.size() * 4), 0);
        }
        std::printf("isa %d: sigmoid max %lld ulp, gelu max %.3f of the bound, exp max %lld ulp\n",
                    int(isa), static_cast<long long>(worst_sig), worst_gelu,
                    static_cast<long long>(worst_exp));
    }
}

// sigmoid_fast is within 1.5 ulp of the correctly rounded sigmoid (double precision) on every
// 97th float bit pattern.
TEST(OpsVecFastPath, SigmoidWithinOneAndAHalfUlp) {
    std::vector<float> x, y;
    for (uint64_t b = 0; b < (1ull << 32); b += 97) x.push_back(std::bit_cast<float>(uint32_t(b)));
    y.resize(x.size());
    ops::sigmoid_fast(x.data(), y.data(), static_cast<int64_t>(x.size()));
    double worst = 0;
    for (size_t i = 0; i < x.size(); ++i) {
        const double d = x[i];
        const double want = d >= 0 ? 1 / (1 + std::exp(-d)) : std::exp(d) / (1 + std::exp(d));
        if (std::isnan(want)) {
            ASSERT_TRUE(std::isnan(y[i]));
            continue;
        }
        worst = std::max(worst, std::fabs(y[i] - want) / ulp_of(want));
    }
    std::printf("sigmoid: max %.4f ulp\n", worst);
    EXPECT_LE(worst, 1.5);
}

// Tanh: vec_tanh within 3 ulp of std::tanh(float) (vec_tanh is below 1 ulp of the exact value,
// glibc documents up to 2 for tanhf) and the op's values on two threads; Gelu's tanh form within
// the gelu_fast bound of gelu_tanh.
TEST(OpsVecFastPath, TanhAndGeluTanhMatchPlain) {
    std::mt19937 rng(38);
    for (VecIsa isa : isas()) {
        ForceIsa f(isa);
        int64_t worst_tanh = 0;
        double worst_gelu = 0;
        for (int64_t n : {int64_t(1), int64_t(17), int64_t(300), int64_t(40000)}) {
            const std::vector<float> x = pointwise_inputs(rng, n);
            std::vector<float> th(x.size(), kNaN), gelu(x.size(), kNaN);
            ops::vec_tanh(x.data(), th.data(), n);
            ops::gelu_tanh_fast(x.data(), gelu.data(), n);
            for (size_t i = 0; i < x.size(); ++i) {
                SCOPED_TRACE(x[i]);
                worst_tanh = std::max(worst_tanh, ulp_dist(th[i], std::tanh(x[i])));
                ASSERT_LE(ulp_dist(th[i], std::tanh(x[i])), 3);
                ASSERT_EQ(std::signbit(th[i]), std::signbit(std::tanh(x[i])));
                const float wg = ops::gelu_tanh(x[i]);
                ASSERT_EQ(std::isnan(gelu[i]), std::isnan(wg));
                if (!std::isnan(wg) && gelu[i] != wg) {
                    const double err = std::fabs(double(gelu[i]) - wg) /
                                       (2 * ulp_of(wg) + std::ldexp(std::fabs(x[i]), -22));
                    worst_gelu = std::max(worst_gelu, err);
                    ASSERT_LE(err, 1.0) << gelu[i] << " vs " << wg;
                }
            }
            const Tensor out = run_two_threads("Tanh", {f32_tensor({n}, x)}, {})[0];
            ASSERT_EQ(std::memcmp(out.data<float>(), th.data(), th.size() * 4), 0);
        }
        std::printf(
            "isa %d: tanh max %lld ulp from std::tanh(float), gelu-tanh max %.3f of the "
            "bound\n",
            int(isa), static_cast<long long>(worst_tanh), worst_gelu);
    }
}

// The Gelu op (opset 20) runs gelu_fast / gelu_tanh_fast for float32 and the plain gelu_erf /
// gelu_tanh for float64.
TEST(OpsVecFastPath, GeluOpUsesFastPathForFloat32) {
    std::mt19937 rng(37);
    const std::vector<float> x = pointwise_inputs(rng, 20000);
    const std::vector<double> xd(x.begin(), x.end());
    for (const char* approx : {"none", "tanh"}) {
        const bool tanh = approx[0] == 't';
        std::vector<float> want(x.size());
        (tanh ? ops::gelu_tanh_fast : ops::gelu_fast)(x.data(), want.data(),
                                                      static_cast<int64_t>(x.size()));
        for (DataType dt : {DataType::kFloat32, DataType::kFloat64}) {
            auto m = ir::new_model(20);
            ir::GraphBuilder b(*m->graph);
            ir::Value* in = b.input("x", dt, std::vector<int64_t>{20000});
            b.output(
                b.op("Gelu", {in}, ir::attrs(ir::Attribute::make_string("approximate", approx))));
            runtime::SessionOptions opts;
            opts.threads = 2;
            runtime::Feeds feeds;
            feeds["x"] =
                ops::RtValue::of(dt == DataType::kFloat32 ? f32_tensor({20000}, x)
                                                          : Tensor::from_values(dt, {20000}, xd));
            const Tensor out = runtime::Session(*m, opts).run(feeds)[0].second.tensor();
            if (dt == DataType::kFloat32) {
                ASSERT_EQ(std::memcmp(out.data<float>(), want.data(), want.size() * 4), 0);
                continue;
            }
            for (size_t i = 0; i < xd.size(); ++i) {
                const double w = tanh ? ops::gelu_tanh(xd[i]) : ops::gelu_erf(xd[i]);
                ASSERT_TRUE(out.data<double>()[i] == w ||
                            (std::isnan(w) && std::isnan(out.data<double>()[i])));
            }
        }
    }
}

// layer_norm_fast gives layer_norm's values up to 1 ulp (the moments' summation order), also
// Mean and InvStdDev, on random shapes, with and without the pool.
TEST(OpsVecFastPath, LayerNormMatchesPlainOnRandomShapes) {
    std::mt19937 rng(34);
    ThreadPool pool(2);
    const int64_t inners[] = {1, 2, 3, 15, 16, 17, 31, 64, 100, 257, 768, 4099};
    for (VecIsa isa : isas()) {
        ForceIsa f(isa);
        int64_t worst = 0, identical = 0, total = 0;
        for (int t = 0; t < 72; ++t) {
            const int64_t inner = inners[static_cast<size_t>(t) % std::size(inners)];
            const int64_t rows = 1 + static_cast<int64_t>(rng() % 40);
            std::normal_distribution<float> g(static_cast<float>(rng() % 7) * 10.0f,
                                              t % 3 == 0 ? 1e-3f : 2.0f);
            std::vector<float> x(static_cast<size_t>(rows * inner));
            for (float& v : x) v = g(rng);
            std::vector<double> scale(static_cast<size_t>(inner)), bias(scale.size());
            for (size_t i = 0; i < scale.size(); ++i)
                scale[i] = static_cast<float>(g(rng) * 0.1), bias[i] = static_cast<float>(g(rng));
            const double eps = t % 2 ? 1e-5 : 1e-12;
            std::vector<float> y0(x.size(), kNaN), y1(x.size(), kNaN);
            std::vector<float> m0(size_t(rows), kNaN), m1(m0), i0(m0), i1(m0);
            ops::layer_norm<float>(x.data(), inner, scale, bias, eps, y0.data(), m0.data(),
                                   i0.data(), rows);
            ops::layer_norm_fast(x.data(), inner, scale, bias, eps, y1.data(), m1.data(), i1.data(),
                                 rows, t % 2 ? &pool : nullptr);
            for (size_t i = 0; i < x.size(); ++i) {
                const int64_t d = ulp_dist(y0[i], y1[i]);
                worst = std::max(worst, d), identical += d == 0, ++total;
                ASSERT_LE(d, 1) << "inner " << inner << " i " << i << " " << y0[i] << " " << y1[i];
            }
            for (size_t r = 0; r < size_t(rows); ++r) {
                ASSERT_LE(ulp_dist(m0[r], m1[r]), 1) << r;
                ASSERT_LE(ulp_dist(i0[r], i1[r]), 1) << r;
            }
        }
        std::printf("isa %d: layer-norm max %lld ulp, %lld of %lld identical\n", int(isa),
                    static_cast<long long>(worst), static_cast<long long>(identical),
                    static_cast<long long>(total));
    }
}

// Through the op on two threads: Y, Mean and InvStdDev are layer_norm's (within 1 ulp), with a
// broadcast Scale and no B.
TEST(OpsVecFastPath, LayerNormOpOutputs) {
    std::mt19937 rng(35);
    std::normal_distribution<float> g(1.0f, 3.0f);
    const int64_t rows = 96, inner = 257;
    std::vector<float> x(static_cast<size_t>(rows * inner)), s(static_cast<size_t>(inner));
    for (float& v : x) v = g(rng);
    for (float& v : s) v = g(rng);
    const auto out = run_two_threads("LayerNormalization",
                                     {f32_tensor({4, 24, inner}, x), f32_tensor({inner}, s)},
                                     ir::attrs(ir::Attribute::make_int("axis", -1)), 3);
    std::vector<float> y(x.size()), m(static_cast<size_t>(rows)), inv(m.size());
    const std::vector<double> scale(s.begin(), s.end()), bias(s.size(), 0.0);
    ops::layer_norm<float>(x.data(), inner, scale, bias, 1e-5f, y.data(), m.data(), inv.data(),
                           rows);
    ASSERT_EQ(out[1].dims(), (std::vector<int64_t>{4, 24, 1}));
    for (size_t i = 0; i < y.size(); ++i) ASSERT_LE(ulp_dist(out[0].data<float>()[i], y[i]), 1);
    for (size_t r = 0; r < m.size(); ++r) {
        ASSERT_LE(ulp_dist(out[1].data<float>()[r], m[r]), 1);
        ASSERT_LE(ulp_dist(out[2].data<float>()[r], inv[r]), 1);
    }
}

}  // namespace
}  // namespace pg
