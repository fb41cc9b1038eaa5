#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <regex>

#include "base/error.h"
#include "base/pyformat.h"
#include "compare/comparator.h"
#include "compare/report.h"
#include "compare/validate.h"

namespace pg::compare {
namespace {

// numpy.random.seed(0); numpy.random.rand(2, 3, 4).astype(float32): the §4.9 sample's runnerA.
Tensor sample_a() {
    std::mt19937 gen(0);  // numpy's legacy seeding is init_genrand(seed)
    std::vector<float> v;
    for (int i = 0; i < 24; ++i) {
        const double a = gen() >> 5, b = gen() >> 6;
        v.push_back(static_cast<float>((a * 67108864.0 + b) / 9007199254740992.0));
    }
    return Tensor::from_values(DataType::kFloat32, {2, 3, 4}, v);
}

Tensor sample_b(const Tensor& a) {  // about 1e-3 of deterministic noise
    std::vector<float> v;
    for (uint64_t i = 0; i < a.numel(); ++i) {
        v.push_back(a.data<float>()[i] + static_cast<float>(0.0025 * std::sin(7.0 * i)));
    }
    return Tensor::from_values(DataType::kFloat32, {2, 3, 4}, v);
}

Tensor idx() {
    return Tensor::from_values(DataType::kInt32, {3}, std::vector<int32_t>{1, 2, 3});
}

std::vector<std::string> texts(const LogLines& lines) {
    std::vector<std::string> out;
    for (const auto& l : lines) out.push_back(indented_text(l, 1));
    return out;
}

TEST(CompareReport, PyFormat) {
    EXPECT_EQ(py_g(1e-5, 5), "1e-05");
    EXPECT_EQ(py_g(0.002553, 5), "0.002553");
    EXPECT_EQ(py_g(4.6872e-07, 5), "4.6872e-07");
    EXPECT_EQ(py_g(-std::numeric_limits<double>::quiet_NaN(), 5), "nan");
    EXPECT_EQ(py_float(0.003), "0.003");
    EXPECT_EQ(py_float(1e-5), "1e-05");
    EXPECT_EQ(py_tuple({1, 1, 0}), "(1, 1, 0)");
    EXPECT_EQ(py_tuple({2}), "(2,)");
    EXPECT_EQ(py_tuple({}), "()");
}

TEST(CompareReport, SampleLogFloatOutput) {
    const Tensor a = sample_a();
    const OutputResult r = compare_simple("out", a, "out", sample_b(a), SimpleSettings{});
    ReportState st;
    const auto lines = texts(report_output(r, "runnerA", "runnerB", nullptr, st));
    ASSERT_GE(lines.size(), 10u);
    EXPECT_EQ(lines[0],
              "    Comparing Output: 'out' (dtype=float32, shape=(2, 3, 4)) with 'out' "
              "(dtype=float32, shape=(2, 3, 4))");
    EXPECT_EQ(lines[1], "        Tolerance: [abs=1e-05, rel=1e-05] | Checking elemwise error");
    EXPECT_EQ(lines[2],
              "        runnerA: out | Stats: mean=0.61045, std-dev=0.27092, var=0.073398, "
              "median=0.62433, min=0.020218 at (1, 1, 0), max=0.97862 at (1, 2, 0), "
              "avg-magnitude=0.61045, p90=0.91545, p95=0.95795, p99=0.97518");
    EXPECT_EQ(lines[3].substr(0, 48), "            ---- Histogram ----\n            Bin ");
    EXPECT_TRUE(std::regex_search(
        lines[3], std::regex(R"(\n            \(0\.0\d+, 0\.1\d+ ?\) \|          \d \| #+)")));
    EXPECT_TRUE(
        std::regex_match(lines[4], std::regex("        runnerB: out \\| Stats: mean=.*p99=.*")));
    EXPECT_EQ(lines[6], "        Error Metrics: out");
    EXPECT_TRUE(std::regex_match(
        lines[7],
        std::regex(
            R"(            Minimum Required Tolerance: elemwise error \| \[abs=0\.00\d+\] OR \[rel=0\.\d+\] \(requirements may be lower if both abs/rel tolerances are set\))")));
    EXPECT_EQ(lines[8].substr(0, 44), "            Absolute Difference | Stats: mea");
    EXPECT_EQ(
        lines.back(),
        "        FAILED | Output: 'out' | Difference exceeds tolerance (rel=1e-05, abs=1e-05)");
    const std::string all = [&] {
        std::string s;
        for (auto& l : lines) s += l + "\n";
        return s;
    }();
    EXPECT_NE(all.find("Cosine Similarity: 0.99999"), std::string::npos);
    EXPECT_NE(all.find("Worst Channels (axis 1)\n                channel "), std::string::npos);
}

TEST(CompareReport, SampleLogIntOutputAndPassingMaxStat) {
    ReportState st;
    OutputResult r = compare_simple("idx", idx(), "idx", idx(), SimpleSettings{});
    const auto lines = texts(report_output(r, "runnerA", "runnerB", nullptr, st));
    EXPECT_EQ(lines[2],
              "        runnerA: idx | Stats: mean=2, std-dev=0.8165, var=0.66667, median=2, min=1 "
              "at (0,), max=3 at (2,), avg-magnitude=2, p90=2.8, p95=2.9, p99=2.98");
    EXPECT_NE(std::find(lines.begin(), lines.end(),
                        "            Minimum Required Tolerance: elemwise error | [abs=0] OR "
                        "[rel=0] (requirements may be lower if both abs/rel tolerances are set)"),
              lines.end());
    EXPECT_NE(std::find(lines.begin(), lines.end(),
                        "            Absolute Difference | Stats: mean=0, std-dev=0, var=0, "
                        "median=0, min=0 at (0,), max=0 at (0,), avg-magnitude=0, p90=0, p95=0, "
                        "p99=0"),
              lines.end());
    EXPECT_EQ(
        lines.back(),
        "        PASSED | Output: 'idx' | Difference is within tolerance (rel=1e-05, abs=1e-05)");
    // --atol 0.003 --check-error-stat out:max: passes, no suffix, histograms only at VERBOSE.
    CompareArgs args;
    args.atol = {"0.003"};
    args.check_error_stat = {"mean", "out:max"};
    const Tensor a = sample_a();
    r = compare_simple("out", a, "out", sample_b(a),
                       resolve_simple(parse_compare_options(args), "out"));
    EXPECT_TRUE(r.passed);
    const LogLines ll = report_output(r, "runnerA", "runnerB", nullptr, st);
    EXPECT_EQ(ll[1].text, "Tolerance: [abs=0.003, rel=1e-05] | Checking max error");
    EXPECT_EQ(ll[3].severity, Severity::kVerbose);  // histogram
    EXPECT_EQ(ll.back().text,
              "PASSED | Output: 'out' | Difference is within tolerance (rel=1e-05, abs=0.003)");
}

TEST(CompareReport, HistogramTextMatchesPolygraphy) {
    Histogram h;
    h.edges = {0.0199, 0.116, 0.212, 0.308, 0.404, 0.5, 0.596, 0.692, 0.788, 0.883, 0.979};
    h.counts = {3, 0, 2, 2, 2, 3, 3, 3, 2, 4};
    const std::string s = histogram_string(h);
    EXPECT_EQ(s.substr(0, s.find("(0.116 ,")),
              "---- Histogram ----\nBin Range       |  Num Elems | Visualization\n"
              "(0.0199, 0.116) |          3 | ##############################\n");
    EXPECT_NE(s.find("(0.116 , 0.212) |          0 | \n"), std::string::npos);
    EXPECT_NE(s.find("(0.883 , 0.979) |          4 | ########################################"),
              std::string::npos);
}

TEST(CompareReport, AccuracyComparisonAndJson) {
    const Tensor a = sample_a();
    std::vector<RunResult> runs = {{"runnerA", {{{"out", a}, {"idx", idx()}}}},
                                   {"runnerB", {{{"out", sample_b(a)}, {"idx", idx()}}}}};
    LogLines all;
    ComparatorContext ctx{parse_compare_options({}),
                          nullptr,
                          [&](const LogLines& l) { all.insert(all.end(), l.begin(), l.end()); },
                          {}};
    const AccuracyResult r = compare_accuracy(runs, ctx);
    EXPECT_FALSE(r.passed());
    EXPECT_EQ(all.front().text, "Accuracy Comparison | runnerA vs. runnerB");
    EXPECT_EQ(all[all.size() - 2].text, "FAILED | Mismatched outputs: ['out']");
    EXPECT_EQ(all.back().text,
              "Accuracy Summary | runnerA vs. runnerB | Passed: 0/1 iterations | Pass Rate: 0.0%");
    EXPECT_EQ(all.back().severity, Severity::kError);
    const auto j = accuracy_to_json(r);
    EXPECT_EQ(j["pairs"][0]["iterations"][0]["outputs"][0]["passed"], false);
    EXPECT_EQ(j["pairs"][0]["iterations"][0]["outputs"][1]["output"], "idx");
    EXPECT_TRUE(j["pairs"][0]["iterations"][0]["outputs"][0]["metrics"].contains("rmse"));
    EXPECT_TRUE(
        j["pairs"][0]["iterations"][0]["outputs"][0]["absolute_difference"].contains("median"));
    // No common outputs: Polygraphy's critical error.
    runs[1].iterations[0] = {};
    runs[0].iterations[0].resize(1);
    EXPECT_THROW(compare_accuracy(runs, ctx), Error);
}

TEST(CompareValidate, Messages) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    const auto bad =
        Tensor::from_values(DataType::kFloat64, {2, 2}, std::vector<double>{1, inf, nan, nan});
    const std::vector<RunResult> runs = {{"r", {{{"good", idx()}, {"bad", bad}}}}};
    const ValidationResult v = validate_runs(runs);
    EXPECT_FALSE(v.passed());
    ASSERT_EQ(v.outputs.size(), 2u);
    EXPECT_EQ(v.outputs[1].nan_count, 2u);
    EXPECT_EQ(v.outputs[1].first_nan, (std::vector<int64_t>{1, 0}));
    EXPECT_EQ(v.outputs[1].first_inf, (std::vector<int64_t>{0, 1}));
    std::vector<std::string> t;
    for (const auto& l : v.lines) t.push_back(l.text);
    EXPECT_EQ(t.front(), "Output Validation | Runners: ['r']");
    EXPECT_EQ(t[1],
              "r                                   | Validating output: good (check_inf=True, "
              "check_nan=True)");
    auto has = [&](const std::string& s) { return std::find(t.begin(), t.end(), s) != t.end(); };
    EXPECT_TRUE(has("PASSED | Output: good is valid"));
    EXPECT_TRUE(has("NaN Detected | One or more NaNs were encountered in this output"));
    EXPECT_TRUE(has("2 NaN values, first at (1, 0)"));
    EXPECT_TRUE(
        has("Inf Detected | One or more non-finite values were encountered in this output"));
    EXPECT_TRUE(has("1 Inf value, first at (0, 1)"));
    EXPECT_TRUE(has("FAILED | Errors detected in output: bad"));
    EXPECT_EQ(t.back(), "FAILED | Output Validation");
}

}  // namespace
}  // namespace pg::compare
