// INT8 fake quantization (emu/precision.h) and calibration (emu/calibration.h): round trips of
// known values, per-channel weight scales, saturation counts, percentile calibration, the cache
// format, and an EmuRunner at INT8.
#include <gtest/gtest.h>

#include <cmath>

#include "base/error.h"
#include "emu/calibration.h"
#include "emu/emu_runner.h"
#include "emu/precision.h"
#include "ir/builder.h"

namespace pg::emu {
namespace {

Tensor f32(const std::vector<int64_t>& dims, const std::vector<float>& v) {
    return Tensor::from_values<float>(DataType::kFloat32, dims, v);
}

TEST(EmuInt8, FakeQuantKnownValues) {
    const float s = 0.5f;
    EXPECT_EQ(fake_quant_int8(1.0f, s), 1.0f);     // exactly a level
    EXPECT_EQ(fake_quant_int8(0.25f, s), 0.0f);    // 0.5 level -> ties to even (0)
    EXPECT_EQ(fake_quant_int8(0.75f, s), 1.0f);    // 1.5 -> 2
    EXPECT_EQ(fake_quant_int8(1.25f, s), 1.0f);    // 2.5 -> 2
    EXPECT_EQ(fake_quant_int8(-1.25f, s), -1.0f);  // -2.5 -> -2
    EXPECT_EQ(fake_quant_int8(0.3f, s), 0.5f);
    EXPECT_EQ(fake_quant_int8(63.5f, s), 63.5f);    // 127
    EXPECT_EQ(fake_quant_int8(100.0f, s), 63.5f);   // saturates at 127 * s
    EXPECT_EQ(fake_quant_int8(-64.0f, s), -64.0f);  // -128 is a level
    EXPECT_EQ(fake_quant_int8(-100.0f, s), -64.0f);
    EXPECT_EQ(fake_quant_int8(INFINITY, s), 63.5f);
    EXPECT_TRUE(std::isnan(fake_quant_int8(NAN, s)));
    EXPECT_EQ(fake_quant_int8(1.25f, s, RoundingMode::kNearestAway), 1.5f);
    EXPECT_EQ(fake_quant_int8(0.9f, s, RoundingMode::kTowardZero), 0.5f);
    EXPECT_EQ(fake_quant_int8(3.0f, 0.0f), 0.0f);  // all-zero calibration
    EXPECT_FLOAT_EQ(int8_scale(127.0), 1.0f);
    EXPECT_EQ(int8_scale(0), 0.0f);
    // Quantize-dequantize is idempotent: levels map to themselves.
    const float sc = int8_scale(3.7);
    for (int q = -128; q <= 127; ++q) {
        const float x = fake_quant_int8(static_cast<float>(q) * sc * 1.3f, sc);
        EXPECT_EQ(fake_quant_int8(x, sc), x);
    }
}

TEST(EmuInt8, PerChannelScalesAndSaturation) {
    // [3, 2, 2]: channel amax 1.27, 254, 0.
    const Tensor w = f32({3, 2, 2}, {0.5f, -1.27f, 0.1f, 0, 254, -3, 2, 1, 0, 0, 0, 0});
    const auto scales = int8_channel_scales(w, 0);
    ASSERT_EQ(scales.size(), 3u);
    EXPECT_FLOAT_EQ(scales[0], 0.01f);
    EXPECT_FLOAT_EQ(scales[1], 2.0f);
    EXPECT_EQ(scales[2], 0.0f);
    // Along axis 1: amax over {0.5,-1.27,254,-3,0,0} and {0.1,0,2,1,0,0}.
    const auto s1 = int8_channel_scales(w, 1);
    ASSERT_EQ(s1.size(), 2u);
    EXPECT_FLOAT_EQ(s1[0], 2.0f);
    EXPECT_FLOAT_EQ(s1[1], 1.27f / 127.0f * 2.0f / 1.27f * 1.0f);  // amax 2

    RoundingStats st;
    uint64_t nonfinite = 0;
    Tensor q = fake_quant_copy(w, scales, 0, RoundingMode::kNearestEven, st, nonfinite);
    const float* d = q.data<float>();
    EXPECT_FLOAT_EQ(d[0], 0.5f);
    EXPECT_FLOAT_EQ(d[1], -1.27f);
    EXPECT_FLOAT_EQ(d[4], 254.0f);
    EXPECT_FLOAT_EQ(d[5], -4.0f);  // -3 / 2 = -1.5 -> -2 (ties to even)
    EXPECT_FLOAT_EQ(d[6], 2.0f);
    EXPECT_FLOAT_EQ(d[7], 0.0f);  // 0.5 -> 0
    EXPECT_EQ(st.values, 12u);
    EXPECT_EQ(st.saturated, 0u);
    EXPECT_DOUBLE_EQ(st.max_abs, 254.0);

    // Per tensor with a scale too small: values beyond 127.5 levels saturate.
    RoundingStats st2;
    const Tensor a = f32({6}, {0, 1, 127, 127.4f, 128, -200});
    q = fake_quant_copy(a, {1.0f}, 0, RoundingMode::kNearestEven, st2, nonfinite);
    d = q.data<float>();
    EXPECT_EQ(d[3], 127.0f);
    EXPECT_EQ(d[4], 127.0f);
    EXPECT_EQ(d[5], -128.0f);
    EXPECT_EQ(st2.saturated, 2u);  // 128 and -200 (127.4 rounds to 127: not clipped)
    EXPECT_EQ(st2.values, 6u);
    EXPECT_NEAR(st2.max_round_err, 72.0, 1e-9);
    EXPECT_EQ(nonfinite, 0u);
    // Mismatched channel count is an input error.
    EXPECT_THROW(fake_quant_copy(a, {1.0f, 2.0f}, 0, RoundingMode::kNearestEven, st2, nonfinite),
                 Error);
}

TEST(EmuInt8, CacheFormatRoundTrip) {
    const ScaleTable t = {{"x", 0.0157480314f}, {"a:b", 1e-7f}, {"y", 3.0f}};
    const std::string text = format_calibration_cache(t, "minmax");
    EXPECT_EQ(text.rfind("polygraph-int8-calibration v1 method=minmax\n", 0), 0u);
    EXPECT_EQ(parse_calibration_cache(text, "c"), t);  // bit-identical
    EXPECT_THROW(parse_calibration_cache("", "c"), Error);
    EXPECT_THROW(parse_calibration_cache("x: 1\n", "c"), Error);
    EXPECT_THROW(parse_calibration_cache("polygraph-int8-calibration v1\nx: nope\n", "c"), Error);
    EXPECT_THROW(parse_calibration_cache("polygraph-int8-calibration v1\nx: -1\n", "c"), Error);
    EXPECT_EQ(parse_calibration_method("entropy"), CalibrationMethod::kEntropy);
    EXPECT_THROW(parse_calibration_method("kl"), Error);
}

// A deterministic half-normal-like sample: |x| with most mass near 0 (sum of uniforms).
std::vector<float> bulk_values(size_t n) {
    std::vector<float> v;
    uint32_t state = 12345;
    auto uniform = [&] {
        state = state * 1664525u + 1013904223u;
        return static_cast<float>(state >> 8) / static_cast<float>(1u << 24);
    };
    for (size_t i = 0; i < n; ++i)
        v.push_back(std::fabs(uniform() + uniform() + uniform() + uniform() - 2.0f));
    return v;
}

TEST(EmuInt8, EntropyThresholdClipsRareOutliers) {
    std::vector<float> v = bulk_values(200000);       // |x| <= 2, most below 1
    for (int i = 0; i < 20; ++i) v.push_back(10.0f);  // 0.01% of large outliers
    const double t = entropy_amax(v);
    EXPECT_LT(t, 5.0);  // well below amax = 10: the outliers are clipped
    EXPECT_GT(t, 1.0);  // but the bulk of the distribution is kept
}

TEST(EmuInt8, EntropyThresholdOfUniformIsNearAmax) {
    std::vector<float> v;
    for (int i = 0; i < 100000; ++i) v.push_back(static_cast<float>(i) / 99999.0f);
    const double t = entropy_amax(v);
    EXPECT_GT(t, 0.95);
    EXPECT_LE(t, 1.0);
}

TEST(EmuInt8, EntropyThresholdEdgeCases) {
    EXPECT_EQ(entropy_amax({}), 0.0);
    EXPECT_EQ(entropy_amax({0.0f, 0.0f}), 0.0);
    // A histogram with fewer bins than levels keeps everything.
    EXPECT_DOUBLE_EQ(entropy_threshold(std::vector<double>(64, 1.0), 0.5), 32.0);
    // All mass in the first bin: a candidate of kEntropyLevels bins already represents it
    // exactly, so the threshold is the smallest candidate.
    std::vector<double> h(kEntropyBins, 0.0);
    h[0] = 1000;
    EXPECT_DOUBLE_EQ(entropy_threshold(h, 1.0), static_cast<double>(kEntropyLevels) + 0.5);
}

// y = (x * s) @ w, w [8, 2].
std::unique_ptr<ir::Model> mul_matmul_model() {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{1, 8});
    ir::Value* v =
        b.op("Mul", {x, b.constant_f32("s", {1, 8}, std::vector<float>(8, 1.0f))}, {}, "scale");
    std::vector<float> w(16);
    for (size_t i = 0; i < 16; ++i) w[i] = (i % 2 ? 0.5f : -2.0f) * static_cast<float>(i + 1) / 16;
    v = b.op("MatMul", {v, b.constant_f32("w", {8, 2}, w)}, {}, "mm");
    b.output(v, DataType::kFloat32, {1, 2});
    return m;
}

TEST(EmuInt8, CalibrateAndRun) {
    auto m = mul_matmul_model();
    EmuRunnerOptions o;
    o.policy.default_precision = Precision::kINT8;
    EmuRunner r(*m, o);
    ASSERT_EQ(r.int8_nodes().size(), 1u);
    EXPECT_EQ(r.int8_nodes()[0]->name, "mm");
    EXPECT_EQ(r.resolved_precisions()[0].second, Precision::kFP32);  // Mul stays float32
    runners::NamedTensors f1 = {{"x", f32({1, 8}, {1, -2, 3, -4, 5, -6, 7, 8})}};
    runners::NamedTensors f2 = {{"x", f32({1, 8}, {0, 0, 0, 0, 0, 0, 0, -12.7f})}};
    std::map<std::string, Tensor> feeds(f1.begin(), f1.end());
    EXPECT_THROW(r.infer(feeds), Error);  // not calibrated
    CalibrationOptions co;
    const ScaleTable& s = r.calibrate({f1, f2}, co);
    ASSERT_EQ(s.size(), 1u);                   // the Mul output
    EXPECT_FLOAT_EQ(s.begin()->second, 0.1f);  // amax 12.7 over both feeds
    const auto out = r.infer(feeds);
    const NodeEvidence* e = r.evidence().find("mm");
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->precision, Precision::kINT8);
    EXPECT_EQ(e->inputs.values, 8u + 16u);
    EXPECT_EQ(e->inputs.saturated, 0u);
    // Reference: the same fake quantization by hand.
    const auto ws = int8_channel_scales(f32({8, 2},
                                            [] {
                                                std::vector<float> w(16);
                                                for (size_t i = 0; i < 16; ++i)
                                                    w[i] = (i % 2 ? 0.5f : -2.0f) *
                                                           static_cast<float>(i + 1) / 16;
                                                return w;
                                            }()),
                                        1);
    ASSERT_EQ(ws.size(), 2u);
    const float* x = f1[0].second.data<float>();
    for (int j = 0; j < 2; ++j) {
        double acc = 0;
        for (int k = 0; k < 8; ++k) {
            const float w =
                (((k * 2 + j) % 2) ? 0.5f : -2.0f) * static_cast<float>(k * 2 + j + 1) / 16;
            acc += static_cast<double>(fake_quant_int8(x[k], 0.1f)) * fake_quant_int8(w, ws[j]);
        }
        EXPECT_NEAR(out[0].second.data<float>()[j], acc, 1e-5) << j;
    }

    // Percentile calibration on a single feed: 50% of |x| of {1..8} is 4 -> scale 4/127 and the
    // values above 4 * 127.5 / 127 saturate (5, 6, 7, 8: four of them).
    co.method = CalibrationMethod::kPercentile;
    co.percentile = 50;
    r.calibrate({f1}, co);
    EXPECT_FLOAT_EQ(r.int8_scales().at(s.begin()->first), 4.0f / 127.0f);
    r.infer(feeds);
    EXPECT_EQ(r.evidence().find("mm")->inputs.saturated, 4u);
    EXPECT_TRUE(r.evidence().find("mm")->notable());
    // A scale table that misses the activation is refused.
    EXPECT_THROW(r.set_int8_scales({{"other", 1.0f}}), Error);
}

}  // namespace
}  // namespace pg::emu
