// ONNX Runtime as a second oracle: every ONNX node test run by the reference interpreter and by
// ONNX Runtime, on the test's stored inputs, on seeded random values in place of its float
// inputs, and with each change of the attribute sweep (support/attribute_changes.h). A node test's
// expected outputs check one input and one set of attributes; here the two runtimes must agree
// wherever both run. Outputs that differ are a failure unless kKnownDifferences explains them
// (each entry says which side is right and why), or, on the stored inputs, the reference
// reproduces the test's expected outputs ("ort-wrong"). Models only one side runs are counted,
// not failed: ONNX Runtime runs models the ONNX rules refuse (a keepdims of 2, an attribute the
// op does not have), and refuses some the rules allow. A crash of ONNX Runtime is counted
// ("ort-crashed": Attention with q_num_heads 0 divides by zero) and the test goes on.
// Skips when ONNX Runtime is not installed (`make setup`).
// make test runs one random-input case and one attribute change in 12 (the same ones each run;
// about 1.5 minutes for both suites, 40 tests per child process); PG_ORT_DIFF_ALL=1 runs three
// random-input cases, every change, and the *_expanded tests (function bodies; their ops have
// tests of their own). PG_ORT_DIFF_FILTER=REGEX limits the tests and prints every case.
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <regex>

#include "base/error.h"
#include "base/log.h"
#include "onnx/model_io.h"
#include "runners/onnxrt_runner.h"
#include "support/attribute_changes.h"
#include "support/node_test_data.h"
#include "support/ort_differential.h"
#include "support/sweep_harness.h"
#include "support/test_paths.h"

namespace pg {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kCeiling = 256ull << 20;  // bytes a changed model may ask the reference for
constexpr unsigned kSecondsPerTest = 120;  // the reference, every case of one test, at most
// Tests per child process: each child pays ONNX Runtime's start-up (its kernel registry) once.
constexpr size_t kTestsPerChild = 40;
constexpr int kRandomSeeds = 1;       // random-input cases per test (PG_ORT_DIFF_ALL: kAllSeeds)
constexpr int kAllSeeds = 3;
constexpr uint32_t kSampleEvery = 12;  // without PG_ORT_DIFF_ALL: one attribute change in 12

// Cases whose outputs differ for a reason that is not the reference's bug: a regex over
// "TEST CASE", and why.
struct KnownDifference {
    const char* pattern;
    const char* why;
};
constexpr KnownDifference kKnownDifferences[] = {
    {R"(\(Attention\) scale (added )?= nan)",
     "ONNX Runtime reads a NaN scale as 'not given'; the reference computes with it (NaN)"},
    {R"(\(Attention\) (softcap|qk_matmul_output_mode))",
     "qk_matmul_output: ONNX's reference softcaps before the mask and outputs the softcapped "
     "product in mode 0; ONNX Runtime outputs Q.K before the softcap"},
    {R"(attention_.*fp16.* (scale|softcap) added = 1e\+30)",
     "float16 computed in float32 and double stays finite where float16 arithmetic overflows"},
    {R"(\((AveragePool|MaxPool|LpPool)\) (auto_pad|dilations) added)",
     "ONNX Runtime sizes SAME pads of a pool without its dilation (output 3x3 where ONNX's "
     "ceil(in / stride) is 4x4)"},
    {R"(\((AveragePool|MaxPool|LpPool)\) strides (added )?all (1099511627776|int64 max))",
     "strides past the input: ONNX Runtime's SAME pads go negative; ONNX's total pad is max(0, ...)"},
    {R"(test_convtranspose_output_shape .*auto_pad added)",
     "a negative total padding: ONNX's reference floors its half (Python //), ONNX Runtime "
     "truncates it"},
    {R"(\(Resize\) cubic_coeff_a (added )?= 1e\+30|\(LRN\) (alpha|bias) (added )?= -?inf|)"
     R"(\(Attention\) scale (added )?= inf)",
     "infinite intermediate values: which inf - inf or 0 x inf becomes NaN depends on the order "
     "of the arithmetic"},
    {R"(\(TfIdfVectorizer\) max_skip_count = int64 max)",
     "ONNX Runtime's skip count overflows (max + 1) and finds no n-grams"},
    {R"(test_resize_tf_crop_and_resize(_axes_[23]_[23])? .*mode removed)",
     "nearest at a coordinate of exactly 1.5 in float: the reference maps coordinates in double "
     "(1.50000004, rounds up), ONNX Runtime in float (1.5, prefers floor)"},
    {R"(test_onehot_.* random inputs)",
     "random floats as OneHot's indices and depth: ONNX leaves fractional indices undefined"},
    {R"(\(TopK\) sorted (added )?= 0)", "sorted = 0 leaves the order of the outputs undefined"},
    {R"(test_cast_e8m0_.*random inputs)",
     "negative values cast to float8e8m0 (no sign bit): ONNX does not define them; the reference "
     "takes |x|'s exponent"},
    {R"(test_cast_e8m0_.*saturate = 0)",
     "0 cast to float8e8m0 with saturate 0: ONNX Runtime gives NaN, the reference the smallest "
     "code; ONNX's text does not say"},
    {R"(test_resize_downsample_scales_(linear|cubic)_align_corners |)"
     R"(test_resize_downsample_scales_[A-Za-z0-9_]+ .*mode added "align_corners")",
     "align_corners with downsampling scales: ONNX Runtime fails ONNX's own "
     "test_resize_downsample_scales_linear_align_corners and _cubic_align_corners"},
    {R"(test_(bernoulli|random|multinomial)[a-z_]* )",
     "a random op: the two runtimes' generators differ, seeded or not"},
    {R"(test_cast(like)?_FLOAT_to_STRING(_expanded)? random inputs)",
     "float to string: the reference writes the shortest digits that read back (numpy's str, "
     "ONNX's reference: 2.595344), ONNX Runtime more (2.5953441)"},
    {R"(test_maxunpool_export_with_output_shape random inputs)",
     "ONNX Runtime fails ONNX's own test_maxunpool_export_with_output_shape (its stored inputs)"},
};

const char* known_difference(const std::string& what) {
    for (const KnownDifference& k : kKnownDifferences)
        if (std::regex_search(what, std::regex(k.pattern))) return k.why;
    return nullptr;
}

// `feeds` with every float32 and float64 tensor replaced by values uniform in [-3, 3).
std::map<std::string, Tensor> randomized(const std::map<std::string, Tensor>& feeds,
                                         unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> d(-3.0, 3.0);
    std::map<std::string, Tensor> out = feeds;
    for (auto& [name, t] : out) {
        if (t.dtype() == DataType::kFloat32) {
            std::vector<float> v(t.numel());
            for (float& x : v) x = static_cast<float>(d(rng));
            t = Tensor::from_values(DataType::kFloat32, t.dims(), v);
        } else if (t.dtype() == DataType::kFloat64) {
            std::vector<double> v(t.numel());
            for (double& x : v) x = d(rng);
            t = Tensor::from_values(DataType::kFloat64, t.dims(), v);
        }
    }
    return out;
}

bool has_random_target(const std::map<std::string, Tensor>& feeds) {
    for (const auto& [name, t] : feeds)
        if (t.dtype() == DataType::kFloat32 || t.dtype() == DataType::kFloat64) return true;
    return false;
}

// A difference kKnownDifferences explains is reported as "known", not failed.
test::SweepOutcome judged(const std::string& what, test::SweepOutcome r) {
    if (r.kind != "differ" && r.kind != "attribute") return r;
    if (const char* why = known_difference(what)) return {false, r.what + " (" + why + ")", "known"};
    return r;
}

// A stored-inputs case that differs where the reference reproduces the test's expected outputs:
// ONNX Runtime fails ONNX's own test ("ort-wrong", counted, not failed).
test::SweepOutcome checked_against_expected(const fs::path& dir, const ir::Model& model,
                                            const std::map<std::string, Tensor>& feeds,
                                            test::SweepOutcome r) {
    if (r.kind != "differ") return r;
    const runners::NamedTensors ref = test::infer_ref(model, feeds, false);
    std::vector<std::pair<std::string, const Tensor*>> outputs;
    for (const auto& [name, t] : ref) outputs.emplace_back(name, &t);
    if (!test::outputs_differ(*model.graph, (dir / "test_data_set_0").string(), outputs).empty())
        return r;
    return {false, r.what + " (the reference reproduces the test's expected outputs)", "ort-wrong"};
}

bool tensor_outputs(const ir::Model& model) {
    for (const ir::Value* v : model.graph->outputs())
        if (!v->type().is_tensor()) return false;
    return true;
}

// FNV-1a of `label`: picks the attribute changes a sampled run makes, the same ones every run.
uint32_t label_hash(const std::string& label) {
    uint32_t h = 2166136261u;
    for (const unsigned char c : label) h = (h ^ c) * 16777619u;
    return h;
}

// Every case of the test in `dir` (with `sampled`, one attribute change in kSampleEvery), one
// sweep_case each.
void differential_test(const fs::path& dir, const test::AttributeExamples& examples, bool sampled,
                       FILE* out) {
    const std::unique_ptr<ir::Model> model = test::load_test_model(dir);
    if (!model) return;  // a model this build cannot load is the conformance suite's business
    const auto feeds = test::tensor_feeds(test::first_data_set_feeds(dir, *model));
    if (!feeds || !tensor_outputs(*model)) return;  // sequences: the runners take tensors only
    const std::string test = dir.filename().string() + " ";
    const auto run = [&](const std::string& what, const ir::Model& m,
                         const std::map<std::string, Tensor>& f) {
        test::sweep_case(out, what, [&] { return judged(what, test::differential_case(m, f, out)); });
    };
    test::sweep_case(out, test + "stored inputs", [&] {
        return judged(test + "stored inputs",
                      checked_against_expected(dir, *model, *feeds,
                                               test::differential_case(*model, *feeds, out)));
    });
    if (has_random_target(*feeds))
        for (int s = 1; s <= (sampled ? kRandomSeeds : kAllSeeds); ++s)
            run(test + "random inputs " + std::to_string(s), *model, randomized(*feeds, s));
    test::for_each_attribute_change(
        *model, examples,
        [&](const std::string& label, const test::AttributeTarget& t,
            const test::AttributeVariant* v) {
            if (sampled && label_hash(test + label) % kSampleEvery != 0) return;
            auto changed = onnx::load_model((dir / "model.onnx").string());
            test::apply_attribute_change(*changed, examples, t, v);
            run(test + label, *changed, *feeds);
        });
}

// "[ORT differential] LABEL: N tests, N cases (agree N, ...), N failures" and one gtest failure
// per failure.
void report(const std::string& label, const test::SweepTally& tally) {
    std::string kinds;
    for (const auto& [kind, n] : tally.kinds)
        kinds += (kinds.empty() ? "" : ", ") + kind + " " + std::to_string(n);
    std::printf("[ORT differential] %s: %d tests, %d cases (%s), %zu failures\n", label.c_str(),
                tally.tests, tally.cases, kinds.c_str(), tally.failures.size());
    for (const std::string& f : tally.failures) ADD_FAILURE() << f;
}

void differential_suite(const std::string& root, const char* label) {
    logger().set_threshold(Severity::kCritical);
    const char* filter = std::getenv("PG_ORT_DIFF_FILTER");
    const bool all = std::getenv("PG_ORT_DIFF_ALL") != nullptr;
    const test::AttributeExamples examples =
        test::collect_attribute_examples(test::sweep_test_dirs(root, nullptr));
    std::vector<fs::path> dirs;
    for (const fs::path& dir : test::sweep_test_dirs(root, filter))
        if (all || dir.filename().string().find("_expanded") == std::string::npos)
            dirs.push_back(dir);
    test::SweepTally tally;
    for (size_t first = 0; first < dirs.size(); first += kTestsPerChild) {
        const size_t end = std::min(dirs.size(), first + kTestsPerChild);
        test::sweep_isolated(
            dirs[first].filename().string() + " .. " + dirs[end - 1].filename().string(),
            [&](FILE* out) {
                test::prepare_ort_child();
                for (size_t k = first; k < end; ++k) differential_test(dirs[k], examples, !all, out);
            },
            kCeiling, kSecondsPerTest * static_cast<unsigned>(end - first), filter != nullptr,
            tally, {{"ort", "ort-crashed"}});
    }
    tally.tests = static_cast<int>(dirs.size());
    report(label, tally);
}

class OrtDifferential : public ::testing::Test {
  protected:
    void SetUp() override {
        if (const std::string why = test::onnxrt_missing(); !why.empty()) GTEST_SKIP() << why;
    }
};

TEST_F(OrtDifferential, Onnx122NodeTests) {
    if (const std::string why =
            test::for_node_suites(test::NodeSuites::kOnnx122, differential_suite);
        !why.empty())
        GTEST_SKIP() << why;
}

TEST_F(OrtDifferential, DebianNodeTests) {
    if (const std::string why =
            test::for_node_suites(test::NodeSuites::kDebianNode, differential_suite);
        !why.empty())
        GTEST_SKIP() << why;
}

}  // namespace
}  // namespace pg
