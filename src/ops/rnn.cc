// Recurrent layers: RNN, GRU and LSTM (forward, reverse, bidirectional; layout 0 and 1;
// sequence_lens; clip; custom activations). The plain kernel here computes in float64 (the
// oracle); float32 takes the fast path of rnn_f32.cc, diffed against the float64 run in
// tests/unit/ops_fastpath_test.cc; float16 and bfloat16 go through half_via_float to float32.
#include <algorithm>
#include <cmath>

#include "ir/graph.h"
#include "ops/dispatch.h"
#include "ops/half.h"
#include "ops/op_table.h"
#include "ops/rnn_config.h"
#include "ops/rnn_kernels.h"
#include "ops/tensor_util.h"

namespace pg::ops {

namespace rnn {

double Act::operator()(double x) const {
    switch (kind) {
        case Kind::kSigmoid:
            return 1.0 / (1.0 + std::exp(-x));
        case Kind::kTanh:
            return std::tanh(x);
        case Kind::kRelu:
            return x < 0 ? 0.0 : x;  // NaN stays NaN, as in Relu
        case Kind::kSoftsign:
            return x / (1.0 + std::fabs(x));
        case Kind::kSoftplus:
            return std::log1p(std::exp(x));
        case Kind::kLeakyRelu:
            return x >= 0 ? x : a * x;
        case Kind::kThresholdedRelu:
            return x > a ? x : 0.0;
        case Kind::kElu:
            return x >= 0 ? x : a * (std::exp(x) - 1.0);
        case Kind::kAffine:
            return a * x + b;
        case Kind::kScaledTanh:
            return a * std::tanh(b * x);
        case Kind::kHardSigmoid: {
            const double y = a * x + b;
            return std::isnan(y) ? y : std::max(0.0, std::min(1.0, y));  // NaN stays NaN
        }
    }
    return x;
}

void Act::apply(float* x, int64_t n) const {
    if (kind == Kind::kSigmoid) return sigmoid_f32(x, n);
    if (kind == Kind::kTanh) return tanh_f32(x, n);
    for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>((*this)(x[i]));
}

}  // namespace rnn

namespace {

using rnn::Act;
using rnn::acts_per_dir;
using rnn::Cell;
using rnn::num_gates;
using rnn::RnnConfig;

// Builds activation `name`, consuming its alpha/beta from the lists at *k (ONNX order).
Act make_activation(const std::string& name, const std::vector<float>& alphas,
                    const std::vector<float>& betas, size_t* ka, size_t* kb, float def_alpha,
                    float def_beta) {
    using K = Act::Kind;
    auto take = [](const std::vector<float>& v, size_t* k, float d) {
        return *k < v.size() ? v[(*k)++] : d;
    };
    if (name == "Sigmoid") return {K::kSigmoid};
    if (name == "Tanh") return {K::kTanh};
    if (name == "Relu") return {K::kRelu};
    if (name == "Softsign") return {K::kSoftsign};
    if (name == "Softplus") return {K::kSoftplus};
    const double a = take(alphas, ka, def_alpha);
    if (name == "LeakyRelu") return {K::kLeakyRelu, a};
    if (name == "ThresholdedRelu") return {K::kThresholdedRelu, a};
    if (name == "Elu") return {K::kElu, a};
    const double b = take(betas, kb, def_beta);
    if (name == "Affine") return {K::kAffine, a, b};
    if (name == "ScaledTanh") return {K::kScaledTanh, a, b};
    if (name == "HardSigmoid") return {K::kHardSigmoid, a, b};
    unsupported("recurrent activation '" + name + "'");
}

// Defaults of alpha/beta per activation name (ONNX's operator docs).
float default_alpha(const std::string& n) {
    if (n == "LeakyRelu") return 0.01f;
    if (n == "ThresholdedRelu" || n == "Elu" || n == "ScaledTanh" || n == "Affine") return 1.0f;
    if (n == "HardSigmoid") return 0.2f;
    return 0.0f;
}
float default_beta(const std::string& n) {
    if (n == "HardSigmoid") return 0.5f;
    if (n == "ScaledTanh") return 1.0f;
    return 0.0f;
}

RnnConfig parse_config(const Attrs& a, Cell cell) {
    RnnConfig c;
    c.cell = cell;
    c.hidden = a.require_int("hidden_size");
    if (c.hidden < 1 || c.hidden > (int64_t{1} << 40))  // gates x hidden stays inside int64
        fail("hidden_size must lie in [1, 2^40], got " + std::to_string(c.hidden));
    const std::string dir = a.get_string("direction", "forward");
    if (dir != "forward" && dir != "reverse" && dir != "bidirectional")
        fail("unknown direction '" + dir + "'");
    c.num_dirs = dir == "bidirectional" ? 2 : 1;
    c.reverse = dir == "reverse";
    c.layout_batch_first = a.get_flag("layout", false);
    c.clip = a.has("clip") ? a.get_float("clip", 0) : 0.0;
    c.input_forget = a.get_flag("input_forget", false);
    c.linear_before_reset = a.get_flag("linear_before_reset", false);
    std::vector<std::string> names = a.get_strings("activations");
    const std::vector<std::string> defaults =
        cell == Cell::kRnn   ? std::vector<std::string>{"Tanh"}
        : cell == Cell::kGru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                             : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
    const size_t need = static_cast<size_t>(acts_per_dir(cell) * c.num_dirs);
    if (names.empty())
        for (int d = 0; d < c.num_dirs; ++d)
            names.insert(names.end(), defaults.begin(), defaults.end());
    if (names.size() < need) fail("expected " + std::to_string(need) + " activations");
    const auto alphas = a.get_floats("activation_alpha"), betas = a.get_floats("activation_beta");
    size_t ka = 0, kb = 0;
    for (size_t i = 0; i < need; ++i)
        c.acts.push_back(make_activation(names[i], alphas, betas, &ka, &kb, default_alpha(names[i]),
                                         default_beta(names[i])));
    return c;
}

}  // namespace

rnn::RnnDims rnn::check_dims(const KernelContext& ctx, const RnnConfig& c) {
    RnnDims d;
    const Tensor& x = ctx.input(0);
    if (x.rank() != 3) fail("X must be 3-D");
    const int64_t d0 = x.dims()[0], d1 = x.dims()[1];
    d.seq = c.layout_batch_first ? d1 : d0;
    d.batch = c.layout_batch_first ? d0 : d1;
    d.input = x.dims()[2];
    const int64_t gh = num_gates(c.cell) * c.hidden, dirs = c.num_dirs;
    auto numel = [&](size_t i) { return static_cast<int64_t>(ctx.input(i).numel()); };
    if (numel(1) != dirs * gh * d.input) fail("W has the wrong shape");
    if (numel(2) != dirs * gh * c.hidden) fail("R has the wrong shape");
    if (ctx.has_input(3) && numel(3) != dirs * 2 * gh) fail("B has the wrong shape");
    d.lens.assign(static_cast<size_t>(d.batch), d.seq);
    if (ctx.has_input(4)) {
        d.lens = to_int64_vector(ctx.input(4), "sequence_lens");
        if (static_cast<int64_t>(d.lens.size()) != d.batch)
            fail("sequence_lens must hold one length per batch row");
        for (size_t b = 0; b < d.lens.size(); ++b)
            if (d.lens[b] < 0 || d.lens[b] > d.seq)
                fail("sequence_lens[" + std::to_string(b) + "] is " + std::to_string(d.lens[b]) +
                     ", outside [0, " + std::to_string(d.seq) + "] (the sequence length)");
    }
    const int64_t state = dirs * d.batch * c.hidden;
    if (ctx.has_input(5) && numel(5) != state) fail("initial_h has the wrong shape");
    if (c.cell == Cell::kLstm && ctx.has_input(6) && numel(6) != state)
        fail("initial_c has the wrong shape");
    if (c.cell == Cell::kLstm && ctx.has_input(7) && numel(7) != dirs * 3 * c.hidden)
        fail("P has the wrong shape");
    return d;
}

namespace {

// Inputs of one run, converted to double, indexed [dir][...].
struct RnnInputs {
    int64_t seq = 0, batch = 0, input = 0;
    std::vector<double> x;       // [seq][batch][input]
    std::vector<double> w, r;    // [dir][gates*H][input] and [dir][gates*H][H]
    std::vector<double> b;       // [dir][2*gates*H] (zeros when absent)
    std::vector<double> h0, c0;  // [dir][batch][H]
    std::vector<double> p;       // [dir][3*H] LSTM peepholes
    std::vector<int64_t> lens;   // [batch]
};

std::vector<double> as_doubles(const Tensor& t) {
    std::vector<double> v(t.numel());
    for (uint64_t i = 0; i < t.numel(); ++i) v[i] = t.element_as_double(i);
    return v;
}

// [batch][seq][...] -> [seq][batch][...] (and back with the same call on swapped dims).
std::vector<double> swap01(const std::vector<double>& v, int64_t d0, int64_t d1, int64_t inner) {
    std::vector<double> out(v.size());
    for (int64_t i = 0; i < d0; ++i)
        for (int64_t j = 0; j < d1; ++j)
            for (int64_t k = 0; k < inner; ++k)
                out[(j * d0 + i) * inner + k] = v[(i * d1 + j) * inner + k];
    return out;
}

RnnInputs read_inputs(KernelContext& ctx, const RnnConfig& c) {
    const rnn::RnnDims dims = rnn::check_dims(ctx, c);
    RnnInputs in;
    in.seq = dims.seq, in.batch = dims.batch, in.input = dims.input, in.lens = dims.lens;
    const Tensor& x = ctx.input(0);
    in.x = c.layout_batch_first ? swap01(as_doubles(x), in.batch, in.seq, in.input) : as_doubles(x);
    const int64_t gh = num_gates(c.cell) * c.hidden;
    in.w = as_doubles(ctx.input(1));
    in.r = as_doubles(ctx.input(2));
    in.b = ctx.has_input(3) ? as_doubles(ctx.input(3))
                            : std::vector<double>(static_cast<size_t>(c.num_dirs * 2 * gh), 0.0);
    auto state = [&](size_t i) {
        if (!ctx.has_input(i))
            return std::vector<double>(static_cast<size_t>(c.num_dirs * in.batch * c.hidden), 0.0);
        auto v = as_doubles(ctx.input(i));
        return c.layout_batch_first ? swap01(v, in.batch, c.num_dirs, c.hidden) : v;
    };
    in.h0 = state(5);
    if (c.cell == Cell::kLstm) {
        in.c0 = state(6);
        in.p = ctx.has_input(7)
                   ? as_doubles(ctx.input(7))
                   : std::vector<double>(static_cast<size_t>(c.num_dirs * 3 * c.hidden), 0.0);
    }
    return in;
}

double clipped(double v, double clip) {
    return clip > 0 ? std::max(-clip, std::min(clip, v)) : v;
}

// gates[g*H + j] = sum_k vec[k] * m[(g*H + j)][k] for a row-major matrix m of `cols` columns.
void matvec(const double* m, const double* vec, int64_t rows, int64_t cols, double* out) {
    for (int64_t r = 0; r < rows; ++r) {
        double s = 0;
        for (int64_t k = 0; k < cols; ++k) s += m[r * cols + k] * vec[k];
        out[r] += s;
    }
}

// One time step of one batch row for direction d. h and cst are updated in place.
void cell_step(const RnnConfig& c, const RnnInputs& in, int d, const double* xt, double* h,
               double* cst) {
    const int64_t H = c.hidden, G = num_gates(c.cell);
    const double* w = in.w.data() + d * G * H * in.input;
    const double* r = in.r.data() + d * G * H * H;
    const double* wb = in.b.data() + d * 2 * G * H;
    const double* rb = wb + G * H;
    const Act* act = &c.acts[static_cast<size_t>(d * acts_per_dir(c.cell))];
    std::vector<double> gx(static_cast<size_t>(G * H), 0.0), gh(static_cast<size_t>(G * H), 0.0);
    matvec(w, xt, G * H, in.input, gx.data());
    matvec(r, h, G * H, H, gh.data());
    if (c.cell == Cell::kRnn) {
        for (int64_t j = 0; j < H; ++j)
            h[j] = act[0](clipped(gx[j] + gh[j] + wb[j] + rb[j], c.clip));
    } else if (c.cell == Cell::kGru) {
        std::vector<double> z(H), rr(H), hh(H);
        for (int64_t j = 0; j < H; ++j) {
            z[j] = act[0](clipped(gx[j] + gh[j] + wb[j] + rb[j], c.clip));
            rr[j] = act[0](clipped(gx[H + j] + gh[H + j] + wb[H + j] + rb[H + j], c.clip));
        }
        if (!c.linear_before_reset) {  // (r * h) R_h^T
            std::vector<double> rh(H), tmp(static_cast<size_t>(H), 0.0);
            for (int64_t j = 0; j < H; ++j) rh[j] = rr[j] * h[j];
            matvec(r + 2 * H * H, rh.data(), H, H, tmp.data());
            for (int64_t j = 0; j < H; ++j)
                hh[j] =
                    act[1](clipped(gx[2 * H + j] + tmp[j] + rb[2 * H + j] + wb[2 * H + j], c.clip));
        } else {
            for (int64_t j = 0; j < H; ++j)
                hh[j] = act[1](
                    clipped(gx[2 * H + j] + rr[j] * (gh[2 * H + j] + rb[2 * H + j]) + wb[2 * H + j],
                            c.clip));
        }
        for (int64_t j = 0; j < H; ++j) h[j] = (1 - z[j]) * hh[j] + z[j] * h[j];
    } else {
        const double* p = in.p.data() + d * 3 * H;  // peepholes i, o, f
        for (int64_t j = 0; j < H; ++j) {
            const double i = act[0](clipped(gx[j] + gh[j] + wb[j] + rb[j] + p[j] * cst[j], c.clip));
            double f = act[0](clipped(gx[2 * H + j] + gh[2 * H + j] + wb[2 * H + j] +
                                          rb[2 * H + j] + p[2 * H + j] * cst[j],
                                      c.clip));
            if (c.input_forget) f = 1 - i;
            const double g = act[1](
                clipped(gx[3 * H + j] + gh[3 * H + j] + wb[3 * H + j] + rb[3 * H + j], c.clip));
            cst[j] = f * cst[j] + i * g;
            const double o = act[0](
                clipped(gx[H + j] + gh[H + j] + wb[H + j] + rb[H + j] + p[H + j] * cst[j], c.clip));
            h[j] = o * act[2](cst[j]);
        }
    }
}

struct RnnOutputs {
    std::vector<double> y, yh, yc;  // [seq][dir][batch][H], [dir][batch][H]
};

RnnOutputs run_rnn(const RnnConfig& c, const RnnInputs& in) {
    const int64_t H = c.hidden, B = in.batch, S = in.seq, D = c.num_dirs;
    RnnOutputs o;
    o.y.assign(static_cast<size_t>(S * D * B * H), 0.0);
    o.yh = in.h0;
    o.yc = c.cell == Cell::kLstm ? in.c0 : std::vector<double>();
    for (int d = 0; d < D; ++d) {
        const bool rev = c.reverse || d == 1;
        for (int64_t b = 0; b < B; ++b) {
            double* h = &o.yh[static_cast<size_t>((d * B + b) * H)];
            double* cs =
                c.cell == Cell::kLstm ? &o.yc[static_cast<size_t>((d * B + b) * H)] : nullptr;
            const int64_t len = std::min(in.lens[static_cast<size_t>(b)], S);
            for (int64_t step = 0; step < len; ++step) {
                const int64_t t = rev ? len - 1 - step : step;
                const size_t row = static_cast<size_t>(t * B + b);
                cell_step(c, in, d, &in.x[row * in.input], h, cs);
                std::copy(h, h + H, &o.y[static_cast<size_t>(((t * D + d) * B + b) * H)]);
            }
        }
    }
    return o;
}

template <typename T>
Tensor to_tensor(const std::vector<double>& v, DataType dt, std::vector<int64_t> dims) {
    Tensor t = Tensor::zeros(dt, std::move(dims));
    T* p = reinterpret_cast<T*>(t.mutable_bytes());
    for (size_t i = 0; i < v.size(); ++i) p[i] = static_cast<T>(v[i]);
    return t;
}

// Y from [S][D][B][H] to [B][S][D][H] (layout 1).
std::vector<double> y_batch_first(const std::vector<double>& y, int64_t S, int64_t D, int64_t B,
                                  int64_t H) {
    std::vector<double> out(y.size());
    for (int64_t s = 0; s < S; ++s)
        for (int64_t d = 0; d < D; ++d)
            for (int64_t b = 0; b < B; ++b)
                std::copy_n(&y[static_cast<size_t>(((s * D + d) * B + b) * H)], H,
                            &out[static_cast<size_t>(((b * S + s) * D + d) * H)]);
    return out;
}

void write_outputs(KernelContext& ctx, const RnnConfig& c, const RnnInputs& in,
                   const RnnOutputs& o) {
    const int64_t H = c.hidden, B = in.batch, S = in.seq, D = c.num_dirs;
    const DataType dt = ctx.input(0).dtype();
    const bool lstm = c.cell == Cell::kLstm;
    dispatch_float(dt, "RNN", [&]<typename T>() {
        if (c.layout_batch_first) {  // Y [B, S, D, H]; Y_h, Y_c [B, D, H]
            ctx.set_output(0, to_tensor<T>(y_batch_first(o.y, S, D, B, H), dt, {B, S, D, H}));
            ctx.set_output(1, to_tensor<T>(swap01(o.yh, D, B, H), dt, {B, D, H}));
            if (lstm) ctx.set_output(2, to_tensor<T>(swap01(o.yc, D, B, H), dt, {B, D, H}));
        } else {
            ctx.set_output(0, to_tensor<T>(o.y, dt, {S, D, B, H}));
            ctx.set_output(1, to_tensor<T>(o.yh, dt, {D, B, H}));
            if (lstm) ctx.set_output(2, to_tensor<T>(o.yc, dt, {D, B, H}));
        }
    });
}

MakeKernel rnn_kernel(Cell cell) {
    return [cell](const Attrs& a, int64_t) {
        RnnConfig c = parse_config(a, cell);
        return half_via_float([c](KernelContext& ctx) {
            if (rnn::f32_applies(ctx)) return rnn::run_f32(ctx, c);
            const RnnInputs in = read_inputs(ctx, c);
            write_outputs(ctx, c, in, run_rnn(c, in));
        });
    };
}

}  // namespace

void register_rnn_ops(OpTable& t) {
    using C = NumericContract;
    t.add("RNN", 7, C::kApproximate, rnn_kernel(Cell::kRnn));
    t.add("GRU", 7, C::kApproximate, rnn_kernel(Cell::kGru));
    t.add("LSTM", 7, C::kApproximate, rnn_kernel(Cell::kLstm));
}

}  // namespace pg::ops
