// Root-cause labels of `run --emu ... --onnx-outputs mark all` on small built models, one per
// label: overflow (Add of 65504 in float16, divergent by evidence although within tolerance),
// cancellation (the Sub after it), inherited (the MatMul after that), underflow, quantization
// clipping (INT8 with a too-small calibrated scale), accumulation (--accumulate fp16 over a long
// K) and rounding (no other evidence).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "base/fs.h"
#include "ir/builder.h"
#include "onnx/model_io.h"
#include "support/cli_runner.h"
#include "support/story_model.h"
#include "support/test_paths.h"

namespace pg {
namespace {

// x -> MatMul(I) -> Add(c) -> Sub(c) -> MatMul(I), float32 [1,1,4,4].
using test::story_model;

std::vector<std::string> story_args(const std::string& model) {
    return {"run",     model,
            "--ref",   "--emu",
            "--fp16",  "--val-range",
            "x:[1,2]", "--check-error-stat",
            "median",  "--atol",
            "1e-3",    "--rtol",
            "1e-3",    "--onnx-outputs",
            "mark",    "all",
            "--json"};
}

// The root-cause label of every layer-wise row, by node ("" for rows that passed).
std::map<std::string, std::string> labels(const nlohmann::json& j) {
    std::map<std::string, std::string> out;
    for (const auto& t : j["layerwise"][0]["tensors"])
        out[t["node"].get<std::string>()] = t.value("root_cause_label", "");
    return out;
}

TEST(RootCause, OverflowAtAddMakesItTheFirstDivergentNode) {
    auto r = test::run_polygraph(story_args(story_model(test::make_temp_dir(), 65504.0f)));
    ASSERT_EQ(r.status, 1) << r.all();
    auto j = nlohmann::json::parse(r.out);
    const auto& lw = j["layerwise"][0];
    EXPECT_EQ(lw["first_divergent"]["node"], "Add");
    EXPECT_NE(lw["first_divergent"]["divergent_by_evidence"].get<std::string>().find(
                  "overflow, 16 exact value(s) beyond float16's largest finite value 65504"),
              std::string::npos)
        << lw.dump();
    const auto& cause = lw["root_cause"];
    EXPECT_EQ(cause["node"], "Add");
    EXPECT_EQ(cause["label"], "overflow");
    EXPECT_EQ(cause["divergent_node_label"], "local");
    EXPECT_NE(cause["explanation"].get<std::string>().find("65504"), std::string::npos);
    const auto l = labels(j);
    EXPECT_EQ(l.at("MatMul_0"), "");  // passed
    EXPECT_EQ(l.at("Add"), "overflow");
    EXPECT_EQ(l.at("Sub"), "cancellation");
    EXPECT_EQ(l.at("MatMul_1"), "inherited");
    // Add's output passes the tolerance: only the evidence fails it.
    for (const auto& t : lw["tensors"])
        if (t["node"] == "Add") {
            EXPECT_LT(t["max_rel"].get<double>(), 1e-3);
        }
}

TEST(RootCause, EmulatorAsFirstRunner) {
    const std::string m = story_model(test::make_temp_dir(), 65504.0f);
    auto r = test::run_polygraph({"run", m, "--emu", "--ref", "--fp16", "--val-range", "x:[1,2]",
                                  "--atol", "1e-3", "--rtol", "1e-3", "--onnx-outputs", "mark",
                                  "all", "--json"});
    ASSERT_EQ(r.status, 1) << r.all();
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["layerwise"][0]["runner0"].get<std::string>().rfind("emu-runner", 0), 0u);
    EXPECT_EQ(j["layerwise"][0]["first_divergent"]["node"], "Add");
    EXPECT_EQ(j["layerwise"][0]["root_cause"]["label"], "overflow");
    EXPECT_EQ(labels(j).at("Sub"), "cancellation");
}

TEST(RootCause, NoEvidenceMeansRoundingAmplifiedByCancellation) {
    // A constant well inside FP16's range: Sub still cancels, but nothing overflowed.
    auto r = test::run_polygraph(story_args(story_model(test::make_temp_dir(), 4000.0f)));
    ASSERT_EQ(r.status, 1) << r.all();
    auto j = nlohmann::json::parse(r.out);
    const auto& lw = j["layerwise"][0];
    EXPECT_EQ(lw["first_divergent"]["node"], "Sub");
    EXPECT_FALSE(lw["first_divergent"].contains("divergent_by_evidence"));
    EXPECT_EQ(lw["root_cause"]["label"], "rounding");
    EXPECT_EQ(lw["root_cause"]["divergent_node_label"], "cancellation");
    const auto l = labels(j);
    EXPECT_EQ(l.at("Add"), "");
    EXPECT_EQ(l.at("Sub"), "cancellation");
    EXPECT_EQ(l.at("MatMul_1"), "inherited");
}

// One node `op`(x, c) with x [1, n] and c a constant [n, k] (MatMul) or [1] (elementwise).
std::string one_node_model(const std::string& dir, const std::string& op, int64_t n, int64_t k,
                           float c) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{1, n});
    const bool mm = op == "MatMul";
    ir::Value* w = mm ? b.constant_f32("w", {n, k}, std::vector<float>(size_t(n * k), c))
                      : b.constant_f32("c", {1}, {c});
    ir::Value* v = b.op(op, {x, w}, {}, "node");
    b.output(v, DataType::kFloat32, {1, mm ? k : n});
    const std::string path = dir + "/" + op + ".onnx";
    onnx::save_model(*m, path);
    return path;
}

nlohmann::json run_json(std::vector<std::string> args) {
    args.insert(args.end(), {"--val-range", "x:[1,2]", "--onnx-outputs", "mark", "all", "--json"});
    auto r = test::run_polygraph(args);
    EXPECT_EQ(r.status, 1) << r.all();
    return r.status == 1 ? nlohmann::json::parse(r.out) : nlohmann::json{};
}

std::string node_label(const nlohmann::json& j) {
    if (j.is_null()) return "<no run>";
    return labels(j).at("node");
}

TEST(RootCause, UnderflowToZero) {
    // x * 1e-9 is below float16's smallest subnormal (6e-8): every output rounds to 0.
    const std::string m = one_node_model(test::make_temp_dir(), "Mul", 16, 0, 1e-9f);
    const auto j =
        run_json({"run", m, "--ref", "--emu", "--fp16", "--atol", "0", "--rtol", "1e-3"});
    EXPECT_EQ(node_label(j), "underflow");
}

TEST(RootCause, QuantizationClipping) {
    // A calibration cache with a scale 1000x too small: every activation clips at 127 * scale.
    const std::string dir = test::make_temp_dir();
    const std::string m = one_node_model(dir, "MatMul", 16, 4, 0.5f);
    write_file_atomic(dir + "/c.cache", "polygraph-int8-calibration v1 method=minmax\nx: 1e-5\n");
    const auto j = run_json({"run", m, "--ref", "--emu", "--int8", "--calibration-cache",
                             dir + "/c.cache", "--atol", "1e-3", "--rtol", "1e-3"});
    EXPECT_EQ(node_label(j), "quantization clipping");
    ASSERT_FALSE(j.is_null());
    EXPECT_NE(j["layerwise"][0]["first_divergent"]["divergent_by_evidence"].get<std::string>().find(
                  "quantization clipping, 16 of 80 input value(s)"),
              std::string::npos)
        << j.dump();
}

TEST(RootCause, AccumulationVersusRounding) {
    // K = 2048 products of x in [1,2] and 1: sums near 3072, where float16's spacing is 2.
    const std::string m = one_node_model(test::make_temp_dir(), "MatMul", 2048, 4, 1.0f);
    const std::vector<std::string> base = {"run",    m,      "--ref",  "--emu", "--fp16",
                                           "--atol", "1e-6", "--rtol", "1e-6"};
    std::vector<std::string> acc = base;
    acc.insert(acc.end(), {"--accumulate", "fp16"});
    EXPECT_EQ(node_label(run_json(acc)), "accumulation");
    EXPECT_EQ(node_label(run_json(base)), "rounding");
}

}  // namespace
}  // namespace pg

namespace pg {
namespace {

TEST(RootCause, EvidenceIsInSaveResults) {
    const std::string dir = test::make_temp_dir();
    const std::string m = story_model(dir, 65504.0f);
    auto r = test::run_polygraph({"run", m, "--ref", "--emu", "--fp16", "--val-range", "x:[1,2]",
                                  "--check-error-stat", "median", "--atol", "1e-3", "--rtol",
                                  "1e-3", "--save-results", dir + "/res.json"});
    EXPECT_EQ(r.status, 1) << r.all();
    auto j = nlohmann::json::parse(read_file(dir + "/res.json"));
    ASSERT_EQ(j["precision_evidence"].size(), 1u);
    bool add_overflowed = false;
    for (const auto& n : j["precision_evidence"].begin().value())
        if (n["node"] == "Add") {
            add_overflowed = n["outputs"]["overflow"].get<uint64_t>() > 0;
            EXPECT_EQ(n["label"], "overflow");
            EXPECT_TRUE(n.contains("divergent_by_evidence"));
        }
    EXPECT_TRUE(add_overflowed) << j.dump();
}

}  // namespace
}  // namespace pg
