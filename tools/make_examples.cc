// Writes the example models that `make demo` and the README tour use, built with our own IR
// builder (nothing is copied from elsewhere). Usage: pg_make_examples OUT_DIR
#include <cstdio>
#include <random>

#include "base/error.h"
#include "ir/builder.h"
#include "onnx/model_io.h"

namespace {

using pg::DataType;
using pg::Tensor;

Tensor random_f32(std::vector<int64_t> dims, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    size_t n = 1;
    for (int64_t d : dims) n *= static_cast<size_t>(d);
    std::vector<float> v(n);
    for (auto& x : v) x = u(rng);
    return Tensor::from_values(DataType::kFloat32, std::move(dims), v);
}

// Polygraphy's precision-constraints story: x -> MatMul -> Add(65504) -> Sub(65504) -> MatMul.
// In FP16, Add's exact result exceeds 65504 and rounds back to 65504, so Sub returns 0.
void write_needs_constraints(const std::string& dir) {
    auto m = pg::ir::new_model(17, "needs_constraints");
    pg::ir::GraphBuilder b(*m->graph);
    auto* x = b.input("x", DataType::kFloat32, {1, 1, 8, 8});
    auto* eye = b.constant_f32("eye", {8, 8}, [] {
        std::vector<float> v(64, 0.0f);
        for (int i = 0; i < 8; ++i) v[i * 9] = 1.0f;
        return v;
    }());
    auto* big = b.constant_f32("big", {}, {65504.0f});
    auto* mm0 = b.op("MatMul", {x, eye}, {}, "MatMul_0");
    auto* add = b.op("Add", {mm0, big}, {}, "Add");
    auto* sub = b.op("Sub", {add, big}, {}, "Sub");
    auto* mm1 = b.op("MatMul", {sub, eye}, {}, "MatMul_1");
    b.output(mm1, DataType::kFloat32, {1, 1, 8, 8});
    pg::onnx::save_model(*m, dir + "/needs_constraints.onnx");
}

// A small residual CNN with a symbolic batch dim, for inspect and surgeon demos.
void write_small_cnn(const std::string& dir) {
    auto m = pg::ir::new_model(17, "small_cnn");
    pg::ir::GraphBuilder b(*m->graph);
    auto* x = b.input("image", DataType::kFloat32,
                      pg::ir::Shape{pg::ir::Dim::symbolic("batch"), pg::ir::Dim::known(3),
                                    pg::ir::Dim::known(16), pg::ir::Dim::known(16)});
    auto conv = [&](pg::ir::Value* in, int64_t cin, int64_t cout, const std::string& name, uint32_t seed) {
        auto* w = b.constant(name + ".weight", random_f32({cout, cin, 3, 3}, seed));
        auto* bias = b.constant(name + ".bias", random_f32({cout}, seed + 100));
        return b.op("Conv", {in, w, bias},
                    pg::ir::attrs(pg::ir::Attribute::make_ints("kernel_shape", {3, 3}),
                                  pg::ir::Attribute::make_ints("pads", {1, 1, 1, 1})),
                    name);
    };
    auto* c0 = b.op("Relu", {conv(x, 3, 8, "conv0", 1)}, {}, "relu0");
    auto* c1 = b.op("Relu", {conv(c0, 8, 8, "conv1", 2)}, {}, "relu1");
    auto* c2 = conv(c1, 8, 8, "conv2", 3);
    auto* res = b.op("Add", {c2, c0}, {}, "residual");
    auto* r = b.op("Relu", {res}, {}, "relu2");
    auto* pool = b.op("GlobalAveragePool", {r}, {}, "pool");
    auto* flat = b.op("Flatten", {pool}, {}, "flatten");
    auto* fc_w = b.constant("fc.weight", random_f32({8, 10}, 4));
    auto* logits = b.op("MatMul", {flat, fc_w}, {}, "fc");
    logits->set_type(pg::ir::TypeInfo::tensor(DataType::kFloat32,
                                              pg::ir::Shape{pg::ir::Dim::symbolic("batch"), pg::ir::Dim::known(10)}));
    b.output(logits);
    // An unused node, for `surgeon sanitize --cleanup`.
    b.op("Identity", {c1}, {}, "unused_identity");
    pg::onnx::save_model(*m, dir + "/small_cnn.onnx");
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
        return 2;
    }
    try {
        write_needs_constraints(argv[1]);
        write_small_cnn(argv[1]);
    } catch (const pg::Error& e) {
        std::fprintf(stderr, "pg_make_examples: %s\n", e.what());
        return pg::exit_code_for(e.kind());
    }
    return 0;
}
