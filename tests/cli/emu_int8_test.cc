// `polygraph run --emu --int8`: fake quantization of Conv / MatMul on models built here, the
// calibration cache written then re-read (identical outputs), percentile calibration clipping an
// outlier activation (saturation evidence), and the flag errors.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "base/fs.h"
#include "ir/builder.h"
#include "onnx/model_io.h"
#include "support/cli_runner.h"
#include "support/test_paths.h"

namespace pg {
namespace {

std::vector<ir::Attribute> one_attr(ir::Attribute a);

std::vector<float> ramp(size_t n, float lo, float hi) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i)
        v[i] = lo + (hi - lo) * static_cast<float>((i * 37) % n) / static_cast<float>(n);
    return v;
}

// x [1,3,8,8] -> Conv(4x3x3x3, bias) -> Relu -> Flatten -> MatMul(256x10) -> y.
std::string conv_matmul_model(const std::string& dir) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{1, 3, 8, 8});
    ir::Value* w = b.constant_f32("w", {4, 3, 3, 3}, ramp(108, -0.5f, 0.5f));
    ir::Value* bias = b.constant_f32("bias", {4}, {0.1f, -0.1f, 0.2f, 0.0f});
    ir::Value* v = b.op("Conv", {x, w, bias},
                        one_attr(ir::Attribute::make_ints("pads", {1, 1, 1, 1})), "conv");
    v = b.op("Relu", {v}, {}, "relu");
    v = b.op("Flatten", {v}, one_attr(ir::Attribute::make_int("axis", 1)), "flatten");
    v = b.op("MatMul", {v, b.constant_f32("fc", {256, 10}, ramp(2560, -0.2f, 0.2f))}, {}, "fc");
    b.output(v, DataType::kFloat32, {1, 10});
    const std::string path = dir + "/conv_matmul.onnx";
    onnx::save_model(*m, path);
    return path;
}

// x [1,16384] * s (s[0] = 1e4, else 1) -> MatMul(16384x4): one huge outlier activation.
std::string outlier_model(const std::string& dir) {
    const int64_t n = 16384;
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{1, n});
    std::vector<float> s(static_cast<size_t>(n), 1.0f);
    s[0] = 1e4f;
    ir::Value* v = b.op("Mul", {x, b.constant_f32("s", {1, n}, s)}, {}, "scale");
    v = b.op("MatMul", {v, b.constant_f32("w", {n, 4}, ramp(static_cast<size_t>(n * 4), -1, 1))},
             {}, "mm");
    b.output(v, DataType::kFloat32, {1, 4});
    const std::string path = dir + "/outlier.onnx";
    onnx::save_model(*m, path);
    return path;
}

std::vector<ir::Attribute> one_attr(ir::Attribute a) {
    std::vector<ir::Attribute> v;
    v.push_back(std::move(a));
    return v;
}

bool has(const test::CliResult& r, const std::string& s) {
    return r.all().find(s) != std::string::npos;
}

TEST(EmuInt8, ConvMatMulWithinTolerance) {
    const std::string dir = test::make_temp_dir();
    const std::string m = conv_matmul_model(dir);
    auto r = test::run_polygraph({"run", m, "--ref", "--emu", "--int8", "--atol", "0.1", "--rtol",
                                  "0.1", "--iterations", "2", "--show-precisions"});
    EXPECT_EQ(r.status, 0) << r.all();
    EXPECT_TRUE(has(r, "conv (Conv): int8")) << r.all();
    EXPECT_TRUE(has(r, "relu (Relu): float32")) << r.all();
    EXPECT_TRUE(has(r, "fc (MatMul): int8")) << r.all();
    EXPECT_TRUE(has(r, "INT8 calibration | ")) << r.all();
    EXPECT_TRUE(has(r, "minmax over 2 input(s): 2 activation scale(s) for 2 INT8 node(s)"))
        << r.all();
    EXPECT_TRUE(has(r, "INT8 evidence | ")) << r.all();
    // Min-max calibration on the same inputs: nothing saturates (x: 192 values, weights 108).
    EXPECT_TRUE(has(r, "conv (Conv) @int8: saturated 0 of 300 input values (0%)")) << r.all();
    EXPECT_TRUE(has(r, "fc (MatMul) @int8: saturated 0 of 2816 input values")) << r.all();
    // Layer-wise: every tensor compared, the INT8 evidence column filled.
    r = test::run_polygraph({"run", m, "--ref", "--emu", "--int8", "--atol", "0.1", "--rtol", "0.1",
                             "--onnx-outputs", "mark", "all"});
    EXPECT_EQ(r.status, 0) << r.all();
    EXPECT_TRUE(has(r, "int8 sat 0 of 300")) << r.all();
    // And it is not exact: quantization changed the outputs.
    r = test::run_polygraph({"run", m, "--ref", "--emu", "--int8", "--atol", "0", "--rtol", "0"});
    EXPECT_EQ(r.status, 1) << r.all();
}

TEST(EmuInt8, CacheWrittenThenReadGivesIdenticalOutputs) {
    const std::string dir = test::make_temp_dir();
    const std::string m = conv_matmul_model(dir);
    const std::string cache = dir + "/calib.cache";
    auto r = test::run_polygraph({"run", m, "--emu", "--int8", "--calibration-cache", cache,
                                  "--save-outputs", dir + "/a.json"});
    ASSERT_EQ(r.status, 0) << r.all();
    EXPECT_TRUE(has(r, "wrote the calibration cache")) << r.all();
    const std::string text = read_file(cache);
    EXPECT_EQ(text.rfind("polygraph-int8-calibration v1 method=minmax\n", 0), 0u) << text;
    EXPECT_NE(text.find("\nx: "), std::string::npos) << text;
    r = test::run_polygraph({"run", m, "--emu", "--int8", "--calibration-cache", cache,
                             "--save-outputs", dir + "/b.json"});
    ASSERT_EQ(r.status, 0) << r.all();
    EXPECT_TRUE(has(r, "read 2 activation scale(s) from")) << r.all();
    r = test::run_polygraph(
        {"run", "--load-outputs", dir + "/a.json", dir + "/b.json", "--atol", "0", "--rtol", "0"});
    EXPECT_EQ(r.status, 0) << r.all();

    // A hand-edited scale changes the outputs; a broken cache is a clear input error.
    write_file_atomic(cache, "polygraph-int8-calibration v1 method=minmax\nx: 0.5\n");
    r = test::run_polygraph({"run", m, "--emu", "--int8", "--calibration-cache", cache});
    EXPECT_EQ(r.status, 3) << r.all();  // the Relu output scale is missing
    EXPECT_TRUE(has(r, "have no entry for")) << r.all();
    write_file_atomic(cache, "garbage\n");
    r = test::run_polygraph({"run", m, "--emu", "--int8", "--calibration-cache", cache});
    EXPECT_EQ(r.status, 3) << r.all();
    EXPECT_TRUE(has(r, "not a polygraph INT8 calibration cache")) << r.all();
}

TEST(EmuInt8, PercentileClipsOutlierWithSaturationEvidence) {
    const std::string dir = test::make_temp_dir();
    const std::string m = outlier_model(dir);
    auto r = test::run_polygraph({"run", m, "--ref", "--emu", "--int8", "--calibration-method",
                                  "percentile", "--val-range", "x:[1,2]"});
    EXPECT_TRUE(has(r, "percentile 99.99 over 1 input(s)")) << r.all();
    // The outlier activation (1e4 * x) is clipped at 127 * scale: exactly one value saturates.
    EXPECT_TRUE(has(r, "mm (MatMul) @int8: saturated 1 of 81920 input values")) << r.all();
    // Min-max keeps the outlier: nothing saturates.
    r = test::run_polygraph({"run", m, "--ref", "--emu", "--int8", "--val-range", "x:[1,2]"});
    EXPECT_TRUE(has(r, "mm (MatMul) @int8: saturated 0 of 81920 input values")) << r.all();
}

TEST(EmuInt8, EntropyCalibratesAndWritesCache) {
    const std::string dir = test::make_temp_dir();
    const std::string m = outlier_model(dir);
    const std::string cache = dir + "/entropy.cache";
    auto r =
        test::run_polygraph({"run", m, "--ref", "--emu", "--int8", "--calibration-method",
                             "entropy", "--calibration-cache", cache, "--val-range", "x:[1,2]"});
    EXPECT_TRUE(has(r, "entropy over 1 input(s)")) << r.all();
    EXPECT_TRUE(has(r, "mm (MatMul) @int8: saturated")) << r.all();
    EXPECT_EQ(read_file(cache).rfind("polygraph-int8-calibration v1 method=entropy\n", 0), 0u);
}

TEST(EmuInt8, FlagErrors) {
    const std::string dir = test::make_temp_dir();
    const std::string m = conv_matmul_model(dir);
    auto r = test::run_polygraph({"run", m, "--emu", "--int8", "--calibration-method", "kl"});
    EXPECT_EQ(r.status, 2) << r.all();
    r = test::run_polygraph({"run", m, "--emu", "--int8", "--calibration-method", "percentile",
                             "--calibration-percentile", "0"});
    EXPECT_EQ(r.status, 2) << r.all();
    r = test::run_polygraph({"run", m, "--emu", "--int8", "--fp16"});
    EXPECT_EQ(r.status, 2) << r.all();
    // --layer-precisions int8 selects single nodes.
    r = test::run_polygraph({"run", m, "--ref", "--emu", "--layer-precisions", "fc:int8",
                             "--show-precisions", "--atol", "0.1", "--rtol", "0.1"});
    EXPECT_EQ(r.status, 0) << r.all();
    EXPECT_TRUE(has(r, "conv (Conv): float32")) << r.all();
    EXPECT_TRUE(has(r, "fc (MatMul): int8")) << r.all();
}

}  // namespace
}  // namespace pg
