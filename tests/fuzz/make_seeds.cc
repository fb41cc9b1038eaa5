// Writes seed models for the load_model fuzzer, built with our own IR builder: typed and raw
// tensors of several dtypes, strings, a subgraph, a function, value_info and metadata; with
// --data, the load_data fuzzer's seed data files instead (data_seeds.h).
// Usage: pg_fuzz_make_seeds [--data] OUT_DIR
#include <cstdio>
#include <string>

#include "data_seeds.h"

#include "base/error.h"
#include "ir/builder.h"
#include "onnx/model_io.h"

namespace {

using pg::DataType;
using pg::Tensor;
namespace ir = pg::ir;

// x -> Mul(w) -> Cast -> Add(int64 bias) -> Identity, with a string and an fp16 constant.
std::unique_ptr<ir::Model> tensors_model() {
    auto m = ir::new_model(17, "tensors");
    ir::GraphBuilder b(*m->graph);
    ir::Value* x =
        b.input("x", DataType::kFloat32, ir::Shape{ir::Dim::symbolic("N"), ir::Dim::known(4)});
    ir::Value* y = b.op("Mul", {x, b.constant_f32("w", {4}, {1, -2, 3.5f, 0})});
    ir::Value* c = b.op("Cast", {y}, ir::attrs(ir::Attribute::make_int("to", 7)));
    ir::Value* bias =
        b.constant("bias", Tensor::from_values<int64_t>(DataType::kInt64, {2, 2}, {1, 2, 3, 4}));
    b.output(b.op("Add", {c, bias}), DataType::kInt64, {2, 4});
    b.constant("labels", Tensor::from_strings({2}, {"cat", "dog"}));
    b.constant("h",
               Tensor::from_values<uint16_t>(DataType::kFloat16, {3}, {0x3c00, 0x7bff, 0x8001}));
    b.constant("q", Tensor::from_values<uint8_t>(DataType::kInt4, {4}, {0x12, 0xef}));
    m->metadata.emplace_back("seed", "tensors");
    return m;
}

// cond -> If(then: Neg(x), else: Identity(x)).
std::unique_ptr<ir::Model> subgraph_model() {
    auto m = ir::new_model(17, "subgraph");
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, {2});
    ir::Value* cond = b.input("cond", DataType::kBool, std::vector<int64_t>{});
    ir::Node* iff = b.op_multi("If", {cond}, 1, {}, "if");
    for (const char* branch : {"then_branch", "else_branch"}) {
        auto sub = std::make_unique<ir::Graph>(m->graph.get());
        sub->name = branch;
        ir::GraphBuilder sb(*sub);
        sb.output(sb.op(branch[0] == 't' ? "Neg" : "Identity", {x}), DataType::kFloat32, {2});
        sub->set_owner_node(iff);
        ir::Attribute a;
        a.name = branch;
        a.type = ir::AttrType::kGraph;
        a.graphs.push_back(std::move(sub));
        iff->attributes.push_back(std::move(a));
    }
    b.output(iff->output(0), DataType::kFloat32, {2});
    return m;
}

void write(const ir::Model& m, const std::string& path) {
    pg::onnx::save_model(m, path);
    std::printf("wrote %s\n", path.c_str());
}

}  // namespace

int main(int argc, char** argv) {
    const bool data = argc == 3 && std::string(argv[1]) == "--data";
    if (argc != 2 && !data) {
        std::fprintf(stderr, "usage: %s [--data] OUT_DIR\n", argv[0]);
        return 2;
    }
    try {
        const std::string dir = argv[argc - 1];
        if (data) {
            write_data_seeds(dir);
            return 0;
        }
        write(*tensors_model(), dir + "/tensors.onnx");
        write(*subgraph_model(), dir + "/subgraph.onnx");
        pg::onnx::SaveOptions ext;
        ext.external_data_path = "tensors.bin";
        ext.external_data_size_threshold = 0;
        pg::onnx::save_model(*tensors_model(), dir + "/external.onnx", ext);  // refs: error paths
    } catch (const pg::Error& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 3;
    }
    return 0;
}
