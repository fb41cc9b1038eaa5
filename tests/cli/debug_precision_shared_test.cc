// issue 6's Done-when on Polygraphy's own needs_constraints.onnx (from the shared data folder;
// skipped when absent): the in-process and the external search both report exactly {Add, Sub},
// and -o fixed.onnx matches the float32 golden outputs on --ref and on ONNX Runtime.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "runners/onnxrt_runner.h"
#include "support/cli_runner.h"
#include "support/debug_fixture.h"
#include "support/test_paths.h"

namespace pg {
namespace {

std::string needs_constraints() {
    return test::shared_file(
        "data/polygraphy-models/examples/run/08_adding_precision_constraints/"
        "needs_constraints.onnx");
}

std::vector<std::string> with_tolerances(std::vector<std::string> a) {
    for (const char* t : {"--check-error-stat", "median", "--atol", "1e-3", "--rtol", "1e-3"})
        a.push_back(t);
    return a;
}

TEST(DebugPrecisionShared, NeedsConstraintsInProcessExternalAndFixed) {
    const std::string model = needs_constraints();
    if (model.empty()) GTEST_SKIP() << "needs_constraints.onnx not in the shared data folder";
    const std::string dir = test::make_temp_dir();
    const std::string in = dir + "/in.json";
    ASSERT_EQ(test::save_reference_io(model, dir, {"--val-range", "x:[1,2]"}).status, 0);
    const auto add_sub = nlohmann::json::array({"Add", "Sub"});
    auto r =
        test::run_polygraph(with_tolerances({"debug", "precision", model, "--fp16", "--val-range",
                                             "x:[1,2]", "--json", "-o", dir + "/fixed.onnx"}));
    ASSERT_EQ(r.status, 0) << r.all();
    EXPECT_EQ(nlohmann::json::parse(r.out)["fp32_nodes"], add_sub);

    auto e = test::run_polygraph(
        test::concat({"debug", "precision", model, "--fp16", "--load-inputs", in, "--json"},
                     test::polygraph_check(with_tolerances(test::golden_run(dir)))));
    ASSERT_EQ(e.status, 0) << e.all();
    EXPECT_EQ(nlohmann::json::parse(e.out)["fp32_nodes"], add_sub);

    std::vector<std::string> runners = {"--ref"};
    try {
        runners::load_onnxrt_library();
        runners.push_back("--onnxrt");
    } catch (const Error&) {
        // ONNX Runtime missing: the --ref comparison still runs.
    }
    for (const auto& runner : runners) {
        auto f = test::run_polygraph(
            with_tolerances(test::golden_run(dir, dir + "/fixed.onnx", runner)));
        EXPECT_EQ(f.status, 0) << runner << f.all();
    }
}

}  // namespace
}  // namespace pg
