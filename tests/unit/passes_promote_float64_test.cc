// promote_to_float64 and the reference runner's fp64 mode (--ref-precision fp64).
#include <gtest/gtest.h>

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
    for (int i = 0; i < 3; ++i) EXPECT_EQ(t.data<double>()[i], double(xs[i]) * double(ws[i]) + double(ws[i]));
}

}  // namespace
}  // namespace pg
