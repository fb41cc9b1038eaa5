// --ref-precision fp64 on the ONNX node tests: every test whose first data set the float32
// reference reproduces is run again as `polygraph run --ref-precision fp64` runs it (the model's
// float32 values, initializers, constants and Cast targets promoted to float64,
// passes/promote_float64.h; float32 feeds widened) and must reproduce the expected outputs too
// (rtol 1e-3, atol 1e-5, as the input sweep compares). What fp64 cannot run is skipped with its
// reason counted: BitCast of float32 (its bits are the result) and sequence outputs, which the
// runner does not return; kFloat32Decides lists the tests whose expected values only float32
// arithmetic gives. Each test runs in a child process (support/sweep_harness.h).
// PG_FP64_FILTER=REGEX limits the tests and prints each outcome.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>

#include "base/error.h"
#include "base/log.h"
#include "onnx/model_io.h"
#include "support/node_test_data.h"
#include "support/sweep_harness.h"
#include "support/test_paths.h"

namespace pg {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kCeiling = 1ull << 30;
constexpr unsigned kSecondsPerTest = 120;

using Outputs = std::vector<std::pair<std::string, const Tensor*>>;

// Tests whose expected outputs float32 arithmetic decides, so that computing in float64 gives
// other values, each with the reason (a difference in any other test fails).
const std::map<std::string, std::string> kFloat32Decides = {
    {"test_dynamicquantizelinear_expanded",
     "the scale's rounding: x / scale lands on the other side of .5 in float64 (25, not 26); the "
     "op itself rounds the same either way"},
};

// run's outputs against the data set's expected ones ("" when they agree).
std::string differs(const ir::Model& model, const std::string& data,
                    const runners::NamedTensors& run) {
    Outputs outs;
    for (const auto& [name, t] : run) outs.emplace_back(name, &t);
    return test::outputs_differ(*model.graph, data, outs);
}

// The first data set of the test in `dir` through the float32 reference, then through fp64:
// "same" (reported as not compared) when float32 does not reproduce it or a feed is not a tensor.
test::SweepOutcome run_fp64(const fs::path& dir) {
    const auto model = onnx::load_model((dir / "model.onnx").string());
    const auto tensors = test::tensor_feeds(test::first_data_set_feeds(dir, *model));
    if (!tensors) return {false, "same"};
    const std::string data = (dir / "test_data_set_0").string();
    try {
        if (!differs(*model, data, test::infer_ref(*model, *tensors, false)).empty())
            return {false, "same"};
    } catch (const Error&) {
        return {false, "same"};  // the conformance suite's business (its manifest says why)
    }
    try {
        if (const std::string d = differs(*model, data, test::infer_ref(*model, *tensors, true));
            !d.empty()) {
            const auto known = kFloat32Decides.find(dir.filename().string());
            if (known != kFloat32Decides.end())
                return {false, "differs as known: " + known->second};
            return {true, "fp64 differs: " + d};
        }
    } catch (const Error& e) {
        const bool skip = e.kind() == ErrorKind::kUnsupported;
        return {!skip, std::string(error_kind_name(e.kind())) + ": " + e.what()};
    } catch (const std::exception& e) {
        return {true, std::string("exception: ") + e.what()};
    }
    return {false, "ran"};
}

void fp64_suite(const std::string& root, const char* label) {
    logger().set_threshold(Severity::kCritical);
    const char* filter = std::getenv("PG_FP64_FILTER");
    test::SweepTally tally;
    for (const fs::path& dir : test::sweep_test_dirs(root, filter)) {
        const std::string name = dir.filename().string();
        test::sweep_isolated(
            name, [&](FILE* out) { test::sweep_case(out, name, [&] { return run_fp64(dir); }); },
            kCeiling, kSecondsPerTest, filter != nullptr, tally);
    }
    test::report_sweep("fp64", label, "tests compared", tally);
}

TEST(Fp64Conformance, Onnx122NodeTests) {
    if (const std::string why = test::for_node_suites(test::NodeSuites::kOnnx122, fp64_suite);
        !why.empty())
        GTEST_SKIP() << why;
}

TEST(Fp64Conformance, DebianNodeTests) {
    if (const std::string why = test::for_node_suites(test::NodeSuites::kDebianNode, fp64_suite);
        !why.empty())
        GTEST_SKIP() << why;
}

TEST(Fp64Conformance, DebianOtherSuites) {
    if (const std::string why = test::for_node_suites(test::NodeSuites::kDebianOther, fp64_suite);
        !why.empty())
        GTEST_SKIP() << why;
}

}  // namespace
}  // namespace pg
