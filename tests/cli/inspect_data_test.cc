// `polygraph inspect data`: Polygraphy's own inputs / RunResults files, our .npz, --all with
// several iterations, and exit statuses for missing and hostile files.
#include <gtest/gtest.h>

#include <filesystem>

#include "base/fs.h"
#include "data/data_files.h"
#include "support/cli_runner.h"
#include "support/test_paths.h"

namespace pg {
namespace {

std::string polygraphy_file(const std::string& name) {
    const std::string p = test::shared_dir() + "/data/polygraphy-files/" + name;
    return test::shared_dir().empty() || !std::filesystem::exists(p) ? "" : p;
}

TEST(InspectData, PolygraphyInputsFile) {
    const std::string path = polygraphy_file("inputs.json");
    if (path.empty()) GTEST_SKIP() << "shared polygraphy-files absent";
    auto r = test::run_polygraph({"inspect", "data", path, "--show-values", "--histogram"});
    ASSERT_EQ(r.status, 0) << r.all();
    EXPECT_NE(
        r.out.find(
            "[I] ==== Data (1 iterations) ====\n    \n    x [dtype=float32, shape=(1, 1, 2, 2)]"
            " | Stats: mean=0.35995, std-dev=0.25784, var=0.066482, median=0.35968, "
            "min=0.00011437 at (0, 0, 1, 0), max=0.72032 at (0, 0, 0, 1), "
            "avg-magnitude=0.35995, p90=0.62933, p95=0.67483, p99=0.71123\n"
            "        ---- Histogram ----\n"
            "        Bin Range          |  Num Elems | Visualization\n"
            "        (0.000114, 0.0721) |          1 | ########################################\n"
            "        (0.0721  , 0.144 ) |          0 | \n"),
        std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("    b [dtype=bool, shape=(2,)] | Stats: mean=0.5, std-dev=0.5, var=0.25, "
                         "median=0.5, min=0 at (1,), max=1 at (0,), avg-magnitude=0.5\n        \n"
                         "        [ True False]"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("    i [dtype=int32, shape=(3,)] | Stats: mean=0.33333"),
              std::string::npos);
}

TEST(InspectData, PolygraphyRunResultsFile) {
    const std::string path = polygraphy_file("outputs.json");
    if (path.empty()) GTEST_SKIP() << "shared polygraphy-files absent";
    auto r = test::run_polygraph({"inspect", "data", path});
    ASSERT_EQ(r.status, 0) << r.all();
    EXPECT_NE(r.out.find("[I] ==== Run Results (1 runners) ====\n    \n"
                         "    ---- onnxrt-runner-N0-07/15/21-10:46:07 (1 iterations) ----\n    \n"
                         "    y [dtype=float32, shape=(1, 1, 2, 2)] | Stats: mean=0.35995"),
              std::string::npos)
        << r.out;
}

TEST(InspectData, AllIterationsOfANpzAndJson) {
    const std::string dir = test::make_temp_dir();
    data::FeedList feeds(2);
    feeds[0].emplace_back("a", Tensor::from_values<float>(DataType::kFloat32, {2}, {1.f, 3.f}));
    feeds[1].emplace_back("a", Tensor::from_values<float>(DataType::kFloat32, {2}, {5.f, 7.f}));
    data::save_inputs(dir + "/two.json", feeds);
    auto r = test::run_polygraph({"inspect", "data", dir + "/two.json", "--all"});
    ASSERT_EQ(r.status, 0) << r.all();
    EXPECT_NE(r.out.find("==== Data (2 iterations) ===="), std::string::npos);
    EXPECT_NE(r.out.find("-- Iteration: 1"), std::string::npos);
    EXPECT_NE(r.out.find("        a [dtype=float32, shape=(2,)] | Stats: mean=6,"),
              std::string::npos)
        << r.out;
    auto first = test::run_polygraph({"inspect", "data", dir + "/two.json"});
    EXPECT_EQ(first.out.find("mean=6,"), std::string::npos);
    data::save_inputs(dir + "/one.npz", {feeds[0]});
    auto npz = test::run_polygraph({"inspect", "data", dir + "/one.npz"});
    ASSERT_EQ(npz.status, 0) << npz.all();
    EXPECT_NE(npz.out.find("    a [dtype=float32, shape=(2,)] | Stats: mean=2,"), std::string::npos)
        << npz.out;
}

TEST(InspectData, MissingAndBrokenFilesExit3) {
    const std::string dir = test::make_temp_dir();
    auto missing = test::run_polygraph({"inspect", "data", dir + "/nope.json"});
    EXPECT_EQ(missing.status, 3) << missing.all();
    EXPECT_NE(missing.all().find("nope.json"), std::string::npos);
    write_file_atomic(dir + "/lies.npy", std::string("\x93NUMPY\x01\x00\xff\x7f{", 11));
    auto lies = test::run_polygraph({"inspect", "data", dir + "/lies.npy"});
    EXPECT_EQ(lies.status, 3) << lies.all();
    write_file_atomic(dir + "/junk.json", "[1, 2");
    EXPECT_EQ(test::run_polygraph({"inspect", "data", dir + "/junk.json"}).status, 3);
}

}  // namespace
}  // namespace pg
