#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "compare/error_stats.h"
#include "compare/simple_compare.h"

namespace pg::compare {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

Tensor f32(std::vector<float> v) {
    const int64_t n = static_cast<int64_t>(v.size());
    return Tensor::from_values(DataType::kFloat32, {n}, v);
}
Tensor f64(std::vector<double> v, std::vector<int64_t> dims = {}) {
    if (dims.empty()) dims = {static_cast<int64_t>(v.size())};
    return Tensor::from_values(DataType::kFloat64, dims, v);
}

SimpleSettings settings(double atol, double rtol, ErrorStat stat = ErrorStat::kElemwise) {
    SimpleSettings s;
    s.atol = make_number(atol);
    s.rtol = make_number(rtol);
    s.stat = stat;
    return s;
}

TEST(CompareStats, HandComputedVector) {
    const OutputResult r =
        compare_simple("o", f32({1, 2, 3, 4}), "o", f32({1, 2, 2, 5}), settings(1e-5, 1e-5));
    ASSERT_TRUE(r.stats);
    const PairStats& p = *r.stats;
    EXPECT_FALSE(r.passed);
    EXPECT_EQ(p.kind, DiffKind::kFloat32);
    EXPECT_EQ(p.elemwise_mismatches, 2u);
    EXPECT_EQ(p.first_mismatch, 2u);
    EXPECT_DOUBLE_EQ(p.absdiff.max, 1);
    EXPECT_EQ(p.absdiff.argmax, std::vector<int64_t>{2});
    EXPECT_DOUBLE_EQ(p.absdiff.mean, 0.5);
    EXPECT_DOUBLE_EQ(p.absdiff.median, 0.5);
    EXPECT_DOUBLE_EQ(p.absdiff.var, 0.25);
    EXPECT_DOUBLE_EQ(p.absdiff.std_dev, 0.5);
    EXPECT_DOUBLE_EQ(p.reldiff.max, 0.5);
    EXPECT_NEAR(p.reldiff.mean, 0.175, 1e-7);
    EXPECT_NEAR(p.reldiff.median, 0.1, 1e-7);
    EXPECT_NEAR(p.reldiff.p90, 0.41, 1e-7);  // numpy linear quantile of [0, 0, .2, .5]
    EXPECT_NEAR(p.cosine_similarity, 31 / std::sqrt(30.0 * 34.0), 1e-12);
    EXPECT_NEAR(p.rmse, std::sqrt(0.5), 1e-12);
    EXPECT_NEAR(p.snr_db, 10 * std::log10(34.0 / 2.0), 1e-12);
    EXPECT_DOUBLE_EQ(p.out0.mean, 2.5);
    EXPECT_DOUBLE_EQ(p.out1.median, 2);
    EXPECT_DOUBLE_EQ(r.required_abs(), 1);
}

TEST(CompareStats, ToleranceBoundaryBothSides) {
    auto run = [](double atol, double rtol) {
        return compare_simple("o", f64({1.5}), "o", f64({1.0}), settings(atol, rtol)).passed;
    };
    EXPECT_TRUE(run(0.5, 0));       // abs == atol passes (strict >)
    EXPECT_TRUE(run(0, 0.5));       // rel == rtol passes
    EXPECT_FALSE(run(0.49, 0.49));  // both violated
    EXPECT_TRUE(run(0.49, 0.51));   // one tolerance suffices
    for (ErrorStat st : {ErrorStat::kMax, ErrorStat::kMean, ErrorStat::kMedian}) {
        EXPECT_TRUE(compare_simple("o", f64({1.5}), "o", f64({1.0}), settings(0.5, 0, st)).passed);
        EXPECT_FALSE(
            compare_simple("o", f64({1.5}), "o", f64({1.0}), settings(0.4999, 0.4999, st)).passed);
    }
}

TEST(CompareStats, CheckErrorStatVariants) {
    const Tensor a = f64({0, 0, 0, 10}), b = f64({0, 0, 0, 0});
    auto run = [&](ErrorStat st, double atol, double q = 0.99) {
        SimpleSettings s = settings(atol, 1e-5, st);
        s.quantile = make_number(q);
        return compare_simple("o", a, "o", b, s);
    };
    EXPECT_FALSE(run(ErrorStat::kMax, 1).passed);
    EXPECT_TRUE(run(ErrorStat::kMedian, 1e-5).passed);
    EXPECT_TRUE(run(ErrorStat::kMean, 3).passed);
    EXPECT_FALSE(run(ErrorStat::kMean, 2).passed);
    EXPECT_TRUE(run(ErrorStat::kQuantile, 1e-5, 0.5).passed);
    const OutputResult q = run(ErrorStat::kQuantile, 5, 1.0);
    EXPECT_FALSE(q.passed);
    EXPECT_EQ(q.required_abs(), 10);
    // Zeros of the reference get Polygraphy's epsilon.
    EXPECT_TRUE(q.stats->zero_in_reference);
    EXPECT_DOUBLE_EQ(q.stats->reldiff.max, 10 / kRelEpsilon);
}

TEST(CompareStats, NaNAndInfinities) {
    OutputResult r = compare_simple("o", f64({kNaN, 1}), "o", f64({1, 1}), settings(1, 1));
    EXPECT_FALSE(r.passed);
    EXPECT_EQ(r.stats->out0.nan_count, 1u);
    EXPECT_TRUE(std::isnan(r.stats->out0.median));
    EXPECT_TRUE(std::isnan(r.stats->absdiff.max));
    EXPECT_EQ(r.stats->absdiff.argmax, std::vector<int64_t>{0});
    // Matching infinities: NaN difference unless --infinities-compare-equal.
    r = compare_simple("o", f64({kInf, -kInf}), "o", f64({kInf, -kInf}), settings(1, 1));
    EXPECT_FALSE(r.passed);
    SimpleSettings s = settings(1e-5, 1e-5);
    s.infinities_compare_equal = true;
    r = compare_simple("o", f64({kInf, -kInf}), "o", f64({kInf, -kInf}), s);
    EXPECT_TRUE(r.passed);
    EXPECT_EQ(r.stats->absdiff.max, 0);
    EXPECT_EQ(r.stats->out0.inf_count, 2u);
    r = compare_simple("o", f64({kInf}), "o", f64({1}), s);  // inf on one side always fails
    EXPECT_FALSE(r.passed);
}

TEST(CompareStats, BoolIntAndMixedDtypes) {
    const auto b = [](std::vector<uint8_t> v) {
        return Tensor::from_values(DataType::kBool, {static_cast<int64_t>(v.size())}, v);
    };
    OutputResult r = compare_simple("o", b({1, 0, 1}), "o", b({1, 1, 1}), settings(1e-5, 1e-5));
    EXPECT_FALSE(r.passed);
    EXPECT_TRUE(r.stats->absdiff.is_bool);
    EXPECT_TRUE(compare_simple("o", b({1, 0}), "o", b({1, 0}), settings(1e-5, 1e-5)).passed);
    const auto i32 = Tensor::from_values(DataType::kInt32, {3}, std::vector<int32_t>{1, 2, 3});
    r = compare_simple("o", i32, "o", i32, settings(1e-5, 1e-5));
    EXPECT_TRUE(r.passed);
    EXPECT_EQ(r.stats->kind, DiffKind::kInteger);
    // float64 golden vs float32: compared in float64.
    r = compare_simple("o", f32({1.0f, 2.0f}), "o", f64({1.0, 2.0 + 1e-9}), settings(0, 1e-8));
    EXPECT_EQ(r.stats->kind, DiffKind::kFloat64);
    EXPECT_TRUE(r.passed);
    EXPECT_NEAR(r.stats->absdiff.max, 1e-9, 1e-15);
}

TEST(CompareStats, ShapeCheckAndNoShapeCheck) {
    const Tensor a = f64({1, 2, 3, 4, 5, 6}, {2, 3});
    const Tensor t = f64({1, 4, 2, 5, 3, 6}, {3, 2});  // a transposed
    OutputResult r = compare_simple("o", a, "o", t, settings(0, 0));
    EXPECT_FALSE(r.passed);
    EXPECT_FALSE(r.stats);
    ASSERT_EQ(r.not_compared.size(), 1u);
    EXPECT_EQ(r.not_compared[0],
              "FAILED | Output: `o` | Will not compare outputs of different shapes.\n"
              "Note: Output shapes are (2, 3) and (3, 2).");
    SimpleSettings s = settings(0, 0);
    s.check_shapes = false;
    EXPECT_TRUE(compare_simple("o", a, "o", t, s).passed);  // permuted back
    EXPECT_TRUE(compare_simple("o", a, "o", f64({1, 2, 3, 4, 5, 6}, {6}), s).passed);  // reshaped
}

TEST(CompareStats, WorstChannels) {
    const Tensor a = f64({0, 0, 0, 0, 0, 0}, {1, 3, 2});
    const Tensor b = f64({0, 0, 1, 0, 5, 0}, {1, 3, 2});
    const OutputResult r = compare_simple("o", a, "o", b, settings(1e-5, 1e-5));
    ASSERT_EQ(r.stats->channel_axis, 1);
    const auto& w = r.stats->worst_channels;
    ASSERT_EQ(w.size(), 3u);
    EXPECT_EQ(w[0].channel, 2);
    EXPECT_EQ(w[0].max_abs, 5);
    EXPECT_EQ(w[0].mean_abs, 2.5);
    EXPECT_EQ(w[1].channel, 1);
    EXPECT_EQ(w[2].channel, 0);
}

TEST(CompareStats, HistogramAndEmpty) {
    const ArrayStats s = compute_array_stats(f64({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}), std::nullopt);
    ASSERT_EQ(s.histogram.counts.size(), 10u);
    for (uint64_t c : s.histogram.counts) EXPECT_EQ(c, 1u);
    EXPECT_DOUBLE_EQ(s.p99, 8.91);
    const ArrayStats e = compute_array_stats(f64({}, {0}), std::nullopt);
    EXPECT_EQ(e.count, 0u);
    EXPECT_EQ(e.p90, kInf);
    EXPECT_TRUE(e.histogram.empty());
    EXPECT_TRUE(compare_simple("o", f64({}, {0}), "o", f64({}, {0}), settings(0, 0)).passed);
}

TEST(CompareStats, Float16AndBFloat16Inputs) {
    // 1.0 and 1.5 in float16 (0x3C00, 0x3E00) and bfloat16 (0x3F80, 0x3FC0).
    const auto h =
        Tensor::from_values(DataType::kFloat16, {2}, std::vector<uint16_t>{0x3C00, 0x3E00});
    const auto bf =
        Tensor::from_values(DataType::kBFloat16, {2}, std::vector<uint16_t>{0x3F80, 0x3FC0});
    const OutputResult r = compare_simple("o", h, "o", bf, settings(0, 0));
    EXPECT_TRUE(r.passed);
    EXPECT_EQ(r.stats->kind, DiffKind::kFloat32);
}

TEST(CompareIndices, Tolerance) {
    const auto t = [](std::vector<int64_t> v) {
        return Tensor::from_values(DataType::kInt64, {1, static_cast<int64_t>(v.size())}, v);
    };
    EXPECT_TRUE(compare_indices("o", t({0, 1, 2}), "o", t({0, 1, 2}), 0, false).passed);
    OutputResult r = compare_indices("o", t({0, 1, 2}), "o", t({1, 0, 2}), 0, false);
    EXPECT_FALSE(r.passed);
    EXPECT_EQ(r.index_failures.at(0), "FAILED | Difference exceeds index tolerance (0)");
    EXPECT_TRUE(compare_indices("o", t({0, 1, 2}), "o", t({1, 0, 2}), 1, false).passed);
    EXPECT_FALSE(compare_indices("o", t({0, 1, 2}), "o", t({1, 2, 0}), 1, false).passed);
    EXPECT_TRUE(compare_indices("o", t({0, 1, 2}), "o", t({1, 2, 0}), 2, false).passed);
    r = compare_indices("o", t({7, 1, 2}), "o", t({0, 1, 2}), 0, false);
    EXPECT_EQ(r.index_failures.at(0), "FAILED | Value: 7 not found in output");
    r = compare_indices("o", t({0, 1}), "o", t({0, 1, 2}), 0, false);
    EXPECT_EQ(r.not_compared.at(0), "Cannot compare outputs of different shapes.");
}

}  // namespace
}  // namespace pg::compare
