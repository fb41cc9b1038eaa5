// Load/save of models built in code: values, attributes, subgraphs, external data, unknown fields.
#include <gtest/gtest.h>

#include <filesystem>

#include "base/error.h"
#include "base/fs.h"
#include "ir/builder.h"
#include "onnx/model_io.h"
#include "support/model_compare.h"
#include "support/test_paths.h"

namespace pg {
namespace {

std::unique_ptr<ir::Model> small_model() {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, ir::Shape{ir::Dim::symbolic("batch"), ir::Dim::known(4)});
    ir::Value* w = b.constant_f32("w", {4}, {1, 2, 3, 4});
    ir::Value* y = b.op("Mul", {x, w});
    ir::Value* z = b.op("LeakyRelu", {y}, ir::attrs(ir::Attribute::make_float("alpha", 0.25f)));
    b.output(z);
    m->metadata.emplace_back("author", "test");
    return m;
}

TEST(OnnxIo, RoundTripPreservesStructure) {
    auto m = small_model();
    const std::string path = test::make_temp_dir() + "/m.onnx";
    onnx::save_model(*m, path);
    auto back = onnx::load_model(path);
    EXPECT_EQ(test::diff_models(*m, *back), "");
    EXPECT_EQ(back->graph->inputs()[0]->type().shape->at(0).param, "batch");
    EXPECT_FLOAT_EQ(back->graph->nodes()[1]->find_attribute("alpha")->f, 0.25f);
}

TEST(OnnxIo, ExternalDataIsWrittenAndReadBack) {
    auto m = small_model();
    const std::string dir = test::make_temp_dir();
    onnx::SaveOptions opts;
    opts.external_data_path = "weights.bin";
    opts.external_data_size_threshold = 0;
    onnx::save_model(*m, dir + "/m.onnx", opts);
    ASSERT_TRUE(std::filesystem::exists(dir + "/weights.bin"));
    auto back = onnx::load_model(dir + "/m.onnx");
    EXPECT_EQ(back->graph->initializers()[0]->initializer()->loaded_from.location, "weights.bin");
    EXPECT_EQ(test::diff_models(*m, *back), "");
}

TEST(OnnxIo, ExternalDataPathMayNotLeaveTheModelFolder) {
    auto m = small_model();
    const std::string dir = test::make_temp_dir();
    onnx::SaveOptions opts;
    opts.external_data_path = "../escape.bin";
    EXPECT_THROW(onnx::save_model(*m, dir + "/m.onnx", opts), Error);
    EXPECT_FALSE(std::filesystem::exists(dir + "/m.onnx"));
}

TEST(OnnxIo, UnknownFieldsSurvive) {
    auto m = small_model();
    // Field 999 (varint 7) on the model, and on the first node.
    m->unknown_fields = std::string("\xb8\x3e\x07", 3);
    m->graph->nodes()[0]->unknown_fields = std::string("\xb8\x3e\x05", 3);
    const std::string bytes = onnx::serialize_model(*m);
    auto back = onnx::parse_model(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    EXPECT_EQ(back->unknown_fields, m->unknown_fields);
    EXPECT_EQ(back->graph->nodes()[0]->unknown_fields, m->graph->nodes()[0]->unknown_fields);
}

TEST(OnnxIo, UnknownDataTypeIsKeptOnValueInfo) {
    auto m = small_model();
    m->graph->inputs()[0]->set_type(ir::TypeInfo::tensor(static_cast<DataType>(77), std::nullopt));
    const std::string bytes = onnx::serialize_model(*m);
    auto back = onnx::parse_model(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    EXPECT_EQ(static_cast<int>(back->graph->inputs()[0]->type().elem_type), 77);
}

TEST(OnnxIo, SavingIsAtomic) {
    const std::string dir = test::make_temp_dir();
    write_file_atomic(dir + "/m.onnx", "old");
    auto m = small_model();
    onnx::SaveOptions opts;
    opts.external_data_path = "/abs/path.bin";  // refused before anything is written
    EXPECT_THROW(onnx::save_model(*m, dir + "/m.onnx", opts), Error);
    EXPECT_EQ(read_file(dir + "/m.onnx"), "old");
    for (const auto& e : std::filesystem::directory_iterator(dir))
        EXPECT_EQ(e.path().filename(), "m.onnx") << "left behind: " << e.path();
}

}  // namespace
}  // namespace pg
