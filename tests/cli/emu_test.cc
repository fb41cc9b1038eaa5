// `polygraph run --emu`: the precision-constraints tutorial (needs_constraints.onnx, when
// ../shared is present) and the same story on a model built here: x -> MatMul(I) -> Add(65504)
// -> Sub(65504) -> MatMul(I) -> Identity. In float16, x + 65504 rounds back to 65504, so Sub
// returns 0: the comparison fails at Sub, and the emulator's evidence points at Add (every
// output beyond float16's largest value before rounding).
#include <gtest/gtest.h>

#include "ir/builder.h"
#include "onnx/model_io.h"
#include "support/cli_runner.h"
#include "support/test_paths.h"

namespace pg {
namespace {

const std::vector<std::string> kCompare = {
    "--val-range", "x:[1,2]", "--check-error-stat", "median", "--atol", "1e-3", "--rtol", "1e-3"};

std::string tutorial_model() {
    return test::shared_file(
        "data/polygraphy-models/examples/run/08_adding_precision_constraints/"
        "needs_constraints.onnx");
}

std::string built_model() {
    const int64_t n = 16;
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{n, n});
    std::vector<float> eye(static_cast<size_t>(n * n), 0.0f);
    for (int64_t i = 0; i < n; ++i) eye[static_cast<size_t>(i * n + i)] = 1.0f;
    ir::Value* id = b.constant_f32("I", {n, n}, eye);
    ir::Value* big = b.constant_f32("fp16_max", {1}, {65504.0f});
    ir::Value* v = b.op("MatMul", {x, id}, {}, "MatMul_0");
    v = b.op("Add", {v, big}, {}, "Add");
    v = b.op("Sub", {v, big}, {}, "Sub");
    v = b.op("MatMul", {v, id}, {}, "MatMul_1");
    v = b.op("Identity", {v}, {}, "out_id");
    b.output(v, DataType::kFloat32, {n, n});
    const std::string path = test::make_temp_dir() + "/needs_constraints_built.onnx";
    onnx::save_model(*m, path);
    return path;
}

test::CliResult run(const std::string& model, std::vector<std::string> extra) {
    std::vector<std::string> args = {"run", model, "--ref", "--emu"};
    args.insert(args.end(), kCompare.begin(), kCompare.end());
    args.insert(args.end(), extra.begin(), extra.end());
    return test::run_polygraph(args);
}

bool has(const test::CliResult& r, const std::string& s) {
    return r.all().find(s) != std::string::npos;
}

// The tutorial's story on `model` with `elements` float elements per tensor.
void check_story(const std::string& model, int elements) {
    const std::string add_evidence = "Add (Add) @float16: overflow 0 in / " +
                                     std::to_string(elements) +
                                     " out, underflow to zero 0 in / 0 "
                                     "out, NaN/Inf produced 0, max |x| 65504 in / ";
    auto r = run(model, {"--fp16"});
    EXPECT_EQ(r.status, 1) << r.all();
    EXPECT_TRUE(has(r, "FAILED | Mismatched outputs")) << r.all();
    EXPECT_TRUE(has(r, add_evidence)) << r.all();
    EXPECT_TRUE(has(r, "max rounding error 2") || has(r, "max rounding error 1.9")) << r.all();
    // Without a layer-wise comparison the evidence alone names Add.
    EXPECT_TRUE(has(r,
                    "First node divergent by evidence: 'Add' (Add) | divergent by evidence: "
                    "overflow, " +
                        std::to_string(elements) +
                        " exact value(s) beyond float16's largest finite value 65504"))
        << r.all();

    r = run(model, {"--fp16", "--onnx-outputs", "mark", "all"});
    EXPECT_EQ(r.status, 1) << r.all();
    // Add's outputs round 65505..65506 down to 65504: within rtol, but their exact values
    // exceed float16's largest finite value, so the evidence makes Add the first divergent node.
    EXPECT_TRUE(has(r, "First divergent node: 'Add' (Add)")) << r.all();
    EXPECT_TRUE(has(r, "| divergent by evidence: overflow, " + std::to_string(elements) +
                           " exact value(s) beyond float16's largest finite value 65504"))
        << r.all();
    EXPECT_TRUE(has(r, "FAILED (root cause: overflow; divergent by evidence: overflow")) << r.all();
    EXPECT_TRUE(has(r, "FAILED (root cause: cancellation) [emu: float16 ovf 0")) << r.all();
    EXPECT_TRUE(has(r, "label: overflow | 'Add' (Add) is itself the cause")) << r.all();
    EXPECT_TRUE(has(r, "[emu: float16 ovf " + std::to_string(elements) + " unf 0 nan/inf 0"))
        << r.all();
    EXPECT_TRUE(has(r, add_evidence)) << r.all();

    r = run(model, {"--fp16", "--layer-precisions", "Add:float32", "Sub:float32",
                    "--precision-constraints", "obey", "--show-precisions"});
    EXPECT_EQ(r.status, 0) << r.all();
    EXPECT_TRUE(has(r, "PASSED | All outputs matched")) << r.all();
    EXPECT_TRUE(has(r, "Add (Add): float32")) << r.all();
    EXPECT_TRUE(has(r, "MatMul_0 (MatMul): float16")) << r.all();
    EXPECT_TRUE(has(r, "no overflow, underflow to zero or NaN/Inf at any node")) << r.all();

    r = run(model, {"--fp16", "--layer-precisions", "Add:float16", "Sub:float32"});
    EXPECT_EQ(r.status, 1) << r.all();
    EXPECT_TRUE(has(r, add_evidence)) << r.all();

    // Layer-wise with Sub in float32: Add is still first (evidence), Sub (float32, no evidence)
    // shows the lost x through cancellation.
    r = run(model, {"--fp16", "--layer-precisions", "Add:float16", "Sub:float32", "--onnx-outputs",
                    "mark", "all"});
    EXPECT_EQ(r.status, 1) << r.all();
    EXPECT_TRUE(has(r, "First divergent node: 'Add' (Add)")) << r.all();
    EXPECT_TRUE(has(r, "FAILED (root cause: cancellation)")) << r.all();
}

TEST(Emu, TutorialNeedsConstraints) {
    const std::string m = tutorial_model();
    if (m.empty()) GTEST_SKIP() << "needs_constraints.onnx not found under ../shared";
    check_story(m, 256 * 256);
}

// The acceptance commands, verbatim, on the tutorial model.
TEST(Emu, DoneWhenCommandsOnTutorialModel) {
    const std::string m = tutorial_model();
    if (m.empty()) GTEST_SKIP() << "needs_constraints.onnx not found under ../shared";
    auto r = run(m, {"--fp16"});
    EXPECT_EQ(r.status, 1) << r.all();
    EXPECT_TRUE(has(r,
                    "First node divergent by evidence: 'Add' (Add) | divergent by evidence: "
                    "overflow, 65536 exact value(s) beyond float16's largest finite value "
                    "65504 (max |x| 65506)"))
        << r.all();
    r = run(m, {"--fp16", "--onnx-outputs", "mark", "all"});
    EXPECT_EQ(r.status, 1) << r.all();
    EXPECT_TRUE(has(r, "First divergent node: 'Add' (Add)")) << r.all();
    EXPECT_TRUE(has(r, "its exact values exceed float16's largest finite value 65504")) << r.all();
    r = run(m, {"--fp16", "--layer-precisions", "Add:float32", "Sub:float32",
                "--precision-constraints", "obey"});
    EXPECT_EQ(r.status, 0) << r.all();
    r = run(m, {"--fp16", "--layer-precisions", "Add:float16", "Sub:float32"});
    EXPECT_EQ(r.status, 1) << r.all();
}

TEST(Emu, BuiltNeedsConstraints) {
    check_story(built_model(), 16 * 16);
}

TEST(Emu, ObeyRefusesOpsWithoutReducedForm) {
    const std::string m = built_model();
    auto r = run(m, {"--layer-precisions", "out_id:fp16", "--precision-constraints", "obey"});
    EXPECT_EQ(r.status, 4) << r.all();
    EXPECT_TRUE(has(r, "node 'out_id' (Identity) has no float16 form")) << r.all();
    r = run(m, {"--layer-precisions", "out_id:fp16", "--precision-constraints", "prefer",
                "--show-precisions"});
    EXPECT_EQ(r.status, 0) << r.all();
    EXPECT_TRUE(has(r, "out_id (Identity): float32")) << r.all();
}

TEST(Emu, PrecisionFlagErrors) {
    const std::string m = built_model();
    EXPECT_EQ(run(m, {"--fp16", "--bf16"}).status, 2);
    auto r = run(m, {"--int8", "--calibration-method", "kl"});
    EXPECT_EQ(r.status, 2) << r.all();
    EXPECT_EQ(run(m, {"--fp8", "e3m4"}).status, 2);
    EXPECT_EQ(run(m, {"--layer-precisions", "Add"}).status, 2);
    r = test::run_polygraph({"run", m, "--ref", "--fp16"});
    EXPECT_EQ(r.status, 0) << r.all();
    EXPECT_TRUE(has(r, "only apply to --emu")) << r.all();
}

TEST(Emu, OtherFormatsAndModes) {
    const std::string m = built_model();
    // bfloat16: 65504 + x rounds to 65536 (8-bit mantissa), Sub gives 32: fails, no overflow.
    auto r = run(m, {"--bf16"});
    EXPECT_EQ(r.status, 1) << r.all();
    // TF32 touches only MatMul operands; x in [1,2] rounds by at most 2^-11 relative.
    r = run(m, {"--tf32", "--show-precisions"});
    EXPECT_EQ(r.status, 0) << r.all();
    EXPECT_TRUE(has(r, "Add (Add): float32")) << r.all();
    EXPECT_TRUE(has(r, "MatMul_0 (MatMul): tf32")) << r.all();
    // toward-zero never overflows to inf; the story is the same.
    r = run(m, {"--fp16", "--rounding", "toward-zero", "--accumulate", "fp16"});
    EXPECT_EQ(r.status, 1) << r.all();
    r = run(m, {"--fp8", "e5m2", "--layer-precisions", "op:Add:fp32", "op:Sub:fp32"});
    EXPECT_NE(r.status, 4) << r.all();  // runs; E5M2 has 2 mantissa bits: accuracy is its own
}

}  // namespace
}  // namespace pg
