// Attribute sweep: every ONNX node test run again with one attribute of one node (of the main
// graph or a subgraph) changed, one change at a time: set to a hostile value of its type
// (negative, zero, huge, the int64 extremes; NaN, the infinities; empty strings and lists, lists
// one shorter or longer),
// given as another attribute type (an int as a float or a list), removed, or (for attributes of
// that op that other tests of the suite set) added. ONNX's rules refuse most of these models, so
// the reference interpreter must answer each with a result or a pg::Error naming the problem;
// kInternal, any other exception, a crash or a hang is a bug (support/sweep_harness.h runs each
// test's cases in a child under a memory ceiling and a time limit). The input sweep does the
// same for the graph's inputs and initializers; the fuzzers reach attributes only by chance.
// PG_ATTRIBUTE_SWEEP_ALL=1 adds the tests of function bodies expanded into their nodes (*_expanded:
// about 80 % of the cases, 2.5 minutes; their ops have tests of their own) and runs each changed
// model that runs once more as --ref-precision fp64 runs it (float32 promoted to float64).
// PG_ATTRIBUTE_SWEEP_FILTER=REGEX limits the tests (and prints each case with its outcome).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>

#include "base/error.h"
#include "base/log.h"
#include "ir/clone.h"
#include "onnx/model_io.h"
#include "support/attribute_changes.h"
#include "support/sweep_harness.h"
#include "support/test_paths.h"

namespace pg {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kCeiling = 256ull << 20;  // bytes a changed model may ask for
constexpr unsigned kSecondsPerTest = 60;     // every change of one test, at most

// The test in `dir` with `target` changed, planned and run on its first data set; when it runs
// and `fp64`, also as --ref-precision fp64 runs it.
test::SweepOutcome run_with_change(const fs::path& dir, const test::AttributeExamples& examples,
                                   const test::AttributeTarget& target,
                                   const test::AttributeVariant* variant, bool fp64) {
    auto model = onnx::load_model((dir / "model.onnx").string());
    const runtime::Feeds feeds = test::first_data_set_feeds(dir, *model);
    test::apply_attribute_change(*model, examples, target, variant);
    const test::SweepOutcome fp32 = test::run_changed_model(*model, feeds, {});
    return fp32.what == "ran" && fp64 ? test::run_as_fp64(*model, feeds) : fp32;
}

// Every change of the test in `dir` (support/attribute_changes.h), one sweep_case each.
void sweep_test(const fs::path& dir, const test::AttributeExamples& examples, bool fp64,
                FILE* out) {
    const std::unique_ptr<ir::Model> model = test::load_test_model(dir);
    if (!model) return;  // a model this build cannot load is the conformance suite's business
    const std::string test = dir.filename().string() + " ";
    test::for_each_attribute_change(
        *model, examples,
        [&](const std::string& label, const test::AttributeTarget& t,
            const test::AttributeVariant* v) {
            test::sweep_case(out, test + label,
                             [&] { return run_with_change(dir, examples, t, v, fp64); });
        });
}

void sweep_suite(const std::string& root, const char* label) {
    logger().set_threshold(Severity::kCritical);
    const char* filter = std::getenv("PG_ATTRIBUTE_SWEEP_FILTER");
    const test::AttributeExamples examples = test::collect_attribute_examples(test::sweep_test_dirs(root, nullptr));
    const bool all = std::getenv("PG_ATTRIBUTE_SWEEP_ALL") != nullptr;
    test::SweepTally tally;
    for (const fs::path& dir : test::sweep_test_dirs(root, filter)) {
        if (!all && dir.filename().string().find("_expanded") != std::string::npos) continue;
        test::sweep_isolated(
            dir.filename().string(), [&](FILE* out) { sweep_test(dir, examples, all, out); },
            kCeiling, kSecondsPerTest, filter != nullptr, tally);
    }
    test::report_sweep("attribute sweep", label, "changed attributes", tally);
}

TEST(AttributeSweep, Onnx122NodeTests) {
    if (const std::string why = test::for_node_suites(test::NodeSuites::kOnnx122, sweep_suite);
        !why.empty())
        GTEST_SKIP() << why;
}

TEST(AttributeSweep, DebianNodeTests) {
    if (const std::string why = test::for_node_suites(test::NodeSuites::kDebianNode, sweep_suite);
        !why.empty())
        GTEST_SKIP() << why;
}

TEST(AttributeSweep, DebianOtherSuites) {
    if (const std::string why = test::for_node_suites(test::NodeSuites::kDebianOther, sweep_suite);
        !why.empty())
        GTEST_SKIP() << why;
}

}  // namespace
}  // namespace pg
