// emu/policy.h: --layer-precisions parsing (regex and op:Type selectors, comma- and
// space-separated lists, quotes), and resolve() under each --precision-constraints mode.
#include <gtest/gtest.h>

#include "base/error.h"
#include "emu/policy.h"
#include "ir/builder.h"

namespace pg::emu {
namespace {

struct Fixture {
    std::unique_ptr<ir::Model> m = ir::new_model(17);
    const ir::Node* matmul = nullptr;
    const ir::Node* add = nullptr;
    const ir::Node* conv = nullptr;
    const ir::Node* shape = nullptr;
    const ir::Node* int_add = nullptr;
    Fixture() {
        ir::GraphBuilder b(*m->graph);
        ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{2, 2});
        ir::Value* w = b.constant_f32("w", {2, 2}, {1, 0, 0, 1});
        ir::Value* y = b.op("MatMul", {x, w}, {}, "MatMul_0");
        y = b.op("Add", {y, w}, {}, "Add");
        y = b.op("Relu", {y}, {}, "layer1.Conv");
        ir::Value* s = b.op("Shape", {y}, {}, "shape");
        ir::Value* s2 = b.op("Add", {s, s}, {}, "shape_add");
        s2->set_type(ir::TypeInfo::tensor(DataType::kInt64, ir::make_shape({2})));
        b.output(y);
        b.output(s2);
        for (const auto& n : m->graph->nodes()) {
            if (n->name == "MatMul_0") matmul = n.get();
            if (n->name == "Add") add = n.get();
            if (n->name == "layer1.Conv") conv = n.get();
            if (n->name == "shape") shape = n.get();
            if (n->name == "shape_add") int_add = n.get();
        }
    }
};

TEST(EmuPolicy, ParsesPolygraphySpellings) {
    auto l = parse_layer_precisions({"'.*Conv.*':fp16,'.*Gemm.*':fp32"});
    ASSERT_EQ(l.size(), 2u);
    EXPECT_EQ(l[0].selector, ".*Conv.*");
    EXPECT_EQ(l[0].precision, Precision::kFP16);
    EXPECT_EQ(l[1].precision, Precision::kFP32);
    l = parse_layer_precisions({"Add:float32", "Sub:float16"});  // space-separated values
    ASSERT_EQ(l.size(), 2u);
    EXPECT_EQ(l[1].selector, "Sub");
    EXPECT_EQ(l[1].precision, Precision::kFP16);
    l = parse_layer_precisions({"a{1,2}:bf16,op:MatMul:tf32"});  // comma inside braces
    ASSERT_EQ(l.size(), 2u);
    EXPECT_EQ(l[0].selector, "a{1,2}");
    EXPECT_TRUE(l[1].by_op);
    EXPECT_EQ(l[1].op_type, "MatMul");
    EXPECT_EQ(l[1].precision, Precision::kTF32);
}

TEST(EmuPolicy, RejectsMalformedEntries) {
    for (const char* bad : {"Add", "Add:", ":fp16", "Add:fp7", "[:fp16"}) {
        try {
            parse_layer_precisions({bad});
            ADD_FAILURE() << bad;
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::kUsage) << bad;
        }
    }
}

TEST(EmuPolicy, DefaultAppliesToFloatComputeOnly) {
    Fixture f;
    PrecisionPolicy p;
    p.default_precision = Precision::kFP16;
    EXPECT_EQ(p.resolve(*f.matmul), Precision::kFP16);
    EXPECT_EQ(p.resolve(*f.add), Precision::kFP16);
    EXPECT_EQ(p.resolve(*f.shape), Precision::kFP32);
    EXPECT_EQ(p.resolve(*f.int_add), Precision::kFP32);  // integer-typed output
    p.default_precision = Precision::kTF32;              // TF32: tensor-core ops only
    EXPECT_EQ(p.resolve(*f.matmul), Precision::kTF32);
    EXPECT_EQ(p.resolve(*f.add), Precision::kFP32);
}

TEST(EmuPolicy, SelectorsFullMatchAndLastWins) {
    Fixture f;
    PrecisionPolicy p;
    p.default_precision = Precision::kFP16;
    p.layers = parse_layer_precisions({"Ad:fp32", ".*Conv.*:bf16"});
    EXPECT_EQ(p.resolve(*f.add), Precision::kFP16);  // "Ad" does not fully match "Add"
    EXPECT_EQ(p.resolve(*f.conv), Precision::kBF16);
    p.layers = parse_layer_precisions({"Add:fp16,op:Add:fp32"});
    EXPECT_EQ(p.resolve(*f.add), Precision::kFP32);
    p.layers = parse_layer_precisions({"op:Add:fp32", "Add:bf16"});
    EXPECT_EQ(p.resolve(*f.add), Precision::kBF16);
    EXPECT_EQ(p.resolve(*f.matmul), Precision::kFP16);
}

TEST(EmuPolicy, ConstraintsOnOpsWithoutReducedForm) {
    Fixture f;
    PrecisionPolicy p;
    p.layers = parse_layer_precisions({"shape:fp16"});
    for (Constraints c : {Constraints::kNone, Constraints::kPrefer}) {
        p.constraints = c;
        EXPECT_EQ(p.resolve(*f.shape), Precision::kFP32);
    }
    p.constraints = Constraints::kObey;
    try {
        p.resolve(*f.shape);
        ADD_FAILURE();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
        EXPECT_NE(e.message().find("'shape' (Shape)"), std::string::npos) << e.message();
    }
    p.layers = parse_layer_precisions({"MatMul_0:fp16"});  // obey with a supported op: fine
    EXPECT_EQ(p.resolve(*f.matmul), Precision::kFP16);
    p.default_precision = Precision::kFP16;  // the default never trips obey
    EXPECT_EQ(p.resolve(*f.shape), Precision::kFP32);
    EXPECT_EQ(parse_constraints("prefer"), Constraints::kPrefer);
    EXPECT_THROW(parse_constraints("strict"), Error);
}

}  // namespace
}  // namespace pg::emu
