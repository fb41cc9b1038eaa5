// The ONNX Runtime runner against the reference runner on small models built in code. Skips
// (with the reason) when libonnxruntime.so.1 cannot be found; `make setup` installs it.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "base/error.h"
#include "base/float16.h"
#include "ir/builder.h"
#include "onnx/model_io.h"
#include "runners/onnxrt_runner.h"
#include "runners/ort_profile.h"
#include "runners/ref_runner.h"
#include "support/test_paths.h"

namespace pg {
namespace {

using runners::NamedTensors;
using runners::OnnxRtOptions;
using runners::OnnxRtRunner;

// Single-threaded: the suite runs beside other work.
OnnxRtOptions test_options() {
    OnnxRtOptions o;
    o.intra_op_threads = 1;
    return o;
}

class OnnxRtRunnerTest : public ::testing::Test {
  protected:
    void SetUp() override {
        if (const std::string why = test::onnxrt_missing(); !why.empty()) GTEST_SKIP() << why;
    }

    // Saves `model` and runs it with both runners on `feeds`; checks names, dtypes and dims
    // agree and values are within `tol` (relative to max(1, |ref|)).
    NamedTensors run_both(const ir::Model& model, const std::map<std::string, Tensor>& feeds,
                          double tol = 1e-6) {
        const std::string path = test::make_temp_dir() + "/model.onnx";
        onnx::save_model(model, path);
        runners::RefRunnerOptions ref_options;
        ref_options.session.threads = 1;
        runners::RefRunner ref(model, ref_options);
        OnnxRtRunner ort(path, test_options());
        const NamedTensors want = ref.infer(feeds);
        const NamedTensors got = ort.infer(feeds);
        expect_close(want, got, tol);
        return got;
    }

    static void expect_close(const NamedTensors& want, const NamedTensors& got, double tol) {
        ASSERT_EQ(want.size(), got.size());
        for (size_t i = 0; i < want.size(); ++i) {
            const Tensor& a = want[i].second;
            const Tensor& b = got[i].second;
            EXPECT_EQ(want[i].first, got[i].first);
            ASSERT_EQ(dtype_name(a.dtype()), dtype_name(b.dtype())) << want[i].first;
            ASSERT_EQ(a.dims(), b.dims()) << want[i].first;
            if (a.is_string()) {
                EXPECT_EQ(a.strings(), b.strings());
                continue;
            }
            for (uint64_t k = 0; k < a.numel(); ++k) {
                const double x = a.element_as_double(k), y = b.element_as_double(k);
                EXPECT_LE(std::abs(x - y), tol * std::max(1.0, std::abs(x)))
                    << want[i].first << "[" << k << "]: ref " << x << ", onnxrt " << y;
            }
        }
    }
};

Tensor f32(std::vector<int64_t> dims, std::vector<float> v) {
    return Tensor::from_values(DataType::kFloat32, std::move(dims), v);
}

Tensor f16(std::vector<int64_t> dims, const std::vector<float>& v) {
    std::vector<uint16_t> bits;
    for (float f : v) bits.push_back(float_to_half_bits(f));
    return Tensor::from_values(DataType::kFloat16, std::move(dims), bits);
}

Tensor i64(std::vector<int64_t> dims, std::vector<int64_t> v) {
    return Tensor::from_values(DataType::kInt64, std::move(dims), v);
}

Tensor boolean(std::vector<int64_t> dims, std::vector<uint8_t> v) {
    return Tensor::from_values(DataType::kBool, std::move(dims), v);
}

std::vector<float> ramp(size_t n, float start, float step) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = start + step * static_cast<float>(i);
    return v;
}

TEST_F(OnnxRtRunnerTest, AddReluMatMulFloat32) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, {2, 3});
    ir::Value* bias = b.constant_f32("bias", {3}, {0.5f, -1.0f, 0.25f});
    ir::Value* w = b.constant_f32("w", {3, 4}, ramp(12, -1.0f, 0.2f));
    ir::Value* h = b.op("Relu", {b.op("Add", {x, bias})});
    ir::Value* y = b.op("MatMul", {h, w});
    b.output(h, DataType::kFloat32, {2, 3});
    b.output(y, DataType::kFloat32, {2, 4});
    const NamedTensors got = run_both(*m, {{"x", f32({2, 3}, ramp(6, -2.0f, 0.7f))}}, 1e-6);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].first, h->name());
    EXPECT_EQ(got[1].first, y->name());
    EXPECT_EQ(got[1].second.dims(), (std::vector<int64_t>{2, 4}));
}

TEST_F(OnnxRtRunnerTest, Float16Add) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat16, {2, 4});
    ir::Value* y = b.input("y", DataType::kFloat16, {2, 4});
    b.output(b.op("Add", {x, y}), DataType::kFloat16, {2, 4});
    const NamedTensors got = run_both(
        *m, {{"x", f16({2, 4}, ramp(8, -3.0f, 0.9f))}, {"y", f16({2, 4}, ramp(8, 0.1f, 0.33f))}},
        1e-3);
    EXPECT_EQ(got[0].second.dtype(), DataType::kFloat16);
}

TEST_F(OnnxRtRunnerTest, Int64ArithmeticIsExact) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kInt64, std::vector<int64_t>{4});
    ir::Value* y = b.input("y", DataType::kInt64, std::vector<int64_t>{4});
    b.output(b.op("Mul", {b.op("Add", {x, y}), y}), DataType::kInt64, std::vector<int64_t>{4});
    const int64_t big = int64_t{1} << 40;
    const NamedTensors got =
        run_both(*m, {{"x", i64({4}, {1, -2, big, 0})}, {"y", i64({4}, {3, 5, 2, -7})}}, 0);
    EXPECT_EQ(got[0].second.data<int64_t>()[2], (big + 2) * 2);
}

TEST_F(OnnxRtRunnerTest, BoolInputsAndOutputs) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{5});
    ir::Value* mask = b.input("mask", DataType::kBool, std::vector<int64_t>{5});
    ir::Value* zero = b.constant_f32("zero", {}, {0.0f});
    ir::Value* positive = b.op("Greater", {x, zero});
    b.output(b.op("And", {positive, mask}), DataType::kBool, std::vector<int64_t>{5});
    b.output(b.op("Not", {mask}), DataType::kBool, std::vector<int64_t>{5});
    const NamedTensors got = run_both(
        *m, {{"x", f32({5}, {-1, 2, 3, 0, 5})}, {"mask", boolean({5}, {1, 1, 0, 1, 0})}}, 0);
    EXPECT_EQ(got[0].second.dtype(), DataType::kBool);
    EXPECT_EQ(got[0].second.data<uint8_t>()[1], 1);
}

TEST_F(OnnxRtRunnerTest, SymbolicDimInMetadataAndRuns) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x =
        b.input("x", DataType::kFloat32,
                ir::Shape{ir::Dim::symbolic("batch"), ir::Dim::unknown(), ir::Dim::known(3)});
    b.output(b.op("Relu", {x}));
    const std::string path = test::make_temp_dir() + "/sym.onnx";
    onnx::save_model(*m, path);
    OnnxRtRunner ort(path, test_options());
    const auto meta = ort.input_metadata();
    ASSERT_EQ(meta.size(), 1u);
    EXPECT_EQ(meta[0].name, "x");
    EXPECT_EQ(meta[0].dtype, DataType::kFloat32);
    ASSERT_TRUE(meta[0].shape.has_value());
    EXPECT_EQ(*meta[0].shape,
              (ir::Shape{ir::Dim::symbolic("batch"), ir::Dim::unknown(), ir::Dim::known(3)}));
    for (int64_t batch : {1, 4}) {
        run_both(*m, {{"x", f32({batch, 2, 3}, ramp(batch * 6, -5.0f, 0.5f))}});
    }
}

TEST_F(OnnxRtRunnerTest, InitializerInputsAreNotInMetadata) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{2});
    b.output(b.op("Add", {x, b.constant_f32("c", {2}, {1, 2})}));
    const std::string path = test::make_temp_dir() + "/init.onnx";
    onnx::save_model(*m, path);
    OnnxRtRunner ort(path, test_options());
    ASSERT_EQ(ort.input_metadata().size(), 1u);
    EXPECT_EQ(ort.input_metadata()[0].name, "x");
}

TEST_F(OnnxRtRunnerTest, EmptyTensorsAndStrings) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, {0, 3});
    ir::Value* s = b.input("s", DataType::kString, std::vector<int64_t>{3});
    b.output(b.op("Relu", {x}), DataType::kFloat32, {0, 3});
    b.output(b.op("Identity", {s}), DataType::kString, std::vector<int64_t>{3});
    const NamedTensors got =
        run_both(*m, {{"x", f32({0, 3}, {})}, {"s", Tensor::from_strings({3}, {"a", "", "xyz"})}});
    EXPECT_EQ(got[0].second.numel(), 0u);
    EXPECT_EQ(got[1].second.strings(), (std::vector<std::string>{"a", "", "xyz"}));
}

TEST_F(OnnxRtRunnerTest, ExternalDataIsResolvedByOnnxRuntime) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{4});
    b.output(b.op("Mul", {x, b.constant_f32("w", {4}, {1, 2, 3, 4})}));
    const std::string path = test::make_temp_dir() + "/ext.onnx";
    onnx::SaveOptions save;
    save.external_data_path = "ext.bin";
    save.external_data_size_threshold = 0;
    onnx::save_model(*m, path, save);
    OnnxRtRunner ort(path, test_options());
    const NamedTensors got = ort.infer({{"x", f32({4}, {1, 1, 1, 1})}});
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].second.data<float>()[3], 4.0f);
}

TEST_F(OnnxRtRunnerTest, OptimizationLevelsGiveSameResults) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, {2, 2});
    ir::Value* w = b.constant_f32("w", {2, 2}, {1, 2, 3, 4});
    b.output(b.op("Relu", {b.op("Add", {b.op("MatMul", {x, w}), w})}));
    const std::string path = test::make_temp_dir() + "/opt.onnx";
    onnx::save_model(*m, path);
    const std::map<std::string, Tensor> feeds = {{"x", f32({2, 2}, {1, -1, 0.5f, 2})}};
    OnnxRtOptions o = test_options();
    o.optimization = runners::OrtOptLevel::kDisable;
    const NamedTensors plain = OnnxRtRunner(path, o).infer(feeds);
    o.optimization = runners::OrtOptLevel::kAll;
    expect_close(plain, OnnxRtRunner(path, o).infer(feeds), 1e-6);
}

// The session config entry goes through AddSessionConfigEntry (index 130 of the table): a wrong
// index would call another function and fail or crash here.
TEST_F(OnnxRtRunnerTest, SpinningOffGivesSameResults) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, {2, 2});
    b.output(b.op("Relu", {b.op("MatMul", {x, b.constant_f32("w", {2, 2}, {1, 2, 3, 4})})}));
    const std::string path = test::make_temp_dir() + "/spin.onnx";
    onnx::save_model(*m, path);
    const std::map<std::string, Tensor> feeds = {{"x", f32({2, 2}, {1, -1, 0.5f, 2})}};
    OnnxRtOptions o = test_options();
    const NamedTensors plain = OnnxRtRunner(path, o).infer(feeds);
    for (bool spin : {false, true}) {
        o.intra_op_spinning = spin;
        o.intra_op_threads = 2;
        expect_close(plain, OnnxRtRunner(path, o).infer(feeds), 1e-6);
    }
}

TEST_F(OnnxRtRunnerTest, InvalidModelIsInvalidInput) {
    const std::string path = test::make_temp_dir() + "/garbage.onnx";
    std::ofstream(path) << "this is not a protobuf \x01\x02\x03";
    try {
        OnnxRtRunner ort(path, test_options());
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput) << e.what();
        EXPECT_NE(std::string(e.what()).find("garbage.onnx"), std::string::npos) << e.what();
    }
}

// A graph ONNX Runtime refuses with a generic failure (two nodes of one name: its FAIL status,
// which used to surface as an internal error of ours, exit 5).
TEST_F(OnnxRtRunnerTest, AGraphItRefusesIsInvalidInput) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{2});
    ir::Value* y = b.op("Relu", {x}, {}, "same");
    b.output(b.op("Neg", {y}, {}, "same"), DataType::kFloat32, {2});
    const std::string path = test::make_temp_dir() + "/twins.onnx";
    onnx::save_model(*m, path);
    try {
        OnnxRtRunner ort(path, test_options());
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput) << e.what();
        EXPECT_NE(std::string(e.what()).find("cannot load the model"), std::string::npos)
            << e.what();
    }
}

// A kernel that fails at run time (MatMul of 1x3 by 4x2 through symbolic dims: ONNX Runtime's
// FAIL status) is invalid input too.
TEST_F(OnnxRtRunnerTest, AKernelFailureIsInvalidInput) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x =
        b.input("x", DataType::kFloat32, ir::Shape{ir::Dim::symbolic("n"), ir::Dim::symbolic("k")});
    ir::Value* y =
        b.input("y", DataType::kFloat32, ir::Shape{ir::Dim::symbolic("j"), ir::Dim::known(2)});
    b.output(b.op("MatMul", {x, y}, {}, "mm"));
    const std::string path = test::make_temp_dir() + "/mm.onnx";
    onnx::save_model(*m, path);
    OnnxRtRunner ort(path, test_options());
    try {
        ort.infer(
            {{"x", f32({1, 3}, ramp(3, 0.0f, 1.0f))}, {"y", f32({4, 2}, ramp(8, 0.0f, 1.0f))}});
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput) << e.what();
    }
}

TEST_F(OnnxRtRunnerTest, WrongOrMissingFeedIsInvalidInput) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    b.output(b.op("Relu", {b.input("x", DataType::kFloat32, {2, 3})}));
    const std::string path = test::make_temp_dir() + "/shape.onnx";
    onnx::save_model(*m, path);
    OnnxRtRunner ort(path, test_options());
    try {
        ort.infer({{"x", f32({3}, {1, 2, 3})}});
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput) << e.what();
    }
    try {
        ort.infer({});
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput) << e.what();
        EXPECT_NE(std::string(e.what()).find("'x'"), std::string::npos) << e.what();
    }
}

TEST_F(OnnxRtRunnerTest, OtherProvidersAreUnsupported) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    b.output(b.op("Relu", {b.input("x", DataType::kFloat32, std::vector<int64_t>{2})}));
    const std::string path = test::make_temp_dir() + "/prov.onnx";
    onnx::save_model(*m, path);
    OnnxRtOptions o = test_options();
    o.providers = {"cpu"};
    EXPECT_NO_THROW(OnnxRtRunner(path, o));
    o.providers = {"CUDAExecutionProvider"};
    try {
        OnnxRtRunner ort(path, o);
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
        EXPECT_NE(std::string(e.what()).find("CUDAExecutionProvider"), std::string::npos);
    }
}

TEST(OnnxRtLibrary, MissingLibraryIsUnsupportedAndNamesThePath) {
    const std::string lib = test::make_temp_dir() + "/no/libonnxruntime.so.1";
    try {
        runners::load_onnxrt_library(lib);
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
        EXPECT_NE(std::string(e.what()).find(lib), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("make setup"), std::string::npos) << e.what();
    }
    OnnxRtOptions o;
    o.library = lib;
    EXPECT_THROW(OnnxRtRunner("unused.onnx", o), Error);
}

TEST(OnnxRtLibrary, NonOrtLibraryIsUnsupported) {
    try {
        runners::load_onnxrt_library("libz.so.1");
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
        EXPECT_NE(std::string(e.what()).find("OrtGetApiBase"), std::string::npos) << e.what();
    }
}

TEST(OnnxRtLibrary, ParsesOptimizationLevels) {
    EXPECT_EQ(runners::parse_ort_opt_level("basic"), runners::OrtOptLevel::kBasic);
    EXPECT_EQ(runners::parse_ort_opt_level("all"), runners::OrtOptLevel::kAll);
    EXPECT_THROW(runners::parse_ort_opt_level("max"), Error);
}

// Profiling goes through EnableProfiling (index 14) and SessionEndProfiling (110): the trace
// names each node of each run with its op type.
TEST_F(OnnxRtRunnerTest, ProfileRecordsEveryNodeOfEveryRun) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, {2, 2});
    b.output(b.op("Mul", {b.op("Neg", {x}), x}));
    const std::string dir = test::make_temp_dir();
    onnx::save_model(*m, dir + "/prof.onnx");
    OnnxRtOptions o = test_options();
    o.optimization = runners::OrtOptLevel::kDisable;
    o.profile_prefix = dir + "/trace";
    OnnxRtRunner ort(dir + "/prof.onnx", o);
    for (int i = 0; i < 3; ++i) ort.infer({{"x", f32({2, 2}, {1, 2, 3, 4})}});
    const std::string path = ort.end_profiling();
    EXPECT_EQ(path.rfind(dir + "/trace", 0), 0u) << path;
    int neg = 0, mul = 0;
    for (const runners::OrtNodeTime& t : runners::read_ort_profile(path)) {
        neg += t.op == "Neg", mul += t.op == "Mul";
        EXPECT_FALSE(t.node.empty());
        EXPECT_GE(t.us, 0.0);
    }
    EXPECT_EQ(neg, 3);
    EXPECT_EQ(mul, 3);
    EXPECT_THROW(OnnxRtRunner(dir + "/prof.onnx", test_options()).end_profiling(), Error);
    EXPECT_THROW(runners::read_ort_profile(dir + "/prof.onnx"), Error);  // not a trace
}

}  // namespace
}  // namespace pg
