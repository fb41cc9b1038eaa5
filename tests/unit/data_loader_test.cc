// data/numpy_random + data/data_loader: numpy's legacy stream (values numpy printed) and
// Polygraphy's default data loader, bit for bit against inputs.json written by Polygraphy 0.49.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "base/error.h"
#include "base/fs.h"
#include "data/data_loader.h"
#include "data/numpy_random.h"
#include "data/polygraphy_json.h"
#include "support/test_paths.h"

namespace pg {
namespace {

std::string polygraphy_file(const std::string& name) {
    const std::string p = test::shared_dir() + "/data/polygraphy-files/" + name;
    return test::shared_dir().empty() || !std::filesystem::exists(p) ? "" : p;
}

runners::TensorMeta meta(const std::string& name, DataType dt, std::vector<ir::Dim> dims) {
    return runners::TensorMeta{name, dt, ir::Shape(dims.begin(), dims.end())};
}

std::vector<runners::TensorMeta> spec_inputs() {
    using ir::Dim;
    return {
        meta("x", DataType::kFloat32, {Dim::known(1), Dim::known(1), Dim::known(2), Dim::known(2)}),
        meta("i", DataType::kInt32, {Dim::known(3)}), meta("b", DataType::kBool, {Dim::known(2)})};
}

TEST(NumpyRandom, RandomSampleMatchesNumpy) {
    data::NumpyRandomState rs0(0);  // np.random.seed(0); np.random.rand(3)
    EXPECT_DOUBLE_EQ(rs0.random_sample(), 0.5488135039273248);
    EXPECT_DOUBLE_EQ(rs0.random_sample(), 0.7151893663724195);
    EXPECT_DOUBLE_EQ(rs0.random_sample(), 0.6027633760716439);
    data::NumpyRandomState rs1(1);
    EXPECT_DOUBLE_EQ(rs1.random_sample(), 0.417022004702574);
}

TEST(NumpyRandom, RandintMatchesNumpy) {
    data::NumpyRandomState rs(0);  // np.random.seed(0); np.random.randint(0, 10, 5)
    std::vector<uint64_t> got;
    for (int k = 0; k < 5; ++k) got.push_back(rs.bounded64(9));
    EXPECT_EQ(got, (std::vector<uint64_t>{5, 0, 3, 3, 7}));
}

TEST(DataLoader, SeedOneMatchesSpecExample) {
    data::DataLoader dl(spec_inputs(), {});
    auto feed = dl.get(0);
    ASSERT_EQ(feed.size(), 3u);
    const float* x = feed[0].second.data<float>();
    EXPECT_FLOAT_EQ(x[0], 0.41702199f);
    EXPECT_FLOAT_EQ(x[1], 0.72032452f);
    EXPECT_FLOAT_EQ(x[2], 0.000114374816f);
    EXPECT_FLOAT_EQ(x[3], 0.30233258f);
    const int32_t* i = feed[1].second.data<int32_t>();
    EXPECT_EQ(std::vector<int32_t>(i, i + 3), (std::vector<int32_t>{1, 0, 0}));
    EXPECT_EQ(feed[2].second.bytes()[0], 1);
    EXPECT_EQ(feed[2].second.bytes()[1], 0);
}

TEST(DataLoader, SeedOneIsBitExactWithPolygraphyInputsJson) {
    const std::string path = polygraphy_file("inputs.json");
    if (path.empty()) GTEST_SKIP() << "shared polygraphy-files absent";
    auto theirs = data::load_polygraphy_json(path).inputs;
    data::DataLoader dl(spec_inputs(), {});
    data::FeedList ours = {dl.get(0)};
    ASSERT_EQ(theirs.size(), 1u);
    for (size_t k = 0; k < 3; ++k) {
        EXPECT_EQ(ours[0][k].first, theirs[0][k].first);
        EXPECT_TRUE(ours[0][k].second.same_contents(theirs[0][k].second)) << ours[0][k].first;
    }
    EXPECT_EQ(data::inputs_to_json(ours), read_file(path));
}

TEST(DataLoader, IterationsUseSeedPlusIndex) {
    data::DataLoaderOptions o;
    o.iterations = 2;
    data::DataLoader dl(spec_inputs(), o);
    data::DataLoaderOptions o2;
    o2.seed = 2;
    data::DataLoader second(spec_inputs(), o2);
    auto a = dl.get(1), b = second.get(0);
    for (size_t k = 0; k < a.size(); ++k) EXPECT_TRUE(a[k].second.same_contents(b[k].second));
    EXPECT_FALSE(dl.get(0)[0].second.same_contents(a[0].second));
}

TEST(DataLoader, DynamicDimsBecomeOneUnlessGiven) {
    using ir::Dim;
    std::vector<runners::TensorMeta> in = {
        meta("image", DataType::kFloat32, {Dim::symbolic("N"), Dim::known(3), Dim::unknown()})};
    data::DataLoader dflt(in, {});
    EXPECT_EQ(dflt.plan()[0].shape, (std::vector<int64_t>{1, 3, 1}));
    data::DataLoaderOptions o;
    o.input_shapes = {{"im*", ir::make_shape({4, 3, 5})}};
    data::DataLoader given(in, o);
    EXPECT_EQ(given.plan()[0].shape, (std::vector<int64_t>{4, 3, 5}));
    o.input_shapes = {{"image", ir::make_shape({4, 2, 5})}};  // conflicts with the static 3
    EXPECT_EQ(data::DataLoader(in, o).plan()[0].shape, (std::vector<int64_t>{1, 3, 1}));
}

TEST(DataLoader, ValueRangesPerInputAndDefault) {
    using ir::Dim;
    std::vector<runners::TensorMeta> in = {meta("a", DataType::kInt64, {Dim::known(64)}),
                                           meta("f", DataType::kFloat16, {Dim::known(64)}),
                                           meta("u", DataType::kUInt8, {Dim::known(64)})};
    data::DataLoaderOptions o;
    o.val_range = {{"", {-5, 5}}, {"a", {10, 12}}, {"u", {0, 200}}};
    auto feed = data::DataLoader(in, o).get(0);
    for (uint64_t k = 0; k < 64; ++k) {
        const double a = feed[0].second.element_as_double(k),
                     f = feed[1].second.element_as_double(k);
        EXPECT_GE(a, 10);
        EXPECT_LE(a, 12);
        EXPECT_GE(f, -5);
        EXPECT_LE(f, 5);
    }
    o.val_range.pop_back();
    EXPECT_THROW(data::DataLoader(in, o).get(0), Error);  // uint8 cannot hold -5
}

TEST(DataLoader, ShapeTensorValuesComeFromInputShapes) {
    std::vector<runners::TensorMeta> in = {meta("shape", DataType::kInt64, {ir::Dim::known(3)})};
    data::DataLoaderOptions o;
    o.input_shapes = {{"shape", ir::make_shape({2, 7, 9})}};
    auto feed = data::DataLoader(in, o).get(0);
    const int64_t* v = feed[0].second.data<int64_t>();
    EXPECT_EQ(std::vector<int64_t>(v, v + 3), (std::vector<int64_t>{2, 7, 9}));
}

TEST(DataLoader, BadSeedIsAUsageError) {
    data::DataLoaderOptions o;
    o.seed = -1;
    try {
        data::DataLoader dl(spec_inputs(), o);
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    }
}

}  // namespace
}  // namespace pg
