// `polygraph convert --fp-to-fp16|--fp-to-bf16`: exit statuses, written models, and that the
// converted models run on --ref close to the float32 model and load in ONNX Runtime.
#include <gtest/gtest.h>

#include <filesystem>

#include "ir/builder.h"
#include "onnx/model_io.h"
#include "support/cli_runner.h"
#include "support/test_paths.h"

namespace pg {
namespace {

constexpr DataType kF32 = DataType::kFloat32;

std::vector<float> pattern(size_t n, float scale) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = scale * (static_cast<float>(i % 13) - 6.0f);
    return v;
}

// x[1,2,4,4] -> Conv -> Relu -> Resize(x2, nearest) -> Reshape[1,128] -> MatMul[128,8]
//   -> LayerNormalization -> y[1,8]
std::string write_mixed_model(const std::string& dir) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", kF32, {1, 2, 4, 4});
    ir::Value* c = b.op("Conv",
                        {x, b.constant_f32("w", {2, 2, 3, 3}, pattern(36, 0.05f)),
                         b.constant_f32("b", {2}, {0.1f, -0.1f})},
                        ir::attrs(ir::Attribute::make_ints("pads", {1, 1, 1, 1})), "conv");
    ir::Value* r = b.op("Relu", {c}, {}, "relu");
    ir::Value* up = b.op("Resize", {r, nullptr, b.constant_f32("scales", {4}, {1, 1, 2, 2})},
                         ir::attrs(ir::Attribute::make_string("mode", "nearest")), "resize");
    ir::Value* shape = b.constant(
        "shape", Tensor::from_values(DataType::kInt64, {2}, std::vector<int64_t>{1, 128}));
    ir::Value* flat = b.op("Reshape", {up, shape}, {}, "reshape");
    ir::Value* mm =
        b.op("MatMul", {flat, b.constant_f32("k", {128, 8}, pattern(1024, 0.01f))}, {}, "matmul");
    ir::Value* ln = b.op("LayerNormalization",
                         {mm, b.constant_f32("gamma", {8}, pattern(8, 0.2f)),
                          b.constant_f32("beta", {8}, pattern(8, 0.1f))},
                         ir::attrs(ir::Attribute::make_int("axis", -1)), "ln");
    b.output(ln, kF32, {1, 8});
    const std::string path = dir + "/mixed.onnx";
    onnx::save_model(*m, path);
    return path;
}

bool has_ort(const std::string& model) {
    return test::run_polygraph({"run", model, "--onnxrt", "-q"}).status == 0;
}

std::string tutorial_model() {
    return test::shared_file(
        "data/polygraphy-models/examples/convert/04_converting_models_to_fp16/identity.onnx");
}

// Converts `model` with `flags`, then checks --ref agrees with the float32 model within 1e-2.
void convert_and_compare(const std::string& model, const std::vector<std::string>& flags,
                         const std::string& out) {
    std::vector<std::string> args = {"convert", model, "-o", out};
    args.insert(args.end(), flags.begin(), flags.end());
    auto c = test::run_polygraph(args);
    ASSERT_EQ(c.status, 0) << c.all();
    const std::string golden = out + ".golden.json";
    auto g = test::run_polygraph({"run", model, "--ref", "--save-outputs", golden});
    ASSERT_EQ(g.status, 0) << g.all();
    auto r = test::run_polygraph(
        {"run", out, "--ref", "--load-outputs", golden, "--atol", "1e-2", "--rtol", "1e-2"});
    EXPECT_EQ(r.status, 0) << r.all();
}

TEST(Convert, TutorialIdentityModel) {
    const std::string model = tutorial_model();
    if (model.empty()) GTEST_SKIP() << "shared tutorial model absent";
    const std::string out = test::make_temp_dir() + "/identity_fp16.onnx";
    auto r = test::run_polygraph({"convert", "--fp-to-fp16", "-o", out, model});
    ASSERT_EQ(r.status, 0) << r.all();
    EXPECT_NE(r.out.find("Converting float tensors to float16"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("Saving ONNX model to: " + out), std::string::npos) << r.out;
    auto m = onnx::load_model(out);
    const ir::Graph& g = *m->graph;
    EXPECT_EQ(g.inputs()[0]->name(), "x");
    EXPECT_EQ(g.inputs()[0]->type().elem_type, kF32);
    EXPECT_EQ(g.outputs()[0]->name(), "y");
    EXPECT_EQ(g.outputs()[0]->type().elem_type, kF32);
    ASSERT_EQ(g.num_nodes(), 3u);
    EXPECT_EQ(g.nodes()[0]->name, "graph_input_cast0");
    EXPECT_EQ(g.nodes()[1]->op_type, "Identity");
    EXPECT_EQ(g.nodes()[2]->name, "graph_output_cast0");
    convert_and_compare(model, {"--fp-to-fp16"}, out);
    if (!has_ort(model)) GTEST_SKIP() << "ONNX Runtime not available";
    // The tutorial's own check: ORT on the FP16 model against the FP32 outputs.
    auto o = test::run_polygraph({"run", out, "--onnxrt", "--load-outputs", out + ".golden.json",
                                  "--atol", "0.001", "--rtol", "0.001"});
    EXPECT_EQ(o.status, 0) << o.all();
}

TEST(Convert, MixedModelFp16RunsCloseOnRef) {
    const std::string dir = test::make_temp_dir();
    const std::string model = write_mixed_model(dir);
    convert_and_compare(model, {"--fp-to-fp16"}, dir + "/fp16.onnx");
    auto m = onnx::load_model(dir + "/fp16.onnx");
    EXPECT_EQ(m->graph->find_value("w")->initializer()->tensor.dtype(), DataType::kFloat16);
    EXPECT_EQ(m->graph->outputs()[0]->name(), "ln_out");
}

TEST(Convert, MixedModelResizeConvertedAndBlockLists) {
    const std::string dir = test::make_temp_dir();
    const std::string model = write_mixed_model(dir);
    const std::string out = dir + "/fp16_blocked.onnx";
    // No op type blocked (Resize converted, its scales stay float32), one node blocked by name.
    convert_and_compare(model, {"--fp-to-fp16", "--op-block-list", "--node-block-list", "ln"}, out);
    auto m = onnx::load_model(out);
    EXPECT_EQ(m->graph->find_value("scales")->initializer()->tensor.dtype(), kF32);
    EXPECT_EQ(m->graph->find_value("gamma")->initializer()->tensor.dtype(), kF32);
    EXPECT_EQ(m->graph->find_value("k")->initializer()->tensor.dtype(), DataType::kFloat16);
}

TEST(Convert, MixedModelBf16RunsCloseOnRef) {
    const std::string dir = test::make_temp_dir();
    const std::string model = write_mixed_model(dir);
    const std::string out = dir + "/bf16.onnx";
    auto c = test::run_polygraph({"convert", model, "--fp-to-bf16", "-o", out});
    ASSERT_EQ(c.status, 0) << c.all();
    EXPECT_NE(c.out.find("Converting float tensors to bfloat16"), std::string::npos);
    auto g = test::run_polygraph({"run", model, "--ref", "--save-outputs", dir + "/f.json"});
    ASSERT_EQ(g.status, 0) << g.all();
    // bfloat16 keeps 8 bits of mantissa: LayerNormalization outputs agree to a few 1e-2.
    auto r = test::run_polygraph({"run", out, "--ref", "--load-outputs", dir + "/f.json", "--atol",
                                  "5e-2", "--rtol", "5e-2"});
    EXPECT_EQ(r.status, 0) << r.all();
}

TEST(Convert, ClampingIsReported) {
    const std::string dir = test::make_temp_dir();
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", kF32, {1, 3});
    b.output(b.op("Mul", {x, b.constant_f32("big", {1, 3}, {1e5f, -2e5f, 1.0f})}), kF32, {1, 3});
    onnx::save_model(*m, dir + "/big.onnx");
    auto r = test::run_polygraph(
        {"convert", dir + "/big.onnx", "--fp-to-fp16", "-o", dir + "/out.onnx"});
    ASSERT_EQ(r.status, 0) << r.all();
    EXPECT_NE(r.all().find("2 initializer value(s) were beyond the range of float16"),
              std::string::npos)
        << r.all();
}

TEST(Convert, OnnxRuntimeLoadsConvertedModels) {
    const std::string dir = test::make_temp_dir();
    const std::string model = write_mixed_model(dir);
    if (!has_ort(model)) GTEST_SKIP() << "ONNX Runtime not available";
    for (const auto& flags :
         std::vector<std::vector<std::string>>{{"--fp-to-fp16"},
                                               {"--fp-to-fp16", "--op-block-list"},
                                               {"--fp-to-fp16", "--no-keep-io-types",
                                                "--op-block-list", "--node-block-list", "relu"}}) {
        const std::string out = dir + "/ort_" + std::to_string(flags.size()) + ".onnx";
        std::vector<std::string> args = {"convert", model, "-o", out};
        args.insert(args.end(), flags.begin(), flags.end());
        ASSERT_EQ(test::run_polygraph(args).status, 0);
        // ONNX Runtime and the reference interpreter agree on the converted model.
        auto r = test::run_polygraph(
            {"run", out, "--onnxrt", "--ref", "--atol", "1e-2", "--rtol", "1e-2"});
        EXPECT_EQ(r.status, 0) << flags.back() << "\n" << r.all();
        EXPECT_NE(r.out.find("PASSED | All outputs matched"), std::string::npos) << r.out;
    }
}

// The consistency check: emulating float16 on the float32 model (--emu --fp16) and
// running the converted model on --ref give the same outputs.
TEST(Convert, EmulatedFp16MatchesConvertedModelOnRef) {
    const std::string dir = test::make_temp_dir();
    const std::string model = write_mixed_model(dir);
    const std::string out = dir + "/fp16.onnx";
    ASSERT_EQ(test::run_polygraph({"convert", model, "--fp-to-fp16", "--op-block-list", "-o", out})
                  .status,
              0);
    auto e =
        test::run_polygraph({"run", model, "--emu", "--fp16", "--save-outputs", dir + "/e.json"});
    if (e.status == 2 && e.all().find("--emu") != std::string::npos)
        GTEST_SKIP() << "this build has no --emu";
    ASSERT_EQ(e.status, 0) << e.all();
    auto r = test::run_polygraph({"run", out, "--ref", "--load-outputs", dir + "/e.json", "--atol",
                                  "1e-3", "--rtol", "1e-3"});
    EXPECT_EQ(r.status, 0) << r.all();
}

TEST(Convert, UsageErrors) {
    const std::string dir = test::make_temp_dir();
    const std::string model = write_mixed_model(dir);
    auto none = test::run_polygraph({"convert", model, "-o", dir + "/o.onnx"});
    EXPECT_EQ(none.status, 2);
    EXPECT_NE(none.all().find("--fp-to-fp16"), std::string::npos) << none.all();
    EXPECT_EQ(test::run_polygraph({"convert", model, "--fp-to-fp16"}).status, 2);
    EXPECT_EQ(test::run_polygraph(
                  {"convert", model, "--fp-to-fp16", "--fp-to-bf16", "-o", dir + "/o.onnx"})
                  .status,
              2);
    EXPECT_EQ(test::run_polygraph({"convert", model, "--fp-to-fp16", "-o", dir + "/o.txt"}).status,
              2);
    EXPECT_FALSE(std::filesystem::exists(dir + "/o.onnx"));
}

TEST(Convert, NonOnnxInputsAreRejected) {
    const std::string dir = test::make_temp_dir();
    auto engine =
        test::run_polygraph({"convert", dir + "/m.engine", "--fp-to-fp16", "-o", dir + "/o.onnx"});
    EXPECT_EQ(engine.status, 4) << engine.all();
    EXPECT_NE(engine.all().find("Only ONNX models"), std::string::npos) << engine.all();
    auto to_engine = test::run_polygraph(
        {"convert", write_mixed_model(dir), "--fp-to-fp16", "-o", dir + "/o.engine"});
    EXPECT_EQ(to_engine.status, 4) << to_engine.all();
    {
        std::FILE* f = std::fopen((dir + "/junk.onnx").c_str(), "wb");
        std::fputs("not a model", f);
        std::fclose(f);
    }
    auto junk =
        test::run_polygraph({"convert", dir + "/junk.onnx", "--fp-to-fp16", "-o", dir + "/o.onnx"});
    EXPECT_EQ(junk.status, 3) << junk.all();
}

}  // namespace
}  // namespace pg
