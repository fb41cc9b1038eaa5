// `debug precision` on the zoo's planted-overflow model (210 nodes, two planted FP16 overflow
// points, tools/zoo/zoo.h): minimize must return exactly the four planted nodes in few
// evaluations, bisect / linear a passing span that contains them.
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "support/cli_runner.h"
#include "support/debug_fixture.h"
#include "support/test_paths.h"
#include "zoo/zoo.h"

namespace pg {
namespace {

using test::planted_model;

std::vector<std::string> debug_args(const std::string& model, const std::string& mode,
                                    const std::string& dir = "forward") {
    return {"debug", "precision", model,    "--fp16", "--atol",      "1e-2", "--rtol",
            "1e-2",  "--json",    "--mode", mode,     "--direction", dir};
}

nlohmann::json planted_names() {
    return nlohmann::json(zoo::planted_node_names());
}

TEST(DebugPrecisionPlanted, MinimizeReturnsExactlyThePlantedNodes) {
    const std::string model = planted_model(test::make_temp_dir());
    auto r = test::run_polygraph(debug_args(model, "minimize"));
    ASSERT_EQ(r.status, 0) << r.all();
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["fp32_nodes"], planted_names());
    EXPECT_TRUE(j["passed"].get<bool>());
    EXPECT_LT(j["evaluations"].get<int>(), 40);
    // Progress after every evaluation (stderr), ending with both bounds at the answer's size,
    // and Polygraphy's summary line.
    const std::string n = std::to_string(j["evaluations"].get<int>());
    EXPECT_NE(r.err.find("Progress | iteration 1, 1 evaluated"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("Progress | iteration " + n + ", " + n + " evaluated (" + n +
                         " checked, 0 from replay), interval [4, 4] (minimize)"),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("Finished " + n + " iteration(s) | Passed: "), std::string::npos) << r.err;
}

TEST(DebugPrecisionPlanted, BisectAndLinearGiveAPassingSpanWithThePlantedNodes) {
    const std::string model = planted_model(test::make_temp_dir());
    for (const std::string mode : {"bisect", "linear"}) {
        for (const std::string dir : {"forward", "reverse"}) {
            auto r = test::run_polygraph(debug_args(model, mode, dir));
            ASSERT_EQ(r.status, 0) << mode << " " << dir << r.all();
            auto j = nlohmann::json::parse(r.out);
            ASSERT_TRUE(j["passed"].get<bool>()) << mode << " " << dir;
            const auto nodes = j["fp32_nodes"].get<std::vector<std::string>>();
            for (const auto& p : zoo::planted_node_names())
                EXPECT_NE(std::find(nodes.begin(), nodes.end(), p), nodes.end())
                    << mode << " " << dir << ": " << p;
        }
    }
}

}  // namespace
}  // namespace pg
