#include "zoo/zoo.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>
#include <string>
#include <utility>

#include "base/error.h"
#include "ir/builder.h"

namespace pg::zoo {
namespace {

using ir::Attribute;
using ir::Value;

constexpr int64_t kOpset = 17;

Tensor uniform_tensor(std::vector<int64_t> dims, float lo, float hi, std::mt19937& rng) {
    std::uniform_real_distribution<float> u(lo, hi);
    size_t n = 1;
    for (int64_t d : dims) n *= static_cast<size_t>(d);
    std::vector<float> v(n);
    for (float& x : v) x = u(rng);
    return Tensor::from_values(DataType::kFloat32, std::move(dims), v);
}

// A model under construction: the builder, the weight generator and fresh names.
class Net {
  public:
    Net(const std::string& name, uint32_t seed)
        : model_(ir::new_model(kOpset, name)), b_(*model_->graph), rng_(seed) {}

    ir::GraphBuilder& b() { return b_; }
    // A float32 initializer uniform in [lo, hi).
    Value* uniform(const std::string& base, std::vector<int64_t> dims, float lo, float hi) {
        return b_.constant(fresh(base), uniform_tensor(std::move(dims), lo, hi, rng_));
    }
    // A weight uniform in +-bound.
    Value* weight(const std::string& base, std::vector<int64_t> dims, double bound) {
        const auto f = static_cast<float>(bound);
        return uniform(base, std::move(dims), -f, f);
    }
    // A [in, out] MatMul weight with unit-variance scaling (bound sqrt(3 / in)).
    Value* dense(const std::string& base, int64_t in, int64_t out) {
        return weight(base, {in, out}, std::sqrt(3.0 / static_cast<double>(in)));
    }
    Value* ints(const std::string& base, std::vector<int64_t> v) {
        const auto n = static_cast<int64_t>(v.size());
        return b_.constant(fresh(base), Tensor::from_values(DataType::kInt64, {n}, v));
    }
    Value* scalar(const std::string& base, float v) {
        return b_.constant_f32(fresh(base), {}, {v});
    }
    std::unique_ptr<ir::Model> finish(Value* out, const std::vector<int64_t>& dims) {
        b_.output(out, DataType::kFloat32, dims);
        return std::move(model_);
    }

  private:
    std::string fresh(const std::string& base) { return base + "_" + std::to_string(counter_++); }

    std::unique_ptr<ir::Model> model_;
    ir::GraphBuilder b_;
    std::mt19937 rng_;
    int counter_ = 0;
};

struct ConvSpec {
    int64_t cin = 0, cout = 0, kernel = 1, stride = 1, group = 1;
};

// Conv (no bias, "same" padding) followed by BatchNormalization with mild random statistics.
Value* conv_bn(Net& net, Value* x, const ConvSpec& s) {
    const int64_t fan_in = s.cin / s.group * s.kernel * s.kernel;
    Value* w = net.weight("conv_w", {s.cout, s.cin / s.group, s.kernel, s.kernel},
                          std::sqrt(6.0 / static_cast<double>(fan_in)));
    const int64_t p = s.kernel / 2;
    Value* y = net.b().op("Conv", {x, w},
                          ir::attrs(Attribute::make_ints("kernel_shape", {s.kernel, s.kernel}),
                                    Attribute::make_ints("strides", {s.stride, s.stride}),
                                    Attribute::make_ints("pads", {p, p, p, p}),
                                    Attribute::make_int("group", s.group)));
    Value* scale = net.uniform("bn_scale", {s.cout}, 0.5f, 1.5f);
    Value* bias = net.uniform("bn_bias", {s.cout}, -0.1f, 0.1f);
    Value* mean = net.uniform("bn_mean", {s.cout}, -0.1f, 0.1f);
    Value* var = net.uniform("bn_var", {s.cout}, 0.5f, 1.5f);
    return net.b().op("BatchNormalization", {y, scale, bias, mean, var});
}

Value* relu(Net& net, Value* x) {
    return net.b().op("Relu", {x});
}

// GlobalAveragePool, Flatten, Gemm with a [classes, channels] weight (transB = 1).
Value* classifier(Net& net, Value* x, int64_t channels, int64_t classes) {
    Value* flat = net.b().op("Flatten", {net.b().op("GlobalAveragePool", {x})});
    Value* w =
        net.weight("fc_w", {classes, channels}, std::sqrt(3.0 / static_cast<double>(channels)));
    Value* bias = net.uniform("fc_b", {classes}, -0.1f, 0.1f);
    return net.b().op("Gemm", {flat, w, bias}, ir::attrs(Attribute::make_int("transB", 1)));
}

Value* basic_block(Net& net, Value* x, int64_t cin, int64_t cout, int64_t stride) {
    Value* a = relu(net, conv_bn(net, x, {cin, cout, 3, stride}));
    a = conv_bn(net, a, {cout, cout, 3, 1});
    Value* shortcut = x;
    if (stride != 1 || cin != cout) shortcut = conv_bn(net, x, {cin, cout, 1, stride});
    return relu(net, net.b().op("Add", {a, shortcut}));
}

Value* relu6(Net& net, Value* x, Value* lo, Value* hi) {
    return net.b().op("Clip", {x, lo, hi});
}

// Q, K or V projected and split into heads: [1, seq, d] -> [1, heads, seq, dh] (perm 0213) or
// [1, heads, dh, seq] (perm 0231, for K).
Value* to_heads(Net& net, Value* h, Value* w, Value* shape, std::vector<int64_t> perm) {
    Value* r = net.b().op("Reshape", {net.b().op("MatMul", {h, w}), shape});
    return net.b().op("Transpose", {r}, ir::attrs(Attribute::make_ints("perm", std::move(perm))));
}

Value* layer_norm(Net& net, Value* x, int64_t d) {
    Value* gamma = net.uniform("ln_gamma", {d}, 0.9f, 1.1f);
    Value* beta = net.uniform("ln_beta", {d}, -0.1f, 0.1f);
    return net.b().op("LayerNormalization", {x, gamma, beta},
                      ir::attrs(Attribute::make_int("axis", -1)));
}

Value* attention(Net& net, Value* h, const TransformerOptions& o) {
    const int64_t dh = o.d_model / o.heads;
    Value* heads_shape = net.ints("heads_shape", {1, o.seq, o.heads, dh});
    Value* q = to_heads(net, h, net.dense("wq", o.d_model, o.d_model), heads_shape, {0, 2, 1, 3});
    Value* k = to_heads(net, h, net.dense("wk", o.d_model, o.d_model), heads_shape, {0, 2, 3, 1});
    Value* v = to_heads(net, h, net.dense("wv", o.d_model, o.d_model), heads_shape, {0, 2, 1, 3});
    Value* scale =
        net.scalar("scale", static_cast<float>(1.0 / std::sqrt(static_cast<double>(dh))));
    Value* scores = net.b().op("Mul", {net.b().op("MatMul", {q, k}), scale});
    Value* probs = net.b().op("Softmax", {scores}, ir::attrs(Attribute::make_int("axis", -1)));
    Value* ctx = net.b().op("Transpose", {net.b().op("MatMul", {probs, v})},
                            ir::attrs(Attribute::make_ints("perm", {0, 2, 1, 3})));
    ctx = net.b().op("Reshape", {ctx, net.ints("model_shape", {1, o.seq, o.d_model})});
    Value* out = net.b().op("MatMul", {ctx, net.dense("wo", o.d_model, o.d_model)});
    return net.b().op("Add", {out, net.uniform("bo", {o.d_model}, -0.1f, 0.1f)});
}

// 0.5 * x * (1 + erf(x / sqrt(2))).
Value* gelu(Net& net, Value* x) {
    Value* e = net.b().op("Erf", {net.b().op("Div", {x, net.scalar("sqrt2", std::sqrt(2.0f))})});
    Value* y = net.b().op("Mul", {x, net.b().op("Add", {e, net.scalar("one", 1.0f)})});
    return net.b().op("Mul", {y, net.scalar("half", 0.5f)});
}

Value* feed_forward(Net& net, Value* h, const TransformerOptions& o, bool use_gelu) {
    Value* f = net.b().op("MatMul", {h, net.dense("w1", o.d_model, o.ffn)});
    f = net.b().op("Add", {f, net.uniform("b1", {o.ffn}, -0.1f, 0.1f)});
    f = use_gelu ? gelu(net, f) : relu(net, f);
    f = net.b().op("MatMul", {f, net.dense("w2", o.ffn, o.d_model)});
    return net.b().op("Add", {f, net.uniform("b2", {o.d_model}, -0.1f, 0.1f)});
}

// Chain op k: which op, and whether it takes a constant second input.
std::pair<const char*, bool> chain_op(int64_t k) {
    static const std::pair<const char*, bool> kOps[] = {{"Add", true},      {"Mul", true},
                                                        {"Tanh", false},    {"Sub", true},
                                                        {"Sigmoid", false}, {"Abs", false}};
    return kOps[k % 6];
}

std::vector<int64_t> int64_values(const Tensor& t) {
    std::vector<int64_t> dims(t.numel());
    for (uint64_t i = 0; i < t.numel(); ++i) dims[i] = t.data<int64_t>()[i];
    return dims;
}

// The dims a ConstantOfShape node would produce if it is a float32 weight we can replace.
std::optional<std::vector<int64_t>> replaceable_dims(const ir::Node& n) {
    if (n.op_type != "ConstantOfShape" || !ir::is_default_domain(n.domain)) return std::nullopt;
    const Value* shape = n.input(0);
    if (!shape || !shape->is_initializer() || !n.output(0)) return std::nullopt;
    const Tensor& t = shape->initializer()->tensor;
    if (t.dtype() != DataType::kInt64 || !t.has_data()) return std::nullopt;
    const Attribute* value = n.find_attribute("value");
    if (value && (value->tensors.empty() || value->tensors[0].tensor.dtype() != DataType::kFloat32))
        return std::nullopt;
    return int64_values(t);
}

// True when v is a BatchNormalization scale or variance (inputs 1 and 4), which must be positive.
bool is_batch_norm_scale_or_var(const Value* v) {
    return std::any_of(v->uses().begin(), v->uses().end(), [](const ir::Use& u) {
        return u.node->op_type == "BatchNormalization" && (u.index == 1 || u.index == 4);
    });
}

// Uniform +-sqrt(3 / fan_in) for rank >= 2; vectors in [0.5, 1.5) when they must be positive,
// +-0.1 otherwise (biases, BatchNorm offsets and means).
Tensor random_weight(std::vector<int64_t> dims, bool positive, std::mt19937& rng) {
    if (dims.size() < 2 && positive) return uniform_tensor(std::move(dims), 0.5f, 1.5f, rng);
    if (dims.size() < 2) return uniform_tensor(std::move(dims), -0.1f, 0.1f, rng);
    int64_t fan_in = 1;
    for (size_t i = 1; i < dims.size(); ++i) fan_in *= dims[i];
    const auto bound =
        static_cast<float>(std::sqrt(3.0 / static_cast<double>(std::max<int64_t>(fan_in, 1))));
    return uniform_tensor(std::move(dims), -bound, bound, rng);
}

bool is_graph_input_or_output(const ir::Graph& g, const Value* v) {
    return std::count(g.inputs().begin(), g.inputs().end(), v) ||
           std::count(g.outputs().begin(), g.outputs().end(), v);
}

void replace_with_random(ir::Graph& g, ir::Node* n, std::vector<int64_t> dims, std::mt19937& rng) {
    Value* out = n->output(0);
    Value* shape = n->input(0);
    const std::string name = out->name();
    ir::NamedTensor t;
    t.name = g.unique_name(name + "_random");
    t.tensor = random_weight(std::move(dims), is_batch_norm_scale_or_var(out), rng);
    Value* w = g.add_initializer(std::move(t));
    w->set_type(
        ir::TypeInfo::tensor(DataType::kFloat32, ir::make_shape(w->initializer()->tensor.dims())));
    g.replace_all_uses_with(out, w);
    g.remove_node(n);
    g.rename_value(w, name);
    if (shape->uses().empty() && !is_graph_input_or_output(g, shape)) g.remove_value(shape);
}

}  // namespace

std::unique_ptr<ir::Model> resnet_style(const ResNetOptions& o) {
    Net net("resnet_style", o.seed);
    Value* x = net.b().input("image", DataType::kFloat32, {1, 3, o.image, o.image});
    Value* y = relu(net, conv_bn(net, x, {3, o.width, 7, 2}));
    y = net.b().op("MaxPool", {y},
                   ir::attrs(Attribute::make_ints("kernel_shape", {3, 3}),
                             Attribute::make_ints("strides", {2, 2}),
                             Attribute::make_ints("pads", {1, 1, 1, 1})));
    int64_t c = o.width;
    for (size_t s = 0; s < o.blocks.size(); ++s) {
        const int64_t cout = o.width << s;
        for (int j = 0; j < o.blocks[s]; ++j) {
            y = basic_block(net, y, c, cout, s > 0 && j == 0 ? 2 : 1);
            c = cout;
        }
    }
    return net.finish(classifier(net, y, c, o.classes), {1, o.classes});
}

std::unique_ptr<ir::Model> mobilenet_style(const MobileNetOptions& o) {
    static const std::pair<int64_t, int64_t> kBlocks[] = {
        {2, 1},  {4, 2},  {4, 1},  {8, 2},  {8, 1},  {16, 2}, {16, 1},
        {16, 1}, {16, 1}, {16, 1}, {16, 1}, {32, 2}, {32, 1}};
    Net net("mobilenet_style", o.seed);
    Value* x = net.b().input("image", DataType::kFloat32, {1, 3, o.image, o.image});
    Value* lo = net.scalar("relu6_min", 0.0f);
    Value* hi = net.scalar("relu6_max", 6.0f);
    Value* y = relu6(net, conv_bn(net, x, {3, o.width, 3, 2}), lo, hi);
    int64_t c = o.width;
    for (const auto& [mult, stride] : kBlocks) {
        y = relu6(net, conv_bn(net, y, {c, c, 3, stride, c}), lo, hi);
        y = relu6(net, conv_bn(net, y, {c, o.width * mult, 1, 1}), lo, hi);
        c = o.width * mult;
    }
    return net.finish(classifier(net, y, c, o.classes), {1, o.classes});
}

std::unique_ptr<ir::Model> transformer_encoder(const TransformerOptions& o) {
    if (o.heads <= 0 || o.d_model % o.heads != 0)
        throw Error(ErrorKind::kInvalidInput,
                    "transformer_encoder: d_model must be a multiple of heads");
    Net net("transformer_encoder", o.seed);
    Value* x = net.b().input("x", DataType::kFloat32, {1, o.seq, o.d_model});
    for (int64_t l = 0; l < o.layers; ++l) {
        x = net.b().op("Add", {x, attention(net, layer_norm(net, x, o.d_model), o)});
        x = net.b().op("Add", {x, feed_forward(net, layer_norm(net, x, o.d_model), o, l % 2 == 1)});
    }
    return net.finish(x, {1, o.seq, o.d_model});
}

std::unique_ptr<ir::Model> lstm_model(const LstmOptions& o) {
    Net net("lstm_model", o.seed);
    Value* x = net.b().input("x", DataType::kFloat32, {o.seq, o.batch, o.input});
    const double bound = 1.0 / std::sqrt(static_cast<double>(o.hidden));
    Value* w = net.weight("lstm_w", {1, 4 * o.hidden, o.input}, bound);
    Value* r = net.weight("lstm_r", {1, 4 * o.hidden, o.hidden}, bound);
    Value* bias = net.weight("lstm_b", {1, 8 * o.hidden}, bound);
    ir::Node* lstm = net.b().op_multi("LSTM", {x, w, r, bias}, 1,
                                      ir::attrs(Attribute::make_int("hidden_size", o.hidden)));
    Value* y = net.b().op("MatMul", {lstm->output(0), net.dense("head_w", o.hidden, o.outputs)});
    return net.finish(y, {o.seq, 1, o.batch, o.outputs});
}

std::unique_ptr<ir::Model> chain_model(int64_t nodes, int64_t width, uint32_t seed) {
    Net net("chain_" + std::to_string(nodes), seed);
    Value* x = net.b().input("x", DataType::kFloat32, {1, width});
    for (int64_t k = 0; k < nodes; ++k) {
        const auto [op, has_constant] = chain_op(k);
        if (has_constant)
            x = net.b().op(op, {x, net.uniform("c", {width}, -1.0f, 1.0f)});
        else
            x = net.b().op(op, {x});
    }
    return net.finish(x, {1, width});
}

std::unique_ptr<ir::Model> planted_overflow_model(const PlantedOptions& o) {
    if (o.nodes < 12) throw Error(ErrorKind::kUsage, "planted_overflow_model: at least 12 nodes");
    Net net("planted_" + std::to_string(o.nodes), o.seed);
    Value* x = net.b().input("x", DataType::kFloat32, {1, o.width});
    // Plants start (with their Sigmoid) at about 1/3 and 2/3 of the chain; 3 nodes each.
    const int64_t plant_at[2] = {o.nodes / 3, 2 * o.nodes / 3};
    // Error-preserving filler (no squashing activations, so a planted error reaches the output).
    static const char* kOps[] = {"Mul", "Add", "Abs", "Sub", "Neg"};
    int64_t k = 0, op_index = 0;
    while (k < o.nodes) {
        const int plant = k == plant_at[0] ? 1 : k == plant_at[1] ? 2 : 0;
        if (plant != 0) {
            const std::string p = "plant" + std::to_string(plant);
            Value* big = net.scalar(p + "_big", 65504.0f);
            x = net.b().op("Sigmoid", {x}, {}, p + "_sigmoid");
            x = net.b().op("Add", {x, big}, {}, p + "_add");
            x = net.b().op("Sub", {x, big}, {}, p + "_sub");
            k += 3;
            continue;
        }
        const std::string op = kOps[op_index++ % 5];
        const std::string name = "n" + std::to_string(k) + "_" + op;
        if (op == "Mul")
            x = net.b().op(op, {x, net.uniform("c", {o.width}, 0.8f, 1.25f)}, {}, name);
        else if (op == "Add" || op == "Sub")
            x = net.b().op(op, {x, net.uniform("c", {o.width}, -0.5f, 0.5f)}, {}, name);
        else
            x = net.b().op(op, {x}, {}, name);
        ++k;
    }
    return net.finish(x, {1, o.width});
}

std::vector<std::string> planted_node_names() {
    return {"plant1_add", "plant1_sub", "plant2_add", "plant2_sub"};
}

int randomize_constant_of_shape_weights(ir::Model& model, uint32_t seed) {
    ir::Graph& g = *model.graph;
    std::mt19937 rng(seed);
    std::vector<ir::Node*> nodes;
    for (const auto& n : g.nodes()) nodes.push_back(n.get());
    int replaced = 0;
    for (ir::Node* n : nodes) {
        auto dims = replaceable_dims(*n);
        if (!dims) continue;
        replace_with_random(g, n, std::move(*dims), rng);
        ++replaced;
    }
    return replaced;
}

}  // namespace pg::zoo
