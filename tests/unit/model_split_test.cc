// The loader's split of large initializer payloads out of the protobuf message
// (onnx/model_split.h) and the zero-copy hand-over of raw_data to the imported tensor.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

#include "base/error.h"
#include "ir/builder.h"
#include "onnx/model_io.h"
#include "onnx/model_split.h"
#include "onnx/tensor_codec.h"
#include "support/test_paths.h"

namespace pg {
namespace {

constexpr uint64_t kMin = 64 << 10;

// y = (x + big) * small; big holds 128 Ki floats (512 KiB), small 4.
std::unique_ptr<ir::Model> two_weight_model() {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, ir::Shape{ir::Dim::known(128 << 10)});
    std::vector<float> big(128 << 10);
    for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(i % 977) * 0.5f;
    ir::Value* w = b.constant_f32("big", {128 << 10}, big);
    ir::Value* s = b.constant_f32("small", {1}, {3.0f});
    b.output(b.op("Mul", {b.op("Add", {x, w}), s}));
    return m;
}

std::optional<onnx::SplitModel> split_file(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    EXPECT_GE(fd, 0);
    auto split = onnx::split_model_file(fd, std::filesystem::file_size(path), kMin);
    ::close(fd);
    return split;
}

// m saved to a fresh temporary folder; the file's path.
std::string saved(const ir::Model& m) {
    const std::string path = test::make_temp_dir() + "/m.onnx";
    onnx::save_model(m, path);
    return path;
}

const Tensor& initializer(const ir::Model& m, const std::string& name) {
    return m.graph->find_value(name)->initializer()->tensor;
}

TEST(ModelSplit, LargeRawDataLeavesTheSkeleton) {
    auto m = two_weight_model();
    const std::string path = saved(*m);
    auto split = split_file(path);
    ASSERT_TRUE(split);
    ASSERT_EQ(split->payloads.size(), 1u);  // "small" stays inline
    const onnx::SplitPayload& payload = split->payloads.begin()->second;
    const Tensor& big = initializer(*m, "big");
    ASSERT_EQ(payload.size, big.nbytes());
    EXPECT_EQ(std::memcmp(payload.bytes.get(), big.bytes(), payload.size), 0);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(payload.bytes.get()) % 64, 0u);  // read into a line
    EXPECT_LT(split->skeleton.size(), 4096u);
}

TEST(ModelSplit, LoadedModelHasTheSavedWeights) {
    auto m = two_weight_model();
    const std::string path = saved(*m);
    auto back = onnx::load_model(path);
    EXPECT_TRUE(initializer(*back, "big").same_contents(initializer(*m, "big")));
    EXPECT_TRUE(initializer(*back, "small").same_contents(initializer(*m, "small")));
    // Both adopted or copied into cache-line aligned buffers (base/aligned.h).
    EXPECT_EQ(reinterpret_cast<uintptr_t>(initializer(*back, "big").bytes()) % 64, 0u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(initializer(*back, "small").bytes()) % 64, 0u);
}

// A chain of Adds over initializers of 1 000 to 40 000 floats, sizes drawn at random: most stay
// inline, so the skeleton spans many 16 KiB windows of the splitter's reader, and the split
// payloads start and end anywhere in and across them.
std::unique_ptr<ir::Model> mixed_weight_model() {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    std::mt19937 rng(7);
    ir::Value* y = b.input("x", DataType::kFloat32, ir::Shape{ir::Dim::known(1)});
    for (int i = 0; i < 60; ++i) {
        std::vector<float> w(1000 + rng() % 39000);
        for (float& v : w) v = static_cast<float>(rng() % 1000) * 0.25f;
        const int64_t n = static_cast<int64_t>(w.size());
        y = b.op("Add", {b.op("ReduceSum", {b.constant_f32("w" + std::to_string(i), {n}, w)}), y});
    }
    b.output(y);
    return m;
}

// The split load reads the file through a small window; whatever the window boundaries cut,
// every initializer has the bytes protobuf itself parses from the whole file.
TEST(ModelSplit, SkeletonLongerThanTheReadWindowLoadsTheSameWeights) {
    auto m = mixed_weight_model();
    const std::string path = saved(*m);
    auto split = split_file(path);
    ASSERT_TRUE(split);
    EXPECT_GT(split->payloads.size(), 10u);
    EXPECT_GT(split->skeleton.size(), 8 * kMin);  // many windows of inline data
    std::ifstream in(path, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto whole = onnx::parse_model(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    auto back = onnx::load_model(path);
    for (int i = 0; i < 60; ++i) {
        const std::string name = "w" + std::to_string(i);
        EXPECT_TRUE(initializer(*back, name).same_contents(initializer(*whole, name))) << name;
        EXPECT_TRUE(initializer(*back, name).same_contents(initializer(*m, name))) << name;
    }
}

TEST(ModelSplit, TruncatedFileIsNotSplitAndFailsAsInvalidInput) {
    auto m = two_weight_model();
    const std::string dir = test::make_temp_dir();
    onnx::save_model(*m, dir + "/m.onnx");
    std::filesystem::copy_file(dir + "/m.onnx", dir + "/cut.onnx");
    std::filesystem::resize_file(dir + "/cut.onnx",
                                 std::filesystem::file_size(dir + "/m.onnx") - 1000);
    EXPECT_FALSE(split_file(dir + "/cut.onnx"));
    try {
        onnx::load_model(dir + "/cut.onnx");
        FAIL() << "a truncated model loaded";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
    }
}

void put_varint(uint64_t v, std::string& out) {
    for (; v >= 0x80; v >>= 7) out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    out.push_back(static_cast<char>(v));
}

std::string field(uint32_t number, const std::string& payload) {
    std::string out;
    put_varint(uint64_t{number} << 3 | 2, out);
    put_varint(payload.size(), out);
    return out + payload;
}

// A model file (IR 8, opset 17) whose graph holds one initializer, the serialized TensorProto
// `tensor`, written by hand (so its fields can lie); returns its path.
std::string hand_model_file(const std::string& tensor, const std::string& file) {
    const std::string graph = field(2, "g") + field(5, tensor);
    const std::string model = std::string("\x08\x08") + field(7, graph) + field(8, "\x10\x11");
    const std::string path = test::make_temp_dir() + "/" + file;
    std::ofstream(path, std::ios::binary) << model;
    return path;
}

// If nodes nested `depth` deep (each then_branch holding the next If), as a model file.
std::string nested_if_model(int depth, const std::string& file) {
    std::string node = field(1, "x") + field(2, "y") + field(4, "Identity");
    for (int d = 0; d < depth; ++d) {
        const std::string graph = field(1, node) + field(2, "g") + field(12, field(1, "y"));
        const std::string attr = field(1, "then_branch") + field(6, graph) + "\xa0\x01\x05";
        node = field(1, "c") + field(2, "y") + field(4, "If") + field(5, attr);
    }
    const std::string graph = field(1, node) + field(2, "g") + field(11, field(1, "x")) +
                              field(11, field(1, "c")) + field(12, field(1, "y"));
    const std::string model = std::string("\x08\x08") + field(7, graph) + field(8, "\x10\x0d");
    const std::string path = test::make_temp_dir() + "/" + file;
    std::ofstream(path, std::ios::binary) << model;
    return path;
}

// Subgraphs nested past protobuf's recursion limit are refused with the limit named, not as a
// truncated file; nesting within it loads.
TEST(ModelSplit, NestingPastTheRecursionLimitIsNamed) {
    EXPECT_NO_THROW(onnx::load_model(nested_if_model(20, "nested20.onnx")));
    try {
        onnx::load_model(nested_if_model(80, "nested80.onnx"));
        ADD_FAILURE() << "loaded";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
        EXPECT_NE(std::string(e.what()).find("nested more than 200 deep"), std::string::npos)
            << e.what();
    }
}

// Protobuf keeps the last of repeated raw_data fields: a small one after a split one wins.
TEST(ModelSplit, LaterSmallRawDataWinsOverSplitOne) {
    std::string tensor = "\x08\x02\x10\x01";  // dims: [2], data_type: FLOAT
    tensor += field(8, "w") + field(9, std::string(kMin + 8, '\x7f'));
    std::string two(8, '\0');
    const float v[2] = {1.5f, -2.0f};
    std::memcpy(two.data(), v, 8);
    tensor += field(9, two);
    const std::string path = hand_model_file(tensor, "hand.onnx");
    auto split = split_file(path);
    ASSERT_TRUE(split);
    EXPECT_TRUE(split->payloads.empty());
    auto m = onnx::load_model(path);
    const Tensor& w = initializer(*m, "w");
    ASSERT_EQ(w.nbytes(), 8u);
    EXPECT_EQ(w.data<float>()[0], 1.5f);
    EXPECT_EQ(w.data<float>()[1], -2.0f);
}

// A split payload whose size does not match the tensor's dims is refused like any raw_data.
TEST(ModelSplit, SplitPayloadOfTheWrongSizeIsInvalidInput) {
    std::string tensor = "\x08\x02\x10\x01";  // dims: [2], data_type: FLOAT
    tensor += field(8, "w") + field(9, std::string(kMin + 8, '\x7f'));
    const std::string path = hand_model_file(tensor, "lying.onnx");
    auto split = split_file(path);
    ASSERT_TRUE(split);
    EXPECT_EQ(split->payloads.size(), 1u);
    try {
        onnx::load_model(path);
        ADD_FAILURE() << "loaded";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
        EXPECT_NE(std::string(e.what()).find("needs 8 bytes of raw_data, found 65544"),
                  std::string::npos)
            << e.what();
    }
}

// The imported tensor adopts the proto's raw_data buffer itself (no copy of the weights).
// Large raw_data (64 KiB and more) is adopted, not copied: the load holds one copy of the
// weights. Smaller raw_data is copied out of the message, whose memory is released after import
// (import.cc parses it on a thread of its own).
TEST(ModelSplit, ImportedTensorOwnsTheMovedRawDataBytes) {
    onnxpb::TensorProto tp;
    tp.set_name("w");
    tp.set_data_type(1);
    tp.add_dims(16384);
    tp.mutable_raw_data()->assign(65536, '\x01');
    const char* bytes = tp.raw_data().data();
    onnx::ExternalDataReader ext("", false);
    ir::NamedTensor t = onnx::import_tensor(tp, ext);
    EXPECT_EQ(reinterpret_cast<const char*>(t.tensor.bytes()), bytes);
    EXPECT_TRUE(tp.raw_data().empty());
}

TEST(ModelSplit, SmallRawDataIsCopiedOutOfTheMessage) {
    onnxpb::TensorProto tp;
    tp.set_name("b");
    tp.set_data_type(1);
    tp.add_dims(1024);
    tp.mutable_raw_data()->assign(4096, '\x02');
    const char* bytes = tp.raw_data().data();
    onnx::ExternalDataReader ext("", false);
    ir::NamedTensor t = onnx::import_tensor(tp, ext);
    EXPECT_NE(reinterpret_cast<const char*>(t.tensor.bytes()), bytes);
    ASSERT_EQ(t.tensor.nbytes(), 4096u);
    EXPECT_EQ(t.tensor.bytes()[4095], 2);
}

}  // namespace
}  // namespace pg

namespace pg {
namespace {

// Hostile input on the split path (the fuzz target covers parse_model, not load_model): 300
// seeded mutations of a model with a split payload (bytes flipped, truncated, lengths lying,
// large ranges zeroed) either load or fail with pg::Error; nothing else escapes.
TEST(ModelSplit, MutatedFilesLoadOrFailCleanly) {
    const std::string dir = test::make_temp_dir();
    const std::string good = dir + "/good.onnx";
    onnx::save_model(*two_weight_model(), good);
    std::string bytes;
    {
        std::ifstream in(good, std::ios::binary);
        bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    std::mt19937 rng(11);
    auto at = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
    size_t failed = 0;
    for (int t = 0; t < 300; ++t) {
        std::string b = bytes;
        switch (t % 4) {
            case 0:  // flip a few bytes, mostly in the skeleton's tags and lengths
                for (int k = 0; k < 4; ++k) b[at(std::min<size_t>(b.size(), 256))] ^= 1 << at(8);
                break;
            case 1:  // truncate anywhere
                b.resize(at(b.size()));
                break;
            case 2:  // a varint length byte set to "huge"
                b[at(std::min<size_t>(b.size(), 64))] = static_cast<char>(0xff);
                break;
            default:  // zero a range
                for (size_t i = at(b.size()), e = std::min(b.size(), i + at(4096)); i < e; ++i)
                    b[i] = 0;
        }
        const std::string path = dir + "/m" + std::to_string(t) + ".onnx";
        std::ofstream(path, std::ios::binary) << b;
        try {
            onnx::load_model(path);
        } catch (const Error&) {
            ++failed;
        }
        std::filesystem::remove(path);
    }
    EXPECT_GT(failed, 0u);  // the mutations do reach the error paths
}

}  // namespace
}  // namespace pg
