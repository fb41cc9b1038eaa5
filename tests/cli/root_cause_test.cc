// Root-cause labels of `run --emu ... --onnx-outputs mark all`: the divergence shows at Sub, the
// evidence blames Add's overflow (Polygraphy's precision-constraints story).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "base/fs.h"
#include "ir/builder.h"
#include "onnx/model_io.h"
#include "support/cli_runner.h"
#include "support/story_model.h"
#include "support/test_paths.h"

namespace pg {
namespace {

// x -> MatMul(I) -> Add(c) -> Sub(c) -> MatMul(I), float32 [1,1,4,4].
using test::story_model;

std::vector<std::string> story_args(const std::string& model) {
    return {"run",     model,
            "--ref",   "--emu",
            "--fp16",  "--val-range",
            "x:[1,2]", "--check-error-stat",
            "median",  "--atol",
            "1e-3",    "--rtol",
            "1e-3",    "--onnx-outputs",
            "mark",    "all",
            "--json"};
}

TEST(RootCause, OverflowAtAddExplainsTheCancellationAtSub) {
    auto r = test::run_polygraph(story_args(story_model(test::make_temp_dir(), 65504.0f)));
    ASSERT_EQ(r.status, 1) << r.all();
    auto j = nlohmann::json::parse(r.out);
    const auto& cause = j["layerwise"][0]["root_cause"];
    EXPECT_EQ(cause["node"], "Add");
    EXPECT_EQ(cause["label"], "overflow");
    EXPECT_EQ(cause["divergent_node_label"], "cancellation");
    EXPECT_NE(cause["explanation"].get<std::string>().find("65504"), std::string::npos);
    EXPECT_EQ(j["layerwise"][0]["first_divergent"]["node"], "Sub");
}

TEST(RootCause, NoEvidenceMeansRounding) {
    // A constant well inside FP16's range: Sub still cancels, but nothing overflowed.
    auto r = test::run_polygraph(story_args(story_model(test::make_temp_dir(), 4000.0f)));
    auto j = nlohmann::json::parse(r.out);
    const auto& cause = j["layerwise"][0]["root_cause"];
    if (cause.is_null()) GTEST_SKIP() << "no divergence at this tolerance";
    EXPECT_EQ(cause["label"], "rounding/accumulation");
}

}  // namespace
}  // namespace pg

namespace pg {
namespace {

TEST(RootCause, EvidenceIsInSaveResults) {
    const std::string dir = test::make_temp_dir();
    const std::string m = story_model(dir, 65504.0f);
    auto r = test::run_polygraph({"run", m, "--ref", "--emu", "--fp16", "--val-range", "x:[1,2]",
                                  "--check-error-stat", "median", "--atol", "1e-3", "--rtol",
                                  "1e-3", "--save-results", dir + "/res.json"});
    EXPECT_EQ(r.status, 1) << r.all();
    auto j = nlohmann::json::parse(read_file(dir + "/res.json"));
    ASSERT_EQ(j["precision_evidence"].size(), 1u);
    bool add_overflowed = false;
    for (const auto& n : j["precision_evidence"].begin().value())
        if (n["node"] == "Add") add_overflowed = n["outputs"]["overflow"].get<uint64_t>() > 0;
    EXPECT_TRUE(add_overflowed) << j.dump();
}

}  // namespace
}  // namespace pg
