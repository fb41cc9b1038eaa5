// Geometry kernels: GridSample padding / rounding corner cases, AffineGrid, RoiAlign coordinate
// modes, Col2Im overlap, CenterCropPad and DeformConv, with hand-computed values.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "base/error.h"
#include "base/float16.h"
#include "ir/builder.h"
#include "runtime/session.h"
#include "support/op_runner.h"

namespace pg {
namespace {

using ir::Attribute;
using test::f32;
using test::i64;
using test::run_op;

// Samples a 1x1x1x3 row [10, 20, 30] at normalized x positions (y = 0).
std::vector<float> sample_row(std::vector<float> xs, const std::string& mode,
                              const std::string& padding, int64_t align, int64_t opset = 20) {
    std::vector<float> grid;
    for (float x : xs) grid.insert(grid.end(), {x, 0.0f});
    auto out = run_op(
        "GridSample",
        {f32({1, 1, 1, 3}, {10, 20, 30}), f32({1, 1, static_cast<int64_t>(xs.size()), 2}, grid)},
        ir::attrs(Attribute::make_string("mode", mode),
                  Attribute::make_string("padding_mode", padding),
                  Attribute::make_int("align_corners", align)),
        opset);
    return test::values_f32(out[0]);
}

TEST(OpsGeometry, GridSampleBorderClampsOutsideCorners) {
    auto out =
        run_op("GridSample", {f32({1, 1, 2, 2}, {1, 2, 3, 4}), f32({1, 1, 2, 2}, {-2, -2, 2, 2})},
               ir::attrs(Attribute::make_string("padding_mode", "border")), 16);
    EXPECT_EQ(out[0].dims(), (std::vector<int64_t>{1, 1, 1, 2}));
    EXPECT_EQ(test::values_f32(out[0]), (std::vector<float>{1, 4}));
}

TEST(OpsGeometry, GridSampleReflectionBouncesOffBorders) {
    // align_corners=0: x = ((1.5 + 1) * 3 - 1) / 2 = 3.25 reflects off 2.5 to 1.75.
    EXPECT_FLOAT_EQ(sample_row({1.5f}, "linear", "reflection", 0)[0], 27.5f);
    // align_corners=1: x = 2.5 reflects off 2 to 1.5.
    EXPECT_FLOAT_EQ(sample_row({1.5f}, "linear", "reflection", 1)[0], 25.0f);
    // Far outside: x = -5.5 (align 1) is 5.5 past 0: 2 full ranges (even) then 1.5 -> 1.5.
    EXPECT_FLOAT_EQ(sample_row({-6.5f}, "linear", "reflection", 1)[0], 25.0f);
}

TEST(OpsGeometry, GridSampleZerosPaddingFadesOut) {
    auto v = sample_row({1.0f, 1.5f}, "linear", "zeros", 0);
    EXPECT_FLOAT_EQ(v[0], 15.0f);  // x = 2.5: half of pixel 2, half of zero padding
    EXPECT_FLOAT_EQ(v[1], 0.0f);
}

TEST(OpsGeometry, GridSampleNearestRoundsHalfToEven) {
    auto v = sample_row({-0.5f, 0.5f}, "nearest", "zeros", 1);  // x = 0.5 and 1.5
    EXPECT_EQ(v, (std::vector<float>{10, 30}));
    auto old = sample_row({-0.5f, 0.5f}, "nearest", "zeros", 1, 16);
    EXPECT_EQ(old, v);
}

TEST(OpsGeometry, GridSampleOpsetNamesModes) {
    EXPECT_FLOAT_EQ(sample_row({0.0f}, "bilinear", "zeros", 1, 16)[0], 20.0f);
    EXPECT_THROW(sample_row({0.0f}, "bilinear", "zeros", 1, 20), Error);
    EXPECT_FLOAT_EQ(sample_row({0.0f}, "cubic", "border", 1, 20)[0], 20.0f);
}

TEST(OpsGeometry, GridSampleBadGridIsInvalidInput) {
    try {
        run_op("GridSample", {f32({1, 1, 2, 2}, {1, 2, 3, 4}), f32({1, 1, 1, 3}, {0, 0, 0})}, {},
               20);
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
    }
}

TEST(OpsGeometry, GridSampleFloat16DataKeepsItsTypeWithAnyGridType) {
    auto h = [](float v) { return float16::from_float(v).bits; };
    const Tensor x = Tensor::from_values<uint16_t>(DataType::kFloat16, {1, 1, 1, 2}, {h(1), h(2)});
    const Tensor grid16 = Tensor::from_values<uint16_t>(DataType::kFloat16, {1, 1, 1, 2}, {0, 0});
    for (const Tensor& grid : {grid16, f32({1, 1, 1, 2}, {0, 0})}) {
        auto out = run_op("GridSample", {x, grid}, {}, 20);
        ASSERT_EQ(out[0].dtype(), DataType::kFloat16);
        EXPECT_EQ(half_bits_to_float(out[0].data<uint16_t>()[0]), 1.5f);
    }
    // float32 data sampled through a float16 grid stays float32.
    auto out = run_op("GridSample", {f32({1, 1, 1, 2}, {1, 2}), grid16}, {}, 20);
    EXPECT_EQ(out[0].dtype(), DataType::kFloat32);
    EXPECT_EQ(test::values_f32(out[0])[0], 1.5f);
}

TEST(OpsGeometry, AffineGridIdentity) {
    auto out =
        run_op("AffineGrid", {f32({1, 2, 3}, {1, 0, 0, 0, 1, 0}), i64({4}, {1, 1, 2, 2})}, {}, 20);
    EXPECT_EQ(out[0].dims(), (std::vector<int64_t>{1, 2, 2, 2}));
    EXPECT_EQ(test::values_f32(out[0]),
              (std::vector<float>{-0.5f, -0.5f, 0.5f, -0.5f, -0.5f, 0.5f, 0.5f, 0.5f}));
}

// An axis of one pixel sits at the centre, 0, with or without align_corners (PyTorch's
// affine_grid); theta's translation column then comes through alone.
TEST(OpsGeometry, AffineGridPutsAOnePixelAxisAtZero) {
    for (int64_t align : {0, 1}) {
        SCOPED_TRACE(align);
        auto out = run_op("AffineGrid",
                          {f32({1, 2, 3}, {1, 0, 0.25f, 0, 1, -0.5f}), i64({4}, {1, 1, 1, 1})},
                          ir::attrs(Attribute::make_int("align_corners", align)), 20);
        EXPECT_EQ(out[0].dims(), (std::vector<int64_t>{1, 1, 1, 2}));
        EXPECT_EQ(test::values_f32(out[0]), (std::vector<float>{0.25f, -0.5f}));
    }
    // 3-D, one axis of one pixel among others: its coordinate is 0 in every point.
    auto out =
        run_op("AffineGrid",
               {f32({1, 3, 4}, {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0}), i64({5}, {1, 1, 2, 1, 3})},
               ir::attrs(Attribute::make_int("align_corners", 1)), 20);
    const std::vector<float> v = test::values_f32(out[0]);
    ASSERT_EQ(v.size(), 18u);
    for (size_t p = 0; p < 6; ++p) EXPECT_EQ(v[p * 3 + 1], 0.0f) << p;  // y, the H axis
    EXPECT_EQ(v[0], -1.0f);                                             // x of the first point
    EXPECT_EQ(v[2], -1.0f);                                             // z of the first point
}

TEST(OpsGeometry, RoiAlignCoordinateModeFollowsOpset) {
    auto attrs = [] { return ir::attrs(Attribute::make_int("sampling_ratio", 1)); };
    const Tensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
    const Tensor rois = f32({1, 4}, {0, 0, 1, 1});
    const Tensor batch = i64({1}, {0});
    // half_pixel (opset 16 default): the single sample lands on pixel (0, 0).
    EXPECT_FLOAT_EQ(test::values_f32(run_op("RoiAlign", {x, rois, batch}, attrs(), 16)[0])[0],
                    1.0f);
    // output_half_pixel (opset 10): the sample is at (0.5, 0.5), the mean of all four.
    EXPECT_FLOAT_EQ(test::values_f32(run_op("RoiAlign", {x, rois, batch}, attrs(), 10)[0])[0],
                    2.5f);
    EXPECT_THROW(run_op("RoiAlign", {x, rois, i64({1}, {3})}, attrs(), 16), Error);
}

// A NaN roi (its casts to int64 were undefined) and a huge one with the adaptive sampling ratio
// (a grid of 1e18 samples per bin: a hang) are refused.
TEST(OpsGeometry, RoiAlignRefusesNonFiniteAndHugeRois) {
    const Tensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
    const auto message = [&](std::vector<float> roi) -> std::string {
        try {
            run_op("RoiAlign", {x, f32({1, 4}, roi), i64({1}, {0})}, {}, 16);
        } catch (const Error& e) {
            return e.what();
        }
        return "no error";
    };
    EXPECT_NE(message({std::nanf(""), 0, 1, 1}).find("not finite"), std::string::npos);
    EXPECT_NE(message({0, 0, 1e9f, 1e9f}).find("RoiAlign's samples of one roi would need"),
              std::string::npos);
    EXPECT_EQ(message({0, 0, 1, 1}), "no error");
}

TEST(OpsGeometry, Col2ImSumsOverlappingBlocks) {
    auto out = run_op("Col2Im", {f32({1, 2, 2}, {1, 2, 3, 4}), i64({2}, {1, 3}), i64({2}, {1, 2})},
                      {}, 18);
    EXPECT_EQ(out[0].dims(), (std::vector<int64_t>{1, 1, 1, 3}));
    EXPECT_EQ(test::values_f32(out[0]), (std::vector<float>{1, 5, 4}));
    EXPECT_THROW(
        run_op("Col2Im", {f32({1, 2, 3}, {1, 2, 3, 4, 5, 6}), i64({2}, {1, 3}), i64({2}, {1, 2})},
               {}, 18),
        Error);
}

TEST(OpsGeometry, CenterCropPadCropsAndPadsAroundTheCenter) {
    const Tensor x = i64({5}, {0, 1, 2, 3, 4});
    auto crop = run_op("CenterCropPad", {x, i64({1}, {3})}, {}, 18);
    EXPECT_EQ(std::vector<int64_t>(crop[0].data<int64_t>(), crop[0].data<int64_t>() + 3),
              (std::vector<int64_t>{1, 2, 3}));
    auto pad = run_op("CenterCropPad", {x, i64({1}, {8})}, {}, 18);
    EXPECT_EQ(std::vector<int64_t>(pad[0].data<int64_t>(), pad[0].data<int64_t>() + 8),
              (std::vector<int64_t>{0, 0, 1, 2, 3, 4, 0, 0}));
}

TEST(OpsGeometry, DeformConvZeroOffsetIsConvAndOffsetsInterpolate) {
    const Tensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
    const Tensor w = f32({1, 1, 2, 2}, {1, 1, 1, 1});
    auto plain =
        run_op("DeformConv", {x, w, f32({1, 8, 1, 1}, std::vector<float>(8, 0.0f))}, {}, 19);
    EXPECT_FLOAT_EQ(test::values_f32(plain[0])[0], 10.0f);
    // Every tap moved down by half a pixel: rows 0.5 -> (2, 3), rows 1.5 -> half of row 1.
    auto moved = run_op("DeformConv",
                        {x, w, f32({1, 8, 1, 1}, {0.5f, 0, 0.5f, 0, 0.5f, 0, 0.5f, 0})}, {}, 19);
    EXPECT_FLOAT_EQ(test::values_f32(moved[0])[0], 8.5f);
}

TEST(OpsGeometry, GridSampleFarAndNaNCoordinates) {
    // Coordinates far outside (and NaN) read zeros padding; under reflection a coordinate 1e300
    // away still lands inside the image. Neither goes through an overflowing int64 cast.
    const Tensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const Tensor grid = f32({1, 1, 3, 2}, {1e30f, 0, -3e38f, 0.5f, nan, 0});
    EXPECT_EQ(test::values_f32(run_op("GridSample", {x, grid}, {}, 16)[0]),
              (std::vector<float>{0, 0, 0}));
    const auto reflected = test::values_f32(
        run_op("GridSample", {x, f32({1, 1, 1, 2}, {3e38f, 0})},
               ir::attrs(ir::Attribute::make_string("padding_mode", "reflection")), 16)[0]);
    ASSERT_EQ(reflected.size(), 1u);
    EXPECT_GE(reflected[0], 1.0f);
    EXPECT_LE(reflected[0], 4.0f);
}

TEST(OpsGeometry, DeformConvFarOffsetsAndEmptyImagesReadPadding) {
    // Offsets far outside (or NaN) sample padding: 0 (their floor no longer goes through an
    // overflowing int64 cast).
    const Tensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4}), w = f32({1, 1, 2, 2}, {1, 1, 1, 1});
    const float nan = std::numeric_limits<float>::quiet_NaN();
    auto far = run_op("DeformConv",
                      {x, w, f32({1, 8, 1, 1}, {1e30f, 0, -1e30f, 0, nan, 0, 0, 3e9f})}, {}, 19);
    EXPECT_EQ(test::values_f32(far[0])[0], 0.0f);
    // A 0 x 0 image padded by one: a 2 x 2 output of padding.
    auto empty = run_op("DeformConv",
                        {Tensor::zeros(DataType::kFloat32, {1, 1, 0, 0}), f32({1, 1, 1, 1}, {1}),
                         Tensor::zeros(DataType::kFloat32, {1, 2, 2, 2})},
                        ir::attrs(ir::Attribute::make_ints("pads", {1, 1, 1, 1})), 19);
    EXPECT_EQ(test::values_f32(empty[0]), std::vector<float>(4, 0.0f));
}

}  // namespace
}  // namespace pg

namespace pg {
namespace {

// Runs one node with a multi-threaded session (op_runner runs single-threaded).
Tensor run_threaded(const std::string& op, const std::vector<Tensor>& inputs,
                    std::vector<ir::Attribute> attrs, int64_t opset) {
    auto m = ir::new_model(opset);
    ir::GraphBuilder b(*m->graph);
    std::vector<ir::Value*> ins;
    runtime::Feeds feeds;
    for (size_t i = 0; i < inputs.size(); ++i) {
        const std::string name = "x" + std::to_string(i);
        ins.push_back(b.input(name, inputs[i].dtype(), inputs[i].dims()));
        feeds[name] = ops::RtValue::of(inputs[i]);
    }
    b.output(b.op_multi(op, ins, 1, std::move(attrs), "node")->outputs()[0]);
    runtime::SessionOptions opts;
    opts.threads = 4;
    runtime::Session s(*m, opts);
    return s.run(feeds).begin()->second.tensor();
}

std::vector<float> ramp(size_t n, float scale, float offset) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = std::sin(float(i) * scale) + offset;
    return v;
}

TEST(OpsGeometry, ThreadedGridSampleAndDeformConvMatchSingleThreaded) {
    const Tensor x = f32({2, 3, 16, 16}, ramp(2 * 3 * 16 * 16, 0.37f, 0));
    const Tensor grid = f32({2, 64, 64, 2}, ramp(2 * 64 * 64 * 2, 0.11f, 0.1f));
    auto attrs = [] { return ir::attrs(ir::Attribute::make_string("mode", "cubic")); };
    const Tensor one = run_op("GridSample", {x, grid}, attrs(), 20)[0];
    EXPECT_TRUE(one.same_contents(run_threaded("GridSample", {x, grid}, attrs(), 20)));
    const Tensor w = f32({4, 3, 3, 3}, ramp(4 * 27, 0.5f, 0));
    const Tensor off = f32({2, 18, 14, 14}, ramp(2 * 18 * 14 * 14, 0.23f, 0));
    const Tensor dc = run_op("DeformConv", {x, w, off}, {}, 19)[0];
    EXPECT_TRUE(dc.same_contents(run_threaded("DeformConv", {x, w, off}, {}, 19)));
}

}  // namespace
}  // namespace pg
