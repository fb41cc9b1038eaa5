// `debug precision` on Polygraphy's needs_constraints story: x -> MatMul -> Add(65504) ->
// Sub(65504) -> MatMul loses x in float16 unless Add and Sub run in float32.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "ir/builder.h"
#include "onnx/model_io.h"
#include "support/cli_runner.h"
#include "support/debug_fixture.h"
#include "support/story_model.h"
#include "support/test_paths.h"

namespace pg {
namespace {

using test::story_model;

std::vector<std::string> tolerances() {
    return {"--check-error-stat", "median", "--atol", "1e-3", "--rtol", "1e-3"};
}

std::vector<std::string> debug_args(const std::string& model, const std::string& mode) {
    std::vector<std::string> a = {"debug",   "precision", model,    "--fp16", "--val-range",
                                  "x:[1,2]", "--json",    "--mode", mode};
    for (const auto& t : tolerances()) a.push_back(t);
    return a;
}

TEST(DebugPrecision, MinimizeFindsAddAndSub) {
    const std::string dir = test::make_temp_dir();
    auto r = test::run_polygraph(debug_args(story_model(dir), "minimize"));
    ASSERT_EQ(r.status, 0) << r.all();
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["fp32_nodes"], nlohmann::json::array({"Add", "Sub"}));
    EXPECT_TRUE(j["passed"].get<bool>());
    EXPECT_EQ(j["layer_precisions"], "Add:float32 Sub:float32");
    EXPECT_EQ(j["trtexec"], "--layerPrecisions=Add:fp32,Sub:fp32");
    EXPECT_LE(j["evaluations"].get<int>(), 8);
}

TEST(DebugPrecision, BisectAndLinearFindThePrefixUpToSub) {
    const std::string model = story_model(test::make_temp_dir());
    for (const std::string mode : {"bisect", "linear"}) {
        auto r = test::run_polygraph(debug_args(model, mode));
        ASSERT_EQ(r.status, 0) << mode << r.all();
        auto j = nlohmann::json::parse(r.out);
        EXPECT_EQ(j["fp32_nodes"], nlohmann::json::array({"MatMul_0", "Add", "Sub"})) << mode;
    }
}

TEST(DebugPrecision, FixedModelMatchesTheFloat32Outputs) {
    const std::string dir = test::make_temp_dir();
    const std::string model = story_model(dir);
    ASSERT_EQ(test::save_reference_io(model, dir, {"--val-range", "x:[1,2]"}).status, 0);
    auto d = debug_args(model, "minimize");
    d.push_back("-o");
    d.push_back(dir + "/fixed.onnx");
    auto r = test::run_polygraph(d);
    ASSERT_EQ(r.status, 0) << r.all();
    std::vector<std::string> fixed =
        test::concat(test::golden_run(dir, dir + "/fixed.onnx"), tolerances());
    auto f = test::run_polygraph(fixed);
    EXPECT_EQ(f.status, 0) << f.all();
    // The model converted without the float32 islands fails the same comparison.
    auto c = test::run_polygraph({"convert", model, "--fp-to-fp16", "-o", dir + "/plain.onnx"});
    ASSERT_EQ(c.status, 0) << c.all();
    fixed[1] = dir + "/plain.onnx";
    EXPECT_EQ(test::run_polygraph(fixed).status, 1);
}

}  // namespace
}  // namespace pg
