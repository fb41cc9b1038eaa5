// convert_float_to_fp16 (passes/convert_fp16.h): types after conversion, block lists, keep-io
// types, clamping, subgraphs, order, stability, and one test per converter bug of peers.md
// item 25 that the pass avoids.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "base/error.h"
#include "base/float16.h"
#include "ir/builder.h"
#include "ir/clone.h"
#include "passes/convert_fp16.h"
#include "passes/convert_fp16_rules.h"
#include "runners/ref_runner.h"

namespace pg {
namespace {

using passes::ConvertFp16Options;
constexpr DataType kF16 = DataType::kFloat16;
constexpr DataType kF32 = DataType::kFloat32;

ConvertFp16Options opts(bool keep_io = true, std::vector<std::string> ops = {},
                        std::vector<std::string> nodes = {}) {
    ConvertFp16Options o;
    o.keep_io_types = keep_io;
    o.op_block_list = std::move(ops);
    o.node_block_list = std::move(nodes);
    return o;
}

const ir::Node* node_named(const ir::Graph& g, const std::string& name) {
    for (const auto& n : g.nodes())
        if (n->name == name) return n.get();
    return nullptr;
}

std::vector<const ir::Node*> nodes_of(const ir::Graph& g, const std::string& op) {
    std::vector<const ir::Node*> out;
    for (const auto& n : g.nodes())
        if (n->op_type == op) out.push_back(n.get());
    return out;
}

int64_t cast_to(const ir::Node* n) {
    return n->find_attribute("to")->i;
}

// Every node reads only values defined earlier (graph inputs, initializers, outer scope, earlier
// nodes), and the float inputs that follow a node's type agree on float16 vs float32.
void expect_valid(const ir::Graph& g, const passes::fp16::DtypeMap& dt) {
    std::set<const ir::Value*> ready(g.inputs().begin(), g.inputs().end());
    ready.insert(g.initializers().begin(), g.initializers().end());
    for (const auto& n : g.nodes()) {
        std::set<DataType> follow;
        for (size_t i = 0; i < n->inputs().size(); ++i) {
            const ir::Value* v = n->input(i);
            if (!v) continue;
            EXPECT_TRUE(ready.count(v) || v->graph() != &g)
                << n->describe() << " reads '" << v->name() << "' before it is produced";
            const DataType t = dt.count(v) ? dt.at(v) : DataType::kUndefined;
            if (passes::fp16::input_slot_kind(*n, i) == passes::fp16::SlotKind::kFollow &&
                (t == kF16 || t == kF32))
                follow.insert(t);
            if (passes::fp16::input_slot_kind(*n, i) == passes::fp16::SlotKind::kFixed32 &&
                t == kF16) {
                EXPECT_EQ(t, kF32) << n->describe() << " slot " << i;
            }
        }
        EXPECT_LE(follow.size(), 1u) << n->describe() << " mixes float16 and float32 inputs";
        for (ir::Value* o : n->outputs()) ready.insert(o);
        for (ir::Graph* sub : n->subgraphs()) expect_valid(*sub, dt);
    }
}

void expect_valid(const ir::Model& m) {
    passes::fp16::DtypeMap dt;
    passes::fp16::infer_dtypes(*m.graph, dt);
    expect_valid(*m.graph, dt);
}

// x[1,2,4,4] -> Conv(w, b) -> Relu -> Reshape -> MatMul(k) -> Sigmoid -> y[1,8]
std::unique_ptr<ir::Model> conv_model() {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", kF32, {1, 2, 4, 4});
    std::vector<float> w(2 * 2 * 3 * 3);
    for (size_t i = 0; i < w.size(); ++i) w[i] = 0.05f * static_cast<float>(i % 7) - 0.1f;
    ir::Value* c = b.op(
        "Conv", {x, b.constant_f32("w", {2, 2, 3, 3}, w), b.constant_f32("b", {2}, {0.1f, -0.2f})},
        ir::attrs(ir::Attribute::make_ints("pads", {1, 1, 1, 1})), "conv");
    ir::Value* r = b.op("Relu", {c}, {}, "relu");
    r->set_type(ir::TypeInfo::tensor(kF32, ir::make_shape({1, 2, 4, 4})));
    r->in_value_info = true;
    ir::Value* shape = b.constant(
        "shape", Tensor::from_values(DataType::kInt64, {2}, std::vector<int64_t>{1, 32}));
    ir::Value* flat = b.op("Reshape", {r, shape}, {}, "reshape");
    std::vector<float> k(32 * 8);
    for (size_t i = 0; i < k.size(); ++i) k[i] = 0.01f * static_cast<float>(i % 11);
    ir::Value* mm = b.op("MatMul", {flat, b.constant_f32("k", {32, 8}, k)}, {}, "matmul");
    b.output(b.op("Sigmoid", {mm}, {}, "sigmoid"), kF32, {1, 8});
    return m;
}

Tensor ramp(const std::vector<int64_t>& dims) {
    uint64_t n = 1;
    for (int64_t d : dims) n *= static_cast<uint64_t>(d);
    std::vector<float> v(n);
    for (uint64_t i = 0; i < n; ++i) v[i] = 0.1f * static_cast<float>(i % 10);
    return Tensor::from_values(kF32, dims, v);
}

// Runs `m` on the reference interpreter; the first output as float32 values.
std::vector<float> run_ref(const ir::Model& m, const std::map<std::string, Tensor>& feeds) {
    runners::RefRunnerOptions o;
    o.session.threads = 1;
    runners::RefRunner runner(m, o);
    const Tensor t = runner.infer(feeds).at(0).second;
    std::vector<float> out(t.numel());
    for (uint64_t i = 0; i < t.numel(); ++i) out[i] = static_cast<float>(t.element_as_double(i));
    return out;
}

void expect_close(const std::vector<float>& a, const std::vector<float>& b, float tol) {
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], tol) << "element " << i;
}

TEST(ConvertFp16, TypesAfterConversionWithoutKeepIo) {
    auto m = conv_model();
    auto r = passes::convert_float_to_fp16(*m, opts(false));
    const ir::Graph& g = *m->graph;
    EXPECT_EQ(g.inputs()[0]->type().elem_type, kF16);
    EXPECT_EQ(g.outputs()[0]->type().elem_type, kF16);
    EXPECT_EQ(g.find_value("w")->initializer()->tensor.dtype(), kF16);
    EXPECT_EQ(g.find_value("shape")->initializer()->tensor.dtype(), DataType::kInt64);
    EXPECT_EQ(g.find_value("relu_out")->type().elem_type, kF16);  // value_info updated
    EXPECT_EQ(r.initializers, 3u);
    EXPECT_EQ(r.casts_inserted, 0u);
    EXPECT_TRUE(nodes_of(g, "Cast").empty());
    expect_valid(*m);
}

TEST(ConvertFp16, KeepIoTypesPreservesNamesAndDtypes) {
    auto m = conv_model();
    passes::convert_float_to_fp16(*m, opts(true));
    const ir::Graph& g = *m->graph;
    ASSERT_EQ(g.inputs().size(), 1u);
    ASSERT_EQ(g.outputs().size(), 1u);
    EXPECT_EQ(g.inputs()[0]->name(), "x");
    EXPECT_EQ(g.inputs()[0]->type().elem_type, kF32);
    EXPECT_EQ(g.outputs()[0]->name(), "sigmoid_out");
    EXPECT_EQ(g.outputs()[0]->type().elem_type, kF32);
    EXPECT_EQ(g.outputs()[0]->type().shape, ir::make_shape({1, 8}));
    const ir::Node* in_cast = node_named(g, "graph_input_cast0");
    const ir::Node* out_cast = node_named(g, "graph_output_cast0");
    ASSERT_TRUE(in_cast && out_cast);
    EXPECT_EQ(cast_to(in_cast), static_cast<int64_t>(kF16));
    EXPECT_EQ(in_cast->output(0)->name(), "graph_input_cast_0");
    EXPECT_EQ(cast_to(out_cast), static_cast<int64_t>(kF32));
    EXPECT_EQ(out_cast->input(0)->name(), "graph_output_cast_0");
    EXPECT_EQ(out_cast->input(0)->type().elem_type, kF16);
    EXPECT_EQ(g.nodes().front().get(), in_cast);  // onnxconverter-common#208: order
    expect_valid(*m);
}

TEST(ConvertFp16, NodeBlockListProducesCastPair) {
    auto m = conv_model();
    auto r = passes::convert_float_to_fp16(*m, opts(true, {}, {"relu", "nope"}));
    const ir::Graph& g = *m->graph;
    const ir::Node* relu = node_named(g, "relu");
    ASSERT_EQ(relu->input(0)->producer()->op_type, "Cast");
    EXPECT_EQ(cast_to(relu->input(0)->producer()), static_cast<int64_t>(kF32));
    EXPECT_EQ(relu->output(0)->type().elem_type, kF32);
    ASSERT_EQ(relu->output(0)->uses().size(), 1u);
    const ir::Node* after = relu->output(0)->uses()[0].node;
    EXPECT_EQ(after->op_type, "Cast");
    EXPECT_EQ(cast_to(after), static_cast<int64_t>(kF16));
    EXPECT_EQ(r.nodes_blocked, 1u);
    EXPECT_EQ(r.unknown_node_names, std::vector<std::string>{"nope"});
    EXPECT_EQ(nodes_of(g, "Cast").size(), 4u);  // input, output, and the pair around relu
    expect_valid(*m);
}

TEST(ConvertFp16, OpBlockListKeepsWeightsOfBlockedNodesInFloat32) {
    auto m = conv_model();
    passes::convert_float_to_fp16(*m, opts(true, {"MatMul", "Sigmoid"}));
    const ir::Graph& g = *m->graph;
    EXPECT_EQ(g.find_value("k")->initializer()->tensor.dtype(), kF32);
    EXPECT_EQ(g.find_value("w")->initializer()->tensor.dtype(), kF16);
    // Sigmoid's float32 output is the graph output: no cast needed before it.
    EXPECT_EQ(g.outputs()[0]->producer()->op_type, "Sigmoid");
    EXPECT_EQ(g.outputs()[0]->name(), "sigmoid_out");
    expect_valid(*m);
}

TEST(ConvertFp16, DefaultOpBlockListIsPolygraphys) {
    const auto& l = passes::default_fp16_op_block_list();
    EXPECT_NE(std::find(l.begin(), l.end(), "Resize"), l.end());
    EXPECT_NE(std::find(l.begin(), l.end(), "TopK"), l.end());
    EXPECT_EQ(l.size(), 27u);
}

// A graph output that a float32 node also reads keeps its name (no dangling or renamed output).
TEST(ConvertFp16, OutputReadByBlockedNodeKeepsItsName) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", kF32, std::vector<int64_t>{4});
    ir::Value* r = b.op("Relu", {x}, {}, "relu");
    b.output(r, kF32, std::vector<int64_t>{4});
    b.output(b.op("Neg", {r}, {}, "neg"), kF32, std::vector<int64_t>{4});
    passes::convert_float_to_fp16(*m, opts(true, {}, {"neg"}));
    const ir::Graph& g = *m->graph;
    ASSERT_EQ(g.outputs().size(), 2u);
    EXPECT_EQ(g.outputs()[0]->name(), "relu_out");
    EXPECT_EQ(g.outputs()[1]->name(), "neg_out");
    EXPECT_EQ(g.outputs()[0]->type().elem_type, kF32);
    EXPECT_EQ(g.outputs()[1]->producer()->op_type, "Neg");
    expect_valid(*m);
}

TEST(ConvertFp16, NoDuplicateCastsForSharedValue) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", kF32, std::vector<int64_t>{4});
    ir::Value* s = b.op("Add", {b.op("Relu", {x}), b.op("Neg", {x})});
    b.output(b.op("Add", {s, b.op("Abs", {x})}), kF32, {4});
    auto r = passes::convert_float_to_fp16(*m, opts(true));
    EXPECT_EQ(r.casts_inserted, 2u);
    EXPECT_EQ(x->uses().size(), 1u);
    expect_valid(*m);
}

TEST(ConvertFp16, ClampsToFormatRange) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", kF32, std::vector<int64_t>{5});
    ir::Value* w = b.constant_f32("w", {5}, {1e5f, -7e4f, 1e-9f, 1.5f, INFINITY});
    b.output(b.op("Mul", {x, w}), kF32, {5});
    auto r = passes::convert_float_to_fp16(*m, opts(true));
    EXPECT_EQ(r.clamped, 2u);
    EXPECT_EQ(r.flushed, 1u);
    const Tensor& t = w->initializer()->tensor;
    ASSERT_EQ(t.dtype(), kF16);
    const auto* h = t.data<uint16_t>();
    EXPECT_EQ(half_bits_to_float(h[0]), 65504.0f);
    EXPECT_EQ(half_bits_to_float(h[1]), -65504.0f);
    EXPECT_EQ(half_bits_to_float(h[2]), 0.0f);
    EXPECT_EQ(half_bits_to_float(h[3]), 1.5f);
    EXPECT_TRUE(std::isinf(half_bits_to_float(h[4])));  // infinities are kept
}

TEST(ConvertFp16, BFloat16ClampsOnlyBeyondItsRange) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", kF32, std::vector<int64_t>{3});
    ir::Value* w = b.constant_f32("w", {3}, {1e5f, 3.4e38f, -1e30f});
    b.output(b.op("Mul", {x, w}), kF32, {3});
    ConvertFp16Options o = opts(true);
    o.target = DataType::kBFloat16;
    auto r = passes::convert_float_to_fp16(*m, o);
    EXPECT_EQ(r.clamped, 1u);  // 3.4e38 would round to infinity in bfloat16
    const auto* h = w->initializer()->tensor.data<uint16_t>();
    EXPECT_EQ(w->initializer()->tensor.dtype(), DataType::kBFloat16);
    EXPECT_NEAR(bfloat16_bits_to_float(h[0]), 1e5f, 1e3f);
    EXPECT_TRUE(std::isfinite(bfloat16_bits_to_float(h[1])));
    EXPECT_EQ(x->uses()[0].node->find_attribute("to")->i,
              static_cast<int64_t>(DataType::kBFloat16));
}

// microsoft/onnxruntime#8327, #14827, onnxconverter-common#306, #207: Resize 'scales' converted
// to float16; onnxconverter-common#272 / onnxruntime#17447: a Cast on an omitted 'roi' or
// 'scales' makes "both sizes and scales" present.
TEST(ConvertFp16, ResizeScalesStayFloat32AndOmittedInputsStayOmitted) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", kF32, {1, 1, 2, 2});
    ir::Value* scales = b.constant_f32("scales", {4}, {1, 1, 2, 2});
    ir::Value* y = b.op("Resize", {x, nullptr, scales}, {}, "resize");
    b.output(b.op("Relu", {y}), kF32, {1, 1, 4, 4});
    passes::convert_float_to_fp16(*m, opts(true));  // empty op block list: Resize converted
    const ir::Node* resize = node_named(*m->graph, "resize");
    EXPECT_EQ(resize->input(1), nullptr);
    EXPECT_EQ(resize->input(2), scales);
    EXPECT_EQ(scales->initializer()->tensor.dtype(), kF32);
    EXPECT_EQ(resize->input(0)->name(), "graph_input_cast_0");
    EXPECT_EQ(resize->inputs().size(), 3u);
    expect_valid(*m);
}

TEST(ConvertFp16, ResizeScalesComputedInTheGraphGetACastToFloat32) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", kF32, {1, 1, 2, 2});
    ir::Value* s = b.input("s", kF32, std::vector<int64_t>{2});
    ir::Value* scales = b.op("Concat", {b.constant_f32("ones", {2}, {1, 1}), s},
                             ir::attrs(ir::Attribute::make_int("axis", 0)), "concat");
    b.output(b.op("Resize", {x, nullptr, scales}, {}, "resize"), kF32, {1, 1, 4, 4});
    passes::convert_float_to_fp16(*m, opts(false));
    const ir::Node* resize = node_named(*m->graph, "resize");
    ASSERT_EQ(resize->input(2)->producer()->op_type, "Cast");
    EXPECT_EQ(cast_to(resize->input(2)->producer()), static_cast<int64_t>(kF32));
    expect_valid(*m);
}

// onnxconverter-common#320, PRs #326/#328, onnxruntime#2974: Cast(to=FLOAT) left unpatched
// while its output is typed float16.
TEST(ConvertFp16, CastToFloatIsRetargeted) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* i = b.input("i", DataType::kInt64, std::vector<int64_t>{3});
    ir::Value* f = b.op("Cast", {i}, ir::attrs(ir::Attribute::make_int("to", 1)), "cast");
    f->set_type(ir::TypeInfo::tensor(kF32, ir::make_shape({3})));
    f->in_value_info = true;
    ir::Value* x = b.input("x", kF32, std::vector<int64_t>{3});
    b.output(b.op("Add", {f, x}), kF32, {3});
    passes::convert_float_to_fp16(*m, opts(true));
    const ir::Node* cast = node_named(*m->graph, "cast");
    EXPECT_EQ(cast_to(cast), static_cast<int64_t>(kF16));
    EXPECT_EQ(f->type().elem_type, kF16);
    expect_valid(*m);
}

// A Cast(to=FLOAT) feeding only a float32 consumer keeps its target (no Cast chains).
TEST(ConvertFp16, CastToFloatFeedingBlockedNodeStaysFloat32) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* i = b.input("i", DataType::kInt64, std::vector<int64_t>{3});
    ir::Value* f = b.op("Cast", {i}, ir::attrs(ir::Attribute::make_int("to", 1)), "cast");
    b.output(b.op("Relu", {f}, {}, "relu"), kF32, {3});
    auto r = passes::convert_float_to_fp16(*m, opts(true, {}, {"relu"}));
    EXPECT_EQ(cast_to(node_named(*m->graph, "cast")), static_cast<int64_t>(kF32));
    EXPECT_EQ(r.casts_inserted, 0u);
}

// onnxconverter-common PR #326 (comment): blocked nodes got cast32 on inputs that were int64 or
// float64. Only float32 values are cast.
TEST(ConvertFp16, BlockedNodeNonFloatInputsGetNoCast) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", kF32, {4, 2});
    ir::Value* idx = b.input("idx", DataType::kInt64, std::vector<int64_t>{3});
    ir::Value* d = b.input("d", DataType::kFloat64, std::vector<int64_t>{3});
    ir::Value* g = b.op("Gather", {b.op("Relu", {x}), idx}, {}, "gather");
    b.output(g, kF32, {3, 2});
    b.output(b.op("Abs", {d}, {}, "abs"), DataType::kFloat64, {3});
    passes::convert_float_to_fp16(*m, opts(false, {"Gather", "Abs"}));
    const ir::Graph& gr = *m->graph;
    EXPECT_EQ(node_named(gr, "gather")->input(1), idx);
    EXPECT_EQ(node_named(gr, "abs")->input(0), d);
    EXPECT_EQ(d->type().elem_type, DataType::kFloat64);
    EXPECT_EQ(cast_to(node_named(gr, "gather")->input(0)->producer()), static_cast<int64_t>(kF32));
    expect_valid(*m);
}

// BitCast reinterprets bits: its float32 input must stay float32 and its float32 output is cast.
TEST(ConvertFp16, BitCastKeepsItsWidth) {
    auto m = ir::new_model(26);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", kF32, std::vector<int64_t>{3});
    ir::Value* i = b.input("i", DataType::kInt32, std::vector<int64_t>{3});
    ir::Value* to_int =
        b.op("BitCast", {b.op("Relu", {x})}, ir::attrs(ir::Attribute::make_int("to", 6)), "to_int");
    ir::Value* to_float =
        b.op("BitCast", {i}, ir::attrs(ir::Attribute::make_int("to", 1)), "to_float");
    b.output(to_int, DataType::kInt32, std::vector<int64_t>{3});
    b.output(b.op("Neg", {to_float}, {}, "neg"), kF32, std::vector<int64_t>{3});
    passes::convert_float_to_fp16(*m, opts(false));
    const ir::Node* ti = node_named(*m->graph, "to_int");
    EXPECT_EQ(cast_to(ti->input(0)->producer()), static_cast<int64_t>(kF32));
    EXPECT_EQ(node_named(*m->graph, "to_float")->find_attribute("to")->i, 1);
    EXPECT_EQ(cast_to(node_named(*m->graph, "neg")->input(0)->producer()),
              static_cast<int64_t>(kF16));
    expect_valid(*m);
}

// Ops whose schema allows only float32 (Celu) or whose output type is an attribute (HannWindow)
// stay float32 with casts around them.
TEST(ConvertFp16, Float32OnlyOpsStayFloat32) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", kF32, std::vector<int64_t>{4});
    ir::Value* size =
        b.constant("size", Tensor::from_values(DataType::kInt64, {}, std::vector<int64_t>{4}));
    ir::Value* win = b.op("HannWindow", {size}, {}, "hann");
    ir::Value* c = b.op("Celu", {b.op("Mul", {x, win}, {}, "mul")}, {}, "celu");
    b.output(b.op("Neg", {c}, {}, "neg"), kF32, std::vector<int64_t>{4});
    passes::convert_float_to_fp16(*m, opts(false));
    const ir::Graph& g = *m->graph;
    EXPECT_EQ(cast_to(node_named(g, "mul")->input(1)->producer()), static_cast<int64_t>(kF16));
    EXPECT_EQ(cast_to(node_named(g, "celu")->input(0)->producer()), static_cast<int64_t>(kF32));
    EXPECT_EQ(cast_to(node_named(g, "neg")->input(0)->producer()), static_cast<int64_t>(kF16));
    EXPECT_EQ(node_named(g, "hann")->input(0), size);
    expect_valid(*m);
}

// LayerNormalization's Mean / InvStdDev are float32 (type U) whatever X is; converters that
// typed them float16 produced invalid models.
TEST(ConvertFp16, LayerNormalizationStatisticsStayFloat32) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", kF32, {2, 4});
    ir::Node* ln = b.op_multi(
        "LayerNormalization",
        {x, b.constant_f32("g", {4}, {1, 2, 3, 4}), b.constant_f32("bias", {4}, {0, 0, 1, 1})}, 3,
        ir::attrs(ir::Attribute::make_float("epsilon", 1e-5f)), "ln");
    ln->output(1)->set_type(ir::TypeInfo::tensor(kF32, ir::make_shape({2, 1})));
    ln->output(1)->in_value_info = true;
    b.output(ln->output(0), kF32, {2, 4});
    b.output(b.op("Neg", {ln->output(1)}, {}, "neg"), kF32, {2, 1});
    passes::convert_float_to_fp16(*m, opts(true));
    EXPECT_EQ(ln->output(1)->type().elem_type, kF32);
    const ir::Node* neg = node_named(*m->graph, "neg");
    EXPECT_EQ(neg->input(0)->producer()->op_type, "Cast");
    EXPECT_EQ(ln->find_attribute("epsilon")->f, 1e-5f);
    expect_valid(*m);
}

// Constant(value_float) is float32 by definition: it becomes a float16 'value' tensor.
TEST(ConvertFp16, ConstantFloatAttributesBecomeTensors) {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", kF32, std::vector<int64_t>{2});
    ir::Value* c =
        b.op("Constant", {}, ir::attrs(ir::Attribute::make_float("value_float", 2.5f)), "const");
    ir::Value* z = b.op("ConstantOfShape", {b.op("Shape", {x})}, {}, "zeros");
    b.output(b.op("Add", {b.op("Mul", {x, c}), z}), kF32, {2});
    auto r = passes::convert_float_to_fp16(*m, opts(true));
    const ir::Node* cn = node_named(*m->graph, "const");
    ASSERT_EQ(cn->attributes.size(), 1u);
    EXPECT_EQ(cn->attributes[0].name, "value");
    EXPECT_EQ(cn->attributes[0].tensors[0].tensor.dtype(), kF16);
    const ir::Node* zn = node_named(*m->graph, "zeros");
    ASSERT_NE(zn->find_attribute("value"), nullptr);
    EXPECT_EQ(zn->find_attribute("value")->tensors[0].tensor.dtype(), kF16);
    EXPECT_EQ(r.attributes, 2u);
    expect_valid(*m);
}

// If branches read an outer value and hold their own initializers; all convert consistently.
std::unique_ptr<ir::Model> if_model() {
    auto m = ir::new_model(17);
    ir::Graph& g = *m->graph;
    ir::GraphBuilder b(g);
    ir::Value* x = b.input("x", kF32, std::vector<int64_t>{3});
    ir::Value* cond = b.input("cond", DataType::kBool, std::vector<int64_t>{});
    ir::Value* r = b.op("Relu", {x}, {}, "relu");
    ir::Node* iff = b.op_multi("If", {cond}, 1, {}, "if");
    for (const char* branch : {"then_branch", "else_branch"}) {
        ir::Attribute a;
        a.name = branch;
        a.type = ir::AttrType::kGraph;
        a.graphs.push_back(std::make_unique<ir::Graph>(&g));
        ir::Graph& sub = *a.graphs[0];
        sub.set_owner_node(iff);
        ir::GraphBuilder sb(sub);
        const float k = std::string(branch) == "then_branch" ? 2.0f : -1.0f;
        ir::Value* out = sb.op("Mul", {r, sb.constant_f32(std::string(branch) + "_k", {}, {k})}, {},
                               std::string(branch) + "_mul");
        sb.output(out, kF32, {3});
        iff->attributes.push_back(std::move(a));
    }
    b.output(b.op("Neg", {iff->output(0)}, {}, "neg"), kF32, {3});
    return m;
}

TEST(ConvertFp16, SubgraphsConvertConsistently) {
    auto m = if_model();
    auto ref = ir::clone_model(*m);
    passes::convert_float_to_fp16(*m, opts(true));
    const ir::Node* iff = node_named(*m->graph, "if");
    for (ir::Graph* sub : iff->subgraphs()) {
        EXPECT_EQ(sub->outputs()[0]->type().elem_type, kF16);
        EXPECT_EQ(sub->initializers()[0]->initializer()->tensor.dtype(), kF16);
        EXPECT_TRUE(nodes_of(*sub, "Cast").empty());  // the outer Relu output is float16 already
    }
    expect_valid(*m);
    for (bool c : {true, false}) {
        std::map<std::string, Tensor> feeds = {
            {"x", Tensor::from_values(kF32, {3}, std::vector<float>{-1.0f, 0.5f, 3.0f})},
            {"cond", Tensor::from_values(DataType::kBool, {}, std::vector<uint8_t>{c})}};
        expect_close(run_ref(*m, feeds), run_ref(*ref, feeds), 1e-3f);
    }
}

TEST(ConvertFp16, BlockedIfKeepsItsBodyFloat32AndCastsOuterValues) {
    auto m = if_model();
    passes::convert_float_to_fp16(*m, opts(true, {}, {"if"}));
    const ir::Node* iff = node_named(*m->graph, "if");
    for (ir::Graph* sub : iff->subgraphs()) {
        EXPECT_EQ(sub->initializers()[0]->initializer()->tensor.dtype(), kF32);
        const auto casts = nodes_of(*sub, "Cast");
        ASSERT_EQ(casts.size(), 1u);  // the outer float16 Relu output, cast inside the body
        EXPECT_EQ(cast_to(casts[0]), static_cast<int64_t>(kF32));
    }
    EXPECT_EQ(iff->output(0)->uses()[0].node->op_type, "Cast");
    expect_valid(*m);
}

TEST(ConvertFp16, ResultIsToposortedAndRunsClose) {
    auto m = conv_model();
    auto ref = ir::clone_model(*m);
    passes::convert_float_to_fp16(*m, opts(true, {}, {"relu"}));
    expect_valid(*m);
    std::map<std::string, Tensor> feeds = {{"x", ramp({1, 2, 4, 4})}};
    expect_close(run_ref(*m, feeds), run_ref(*ref, feeds), 2e-3f);
}

TEST(ConvertFp16, ConvertingTwiceIsStable) {
    for (bool keep_io : {true, false}) {
        auto m = conv_model();
        passes::convert_float_to_fp16(*m, opts(keep_io, {"MatMul"}, {"relu"}));
        const size_t nodes = m->graph->num_nodes();
        auto r = passes::convert_float_to_fp16(*m, opts(keep_io, {"MatMul"}, {"relu"}));
        EXPECT_EQ(m->graph->num_nodes(), nodes);
        EXPECT_EQ(r.casts_inserted, 0u);
        EXPECT_EQ(r.initializers, 0u);
        EXPECT_EQ(r.attributes, 0u);
        expect_valid(*m);
    }
}

TEST(ConvertFp16, RejectsOtherTargets) {
    auto m = conv_model();
    ConvertFp16Options o;
    o.target = DataType::kFloat64;
    EXPECT_THROW(passes::convert_float_to_fp16(*m, o), Error);
}

}  // namespace
}  // namespace pg
