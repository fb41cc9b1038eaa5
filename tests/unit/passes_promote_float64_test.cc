// promote_to_float64 and the reference runner's fp64 mode (--ref-precision fp64).
#include <gtest/gtest.h>

#include "base/error.h"
#include "ir/builder.h"
#include "passes/promote_float64.h"
#include "runners/ref_runner.h"

namespace pg {
namespace {

std::unique_ptr<ir::Model> mul_add_model(bool with_cast = true) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{3});
    ir::Value* w = b.constant_f32("w", {3}, {0.1f, 1e-8f, 3.0f});
    ir::Value* y = b.op("Mul", {x, w});
    ir::Value* z = b.op("Add", {y, w});
    if (with_cast) z = b.op("Cast", {z}, ir::attrs(ir::Attribute::make_int("to", 1)));
    b.output(z, DataType::kFloat32, {3});
    return m;
}

TEST(PromoteFloat64, RewritesTypesInitializersAndCasts) {
    auto m = mul_add_model();
    auto r = passes::promote_to_float64(*m);
    EXPECT_EQ(r.initializers, 1u);
    EXPECT_EQ(r.attributes, 1u);  // Cast's 'to'
    EXPECT_EQ(m->graph->inputs()[0]->type().elem_type, DataType::kFloat64);
    EXPECT_EQ(m->graph->outputs()[0]->type().elem_type, DataType::kFloat64);
    EXPECT_EQ(m->graph->initializers()[0]->initializer()->tensor.dtype(), DataType::kFloat64);
    EXPECT_EQ(m->graph->nodes()[2]->find_attribute("to")->i, 11);
}

TEST(PromoteFloat64, RefRunnerComputesInDouble) {
    auto m = mul_add_model(false);
    runners::RefRunnerOptions opts;
    opts.fp64 = true;
    opts.session.threads = 1;
    runners::RefRunner runner(*m, opts);
    EXPECT_EQ(runner.input_metadata()[0].dtype, DataType::kFloat32);
    const std::vector<float> xs{0.3f, 7.0f, 1.0f / 3.0f};
    auto out = runner.infer({{"x", Tensor::from_values(DataType::kFloat32, {3}, xs)}});
    const Tensor& t = out.at(0).second;
    ASSERT_EQ(t.dtype(), DataType::kFloat64);
    const std::vector<float> ws{0.1f, 1e-8f, 3.0f};
    for (int i = 0; i < 3; ++i)
        EXPECT_EQ(t.data<double>()[i], double(xs[i]) * double(ws[i]) + double(ws[i]));
}

// Outputs that are float32 only by an absent attribute's default: ConstantOfShape's value and
// RandomUniform's dtype. An Add of either with a promoted value failed ("inputs have different
// types") in ONNX's expanded causal attention.
TEST(PromoteFloat64, DefaultFloat32OutputsArePromotedToo) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{2});
    ir::Value* shape =
        b.constant("shape", Tensor::from_values<int64_t>(DataType::kInt64, {1}, {2}));
    ir::Value* zeros = b.op("ConstantOfShape", {shape}, {}, "zeros");
    ir::Value* noise = b.op(
        "RandomUniform", {},
        ir::attrs(ir::Attribute::make_ints("shape", {2}), ir::Attribute::make_float("seed", 1.0f)),
        "noise");
    ir::Value* sum = b.op("Add", {b.op("Add", {x, zeros}, {}, "a"), noise}, {}, "b");
    b.output(sum, DataType::kFloat32, {2});
    auto r = passes::promote_to_float64(*m);
    EXPECT_EQ(r.attributes, 2u);
    runners::RefRunnerOptions opts;
    opts.fp64 = true;
    opts.session.threads = 1;
    runners::RefRunner runner(*m, opts);
    const auto out =
        runner.infer({{"x", Tensor::from_values<float>(DataType::kFloat32, {2}, {1.0f, 2.0f})}});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].second.dtype(), DataType::kFloat64);
}

// Inputs that were float64 already are announced as float64 (they were announced as float32,
// so generated data did not fit ONNX Runtime beside the fp64 reference).
TEST(PromoteFloat64, RefRunnerAnnouncesTheOriginalInputTypes) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{2});
    ir::Value* d = b.input("d", DataType::kFloat64, std::vector<int64_t>{2});
    ir::Value* xd = b.op("Cast", {x}, ir::attrs(ir::Attribute::make_int("to", 11)), "cast");
    b.output(b.op("Add", {xd, d}, {}, "add"), DataType::kFloat64, {2});
    runners::RefRunnerOptions opts;
    opts.fp64 = true;
    runners::RefRunner runner(*m, opts);
    const auto meta = runner.input_metadata();
    ASSERT_EQ(meta.size(), 2u);
    EXPECT_EQ(meta[0].dtype, DataType::kFloat32);
    EXPECT_EQ(meta[1].dtype, DataType::kFloat64);
}

// A BitCast of float32 is refused (promoted, it gave half as many int32 elements).
TEST(PromoteFloat64, BitCastOfFloat32IsUnsupported) {
    auto m = ir::new_model(26);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{2});
    b.output(b.op("BitCast", {x}, ir::attrs(ir::Attribute::make_int("to", 6)), "bits"),
             DataType::kInt32, {2});
    try {
        passes::promote_to_float64(*m);
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
        EXPECT_NE(std::string(e.what()).find("BitCast node 'bits'"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace pg
