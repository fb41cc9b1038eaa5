// Hostile model files given to `polygraph inspect model`: broken bytes, lying tensors and broken
// graph structure. Each must end with exit 3 (4 for unsupported) and a message naming the file,
// the tensor or node and the problem; never a crash, a hang or a huge allocation.
// External-data cases are in hostile_external_test.cc.
#include <sys/stat.h>

#include <filesystem>
#include <random>
#include <stdexcept>

#include "cli/hostile_support.h"

namespace pg {
namespace {

using test::expect_rejected;
using test::hostile_base_proto;
using test::write_proto;
using test::write_raw;

using test::kLimitKib;

std::string model_path(const std::string& name = "m.onnx") {
    return test::make_temp_dir() + "/" + name;
}

onnxpb::TensorProto& weight(onnxpb::ModelProto& mp) {
    return *mp.mutable_graph()->mutable_initializer(0);
}

onnxpb::NodeProto& node(onnxpb::ModelProto& mp, const std::string& name) {
    for (auto& n : *mp.mutable_graph()->mutable_node())
        if (n.name() == name) return n;
    throw std::runtime_error("no node " + name);
}

TEST(HostileModel, BaseModelLoads) {
    auto r =
        test::run_polygraph({"inspect", "model", write_proto(hostile_base_proto(), model_path())});
    EXPECT_EQ(r.status, 0) << r.all();
}

TEST(HostileModel, EmptyFile) {
    const std::string path = model_path("empty.onnx");
    write_raw(path, "");
    expect_rejected(path, 3, {"empty.onnx", "empty"});
}

TEST(HostileModel, RandomBytes) {
    for (unsigned seed : {1u, 2u, 3u, 4u, 5u, 6u, 7u, 8u}) {
        std::mt19937 rng(seed);
        std::string bytes(1 + rng() % 4096, '\0');
        for (char& c : bytes) c = static_cast<char>(rng());
        const std::string path = model_path("random" + std::to_string(seed) + ".onnx");
        write_raw(path, bytes);
        SCOPED_TRACE("seed " + std::to_string(seed));
        expect_rejected(path, 3, {path, "model"});
    }
}

TEST(HostileModel, TruncatedModel) {
    const std::string bytes = hostile_base_proto().SerializeAsString();
    for (size_t cut :
         {size_t{1}, size_t{3}, bytes.size() / 4, bytes.size() / 2, bytes.size() - 1}) {
        const std::string path = model_path("cut" + std::to_string(cut) + ".onnx");
        write_raw(path, bytes.substr(0, cut));
        SCOPED_TRACE("cut at " + std::to_string(cut) + " of " + std::to_string(bytes.size()));
        expect_rejected(path, 3, {path});
    }
}

TEST(HostileModel, DirectoryInsteadOfFile) {
    const std::string path = model_path("folder.onnx");
    std::filesystem::create_directory(path);
    expect_rejected(path, 3, {"folder.onnx", "directory"});
}

TEST(HostileModel, FifoInsteadOfFileDoesNotHang) {
    const std::string path = model_path("pipe.onnx");
    ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
    expect_rejected(path, 3, {"pipe.onnx", "not a regular file"});
}

TEST(HostileModel, NegativeDimInInitializer) {
    auto mp = hostile_base_proto();
    weight(mp).set_dims(0, -4);
    expect_rejected(write_proto(mp, model_path()), 3, {"m.onnx", "'w'", "negative dimension (-4)"});
}

TEST(HostileModel, AbsurdDimsOverflow) {
    auto mp = hostile_base_proto();
    weight(mp).clear_dims();
    weight(mp).add_dims(int64_t{1} << 40);
    weight(mp).add_dims(int64_t{1} << 40);
    expect_rejected(write_proto(mp, model_path()), 3, {"m.onnx", "'w'", "absurd shape"}, kLimitKib);
}

TEST(HostileModel, HugeDimsWithLittleRawData) {
    auto mp = hostile_base_proto();  // 2^40 floats = 4 TiB claimed, 16 bytes given
    weight(mp).clear_dims();
    weight(mp).add_dims(int64_t{1} << 20);
    weight(mp).add_dims(int64_t{1} << 20);
    expect_rejected(write_proto(mp, model_path()), 3,
                    {"m.onnx", "'w'", "needs 4398046511104 bytes of raw_data, found 16"},
                    kLimitKib);
}

TEST(HostileModel, HugeDimsWithLittleTypedData) {
    auto mp = hostile_base_proto();
    weight(mp).clear_dims();
    weight(mp).add_dims(int64_t{1} << 40);
    weight(mp).clear_raw_data();
    for (float f : {1.f, 2.f, 3.f, 4.f}) weight(mp).add_float_data(f);
    expect_rejected(write_proto(mp, model_path()), 3, {"'w'", "float_data, found 4"}, kLimitKib);
}

TEST(HostileModel, HugeStringTensor) {
    auto mp = hostile_base_proto();
    weight(mp).clear_dims();
    weight(mp).add_dims(int64_t{1} << 40);
    weight(mp).clear_raw_data();
    weight(mp).set_data_type(8);  // STRING
    weight(mp).add_string_data("a");
    expect_rejected(write_proto(mp, model_path()), 3, {"'w'", "string_data, found 1"}, kLimitKib);
}

TEST(HostileModel, HugeDimsOnEveryWideType) {
    // 2^62 elements pass the element limit; the byte count of 8- and 16-byte types must not wrap.
    for (int dtype : {7, 11, 13, 14, 15}) {  // INT64, DOUBLE, UINT64, COMPLEX64, COMPLEX128
        auto mp = hostile_base_proto();
        weight(mp).clear_dims();
        weight(mp).add_dims(int64_t{1} << 62);
        weight(mp).set_data_type(dtype);
        SCOPED_TRACE("dtype " + std::to_string(dtype));
        expect_rejected(write_proto(mp, model_path()), 3, {"'w'"}, kLimitKib);
    }
}

TEST(HostileModel, RawDataShorterThanShape) {
    auto mp = hostile_base_proto();
    weight(mp).set_raw_data(std::string(3, '\x01'));
    expect_rejected(write_proto(mp, model_path()), 3,
                    {"m.onnx", "'w'", "needs 16 bytes of raw_data, found 3"});
}

TEST(HostileModel, RawDataLongerThanShape) {
    auto mp = hostile_base_proto();
    weight(mp).set_raw_data(std::string(20, '\x01'));
    expect_rejected(write_proto(mp, model_path()), 3,
                    {"'w'", "needs 16 bytes of raw_data, found 20"});
}

TEST(HostileModel, TwoNodesProduceOneName) {
    auto mp = hostile_base_proto();
    node(mp, "relu").set_output(0, "mul_out");
    node(mp, "relu").set_input(0, "x");
    expect_rejected(write_proto(mp, model_path()), 3,
                    {"m.onnx", "'mul_out'", "relu", "already produced"});
}

TEST(HostileModel, NodeOutputNamedLikeAnInitializer) {
    auto mp = hostile_base_proto();
    node(mp, "mul").set_output(0, "w");
    expect_rejected(write_proto(mp, model_path()), 3, {"'w'", "mul", "already produced"});
}

TEST(HostileModel, DuplicateInitializers) {
    auto mp = hostile_base_proto();
    *mp.mutable_graph()->add_initializer() = weight(mp);
    expect_rejected(write_proto(mp, model_path()), 3, {"m.onnx", "duplicate initializer 'w'"});
}

TEST(HostileModel, DuplicateGraphInputs) {
    auto mp = hostile_base_proto();
    *mp.mutable_graph()->add_input() = mp.graph().input(0);
    mp.mutable_graph()->mutable_input(1)->mutable_type()->mutable_tensor_type()->set_elem_type(7);
    expect_rejected(write_proto(mp, model_path()), 3,
                    {"m.onnx", "graph input 'x'", "more than once"});
}

TEST(HostileModel, Cycle) {
    auto mp = hostile_base_proto();
    node(mp, "mul").set_input(0, "relu_out");  // mul reads relu, relu reads mul
    expect_rejected(write_proto(mp, model_path()), 3, {"m.onnx", "cycle", "'mul'", "'relu'"});
}

TEST(HostileModel, NodeReadsItsOwnOutput) {
    auto mp = hostile_base_proto();
    node(mp, "relu").set_input(0, "relu_out");
    node(mp, "relu").set_output(0, "relu_out");
    mp.mutable_graph()->mutable_output(0)->set_name("mul_out");
    expect_rejected(write_proto(mp, model_path()), 3, {"cycle", "'relu'"});
}

TEST(HostileModel, NodeInputNobodyProduces) {
    auto mp = hostile_base_proto();
    node(mp, "mul").set_input(0, "ghost");
    expect_rejected(write_proto(mp, model_path()), 3,
                    {"m.onnx", "'mul'", "'ghost'", "not produced"});
}

TEST(HostileModel, GraphOutputNobodyProduces) {
    auto mp = hostile_base_proto();
    mp.mutable_graph()->mutable_output(0)->set_name("ghost");
    expect_rejected(write_proto(mp, model_path()), 3,
                    {"m.onnx", "graph output 'ghost'", "not produced"});
}

TEST(HostileModel, UnknownDataTypeIsUnsupported) {
    auto mp = hostile_base_proto();
    weight(mp).set_data_type(77);
    expect_rejected(write_proto(mp, model_path()), 4, {"m.onnx", "'w'", "unknown data type 77"});
}

TEST(HostileModel, UndefinedDataTypeIsInvalid) {
    auto mp = hostile_base_proto();
    weight(mp).set_data_type(0);
    expect_rejected(write_proto(mp, model_path()), 3, {"m.onnx", "'w'", "no data type"});
}

TEST(HostileModel, NoGraph) {
    auto mp = hostile_base_proto();
    mp.clear_graph();
    expect_rejected(write_proto(mp, model_path()), 3, {"m.onnx", "no graph"});
}

TEST(HostileModel, DeeplyNestedSubgraphs) {
    onnxpb::ModelProto mp = hostile_base_proto();
    onnxpb::GraphProto* g = mp.mutable_graph();
    for (int depth = 0; depth < 1000; ++depth) {  // If -> then_branch -> If -> ...
        auto* n = g->add_node();
        n->set_op_type("If");
        auto* a = n->add_attribute();
        a->set_name("then_branch");
        a->set_type(5);  // GRAPH
        g = a->mutable_g();
    }
    expect_rejected(write_proto(mp, model_path()), 3, {"m.onnx"});
}

// A weight-stripped model (TensorRT's TRT_WEIGHTLESS marker, no bytes) that inspect shows and
// the reference refuses to run: it read the missing bytes through a null pointer and crashed.
TEST(HostileModel, WeightStrippedModelIsRefusedByTheReference) {
    onnxpb::ModelProto mp = hostile_base_proto();
    weight(mp).clear_float_data();
    weight(mp).set_raw_data("");
    weight(mp).set_doc_string("TRT_WEIGHTLESS");
    const std::string path = write_proto(mp, model_path("stripped.onnx"));
    EXPECT_EQ(test::run_polygraph({"inspect", "model", path}).status, 0);
    auto r = test::run_polygraph({"run", path, "--ref"}, 60);
    EXPECT_EQ(r.status, 3) << r.all();
    EXPECT_NE(r.err.find("hold no values"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("    w"), std::string::npos) << r.err;
}

TEST(HostileModel, MutatedBytesNeverCrash) {
    const std::string bytes = hostile_base_proto().SerializeAsString();
    std::mt19937 rng(42);
    for (int k = 0; k < 40; ++k) {
        std::string b = bytes;
        for (int flips = 1 + static_cast<int>(rng() % 4); flips > 0; --flips)
            b[rng() % b.size()] = static_cast<char>(rng());
        const std::string path = model_path("mut" + std::to_string(k) + ".onnx");
        write_raw(path, b);
        auto r = test::run_polygraph({"inspect", "model", path}, 30);
        EXPECT_TRUE(r.status == 0 || r.status == 3 || r.status == 4) << "mutation " << k << "\n"
                                                                     << r.all();
    }
}

}  // namespace
}  // namespace pg
