// Recurrent layers: RNN, GRU and LSTM (forward, reverse, bidirectional; layout 0 and 1;
// sequence_lens; clip; custom activations). Computed in float64 (the plain loops); float32 takes
// a fast path (X W^T for all steps at once through gemm_fast, vectorizable recurrent products),
// diffed against the float64 run in tests/unit/ops_fastpath_test.cc; float16 and bfloat16
// through half_via_float.
#include <algorithm>
#include <cmath>
#include <functional>

#include "ir/graph.h"
#include "ops/dispatch.h"
#include "ops/gemm_kernels.h"
#include "ops/half.h"
#include "ops/op_table.h"
#include "ops/tensor_util.h"

namespace pg::ops {

namespace {

using Act = std::function<double(double)>;

// Builds activation `name`, consuming its alpha/beta from the lists at *k (ONNX order).
Act make_activation(const std::string& name, const std::vector<float>& alphas,
                    const std::vector<float>& betas, size_t* ka, size_t* kb, float def_alpha,
                    float def_beta) {
    auto take = [](const std::vector<float>& v, size_t* k, float d) {
        return *k < v.size() ? v[(*k)++] : d;
    };
    if (name == "Sigmoid") return [](double x) { return 1.0 / (1.0 + std::exp(-x)); };
    if (name == "Tanh") return [](double x) { return std::tanh(x); };
    if (name == "Relu") return [](double x) { return x > 0 ? x : 0.0; };
    if (name == "Softsign") return [](double x) { return x / (1.0 + std::fabs(x)); };
    if (name == "Softplus") return [](double x) { return std::log1p(std::exp(x)); };
    const double a = take(alphas, ka, def_alpha);
    if (name == "LeakyRelu") return [a](double x) { return x >= 0 ? x : a * x; };
    if (name == "ThresholdedRelu") return [a](double x) { return x > a ? x : 0.0; };
    if (name == "Elu") return [a](double x) { return x >= 0 ? x : a * (std::exp(x) - 1.0); };
    const double b = take(betas, kb, def_beta);
    if (name == "Affine") return [a, b](double x) { return a * x + b; };
    if (name == "ScaledTanh") return [a, b](double x) { return a * std::tanh(b * x); };
    if (name == "HardSigmoid")
        return [a, b](double x) { return std::max(0.0, std::min(1.0, a * x + b)); };
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

enum class Cell { kRnn, kGru, kLstm };

struct RnnConfig {
    Cell cell;
    int64_t hidden = 0;
    int num_dirs = 1;
    bool reverse = false;  // single direction "reverse"
    bool layout_batch_first = false;
    double clip = 0;  // 0 = none
    bool input_forget = false;
    bool linear_before_reset = false;
    std::vector<Act> acts;  // per direction: gates.size() activations
};

int num_gates(Cell c) {
    return c == Cell::kRnn ? 1 : c == Cell::kGru ? 3 : 4;
}
int acts_per_dir(Cell c) {
    return c == Cell::kRnn ? 1 : c == Cell::kGru ? 2 : 3;
}

RnnConfig parse_config(const Attrs& a, Cell cell) {
    RnnConfig c;
    c.cell = cell;
    c.hidden = a.require_int("hidden_size");
    const std::string dir = a.get_string("direction", "forward");
    if (dir != "forward" && dir != "reverse" && dir != "bidirectional")
        fail("unknown direction '" + dir + "'");
    c.num_dirs = dir == "bidirectional" ? 2 : 1;
    c.reverse = dir == "reverse";
    c.layout_batch_first = a.get_int("layout", 0) != 0;
    c.clip = a.has("clip") ? a.get_float("clip", 0) : 0.0;
    c.input_forget = a.get_int("input_forget", 0) != 0;
    c.linear_before_reset = a.get_int("linear_before_reset", 0) != 0;
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

// Inputs of one run, converted to double, indexed [dir][...].
struct RnnInputs {
    int64_t seq = 0, batch = 0, input = 0;
    std::vector<double> x;       // [seq][batch][input]
    std::vector<double> w, r;    // [dir][gates*H][input] and [dir][gates*H][H]
    std::vector<double> b;       // [dir][2*gates*H] (zeros when absent)
    std::vector<double> h0, c0;  // [dir][batch][H]
    std::vector<double> p;       // [dir][3*H] LSTM peepholes
    std::vector<int64_t> lens;   // [batch]
    // float32 fast path (empty otherwise): X W^T for every step and direction, computed up
    // front by gemm_fast in float32, [dir][seq][batch][gates*H]; the recurrent products then
    // use matvec_fast. float64 runs the plain loops (tests diff the two).
    std::vector<double> xw;
};

std::vector<double> as_doubles(const Tensor& t) {
    if (t.dtype() == DataType::kFloat32) {
        const float* p = t.data<float>();
        return std::vector<double>(p, p + t.numel());
    }
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
    RnnInputs in;
    const Tensor& x = ctx.input(0);
    if (x.rank() != 3) fail("X must be 3-D");
    const int64_t d0 = x.dims()[0], d1 = x.dims()[1];
    in.seq = c.layout_batch_first ? d1 : d0;
    in.batch = c.layout_batch_first ? d0 : d1;
    in.input = x.dims()[2];
    in.x = c.layout_batch_first ? swap01(as_doubles(x), d0, d1, in.input) : as_doubles(x);
    const int64_t gh = num_gates(c.cell) * c.hidden;
    in.w = as_doubles(ctx.input(1));
    in.r = as_doubles(ctx.input(2));
    if (static_cast<int64_t>(in.w.size()) != c.num_dirs * gh * in.input)
        fail("W has the wrong shape");
    if (static_cast<int64_t>(in.r.size()) != c.num_dirs * gh * c.hidden)
        fail("R has the wrong shape");
    in.b = ctx.has_input(3) ? as_doubles(ctx.input(3))
                            : std::vector<double>(static_cast<size_t>(c.num_dirs * 2 * gh), 0.0);
    if (static_cast<int64_t>(in.b.size()) != c.num_dirs * 2 * gh) fail("B has the wrong shape");
    in.lens.assign(static_cast<size_t>(in.batch), in.seq);
    if (ctx.has_input(4)) in.lens = to_int64_vector(ctx.input(4), "sequence_lens");
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

// matvec with four partial sums per row (vectorizable; the fast path's recurrent product). An
// AVX2 clone (no FMA, so the same sums) is picked at load time when the CPU has it.
__attribute__((target_clones("avx2", "default"))) void matvec_fast(const double* m,
                                                                   const double* vec, int64_t rows,
                                                                   int64_t cols, double* out) {
    for (int64_t r = 0; r < rows; ++r) {
        const double* row = m + r * cols;
        double s[4] = {0, 0, 0, 0};
        int64_t k = 0;
        for (; k + 4 <= cols; k += 4)
            for (int u = 0; u < 4; ++u) s[u] += row[k + u] * vec[k + u];
        for (; k < cols; ++k) s[0] += row[k] * vec[k];
        out[r] += (s[0] + s[1]) + (s[2] + s[3]);
    }
}

// X W^T of every (direction, step, batch row) in float32 through gemm_fast.
std::vector<double> input_products(const RnnConfig& c, const RnnInputs& in, ThreadPool* pool) {
    const int64_t gh = num_gates(c.cell) * c.hidden, rows = in.seq * in.batch;
    std::vector<float> xs(in.x.begin(), in.x.end()), ws(in.w.begin(), in.w.end());
    std::vector<float> out(static_cast<size_t>(c.num_dirs * rows * gh));
    for (int d = 0; d < c.num_dirs; ++d) {
        GemmArgs<float> g;
        g.m = rows, g.n = gh, g.k = in.input, g.a = xs.data(), g.lda = in.input;
        g.b = ws.data() + d * gh * in.input, g.ldb = in.input, g.trans_b = true;
        g.c = out.data() + d * rows * gh, g.ldc = gh;
        gemm_fast(g, pool);
    }
    return std::vector<double>(out.begin(), out.end());
}

// One time step of one batch row for direction d. h and cst are updated in place. `xw` (fast
// path) holds this step's X W^T; otherwise it is computed from xt.
void cell_step(const RnnConfig& c, const RnnInputs& in, int d, const double* xt, const double* xw,
               double* h, double* cst, ThreadPool* pool) {
    const int64_t H = c.hidden, G = num_gates(c.cell);
    const double* w = in.w.data() + d * G * H * in.input;
    const double* r = in.r.data() + d * G * H * H;
    const double* wb = in.b.data() + d * 2 * G * H;
    const double* rb = wb + G * H;
    const Act* act = &c.acts[static_cast<size_t>(d * acts_per_dir(c.cell))];
    std::vector<double> gx(static_cast<size_t>(G * H), 0.0), gh(static_cast<size_t>(G * H), 0.0);
    if (xw) {
        std::copy(xw, xw + G * H, gx.begin());
        // Rows split over the pool when the product is large enough (each row's sum unchanged).
        constexpr int64_t kRowsPerTask = 64;
        run_parallel(G * H * H >= (1 << 15) ? pool : nullptr,
                     (G * H + kRowsPerTask - 1) / kRowsPerTask, [&](int64_t b, int64_t e) {
                         const int64_t r0 = b * kRowsPerTask,
                                       r1 = std::min(G * H, e * kRowsPerTask);
                         matvec_fast(r + r0 * H, h, r1 - r0, H, gh.data() + r0);
                     });
    } else {
        matvec(w, xt, G * H, in.input, gx.data());
        matvec(r, h, G * H, H, gh.data());
    }
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
            (xw ? matvec_fast : matvec)(r + 2 * H * H, rh.data(), H, H, tmp.data());
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

RnnOutputs run_rnn(const RnnConfig& c, const RnnInputs& in, ThreadPool* pool) {
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
                const double* xw =
                    in.xw.empty()
                        ? nullptr
                        : &in.xw[(static_cast<size_t>(d) * S * B + row) * num_gates(c.cell) * H];
                cell_step(c, in, d, &in.x[row * in.input], xw, h, cs, pool);
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
            RnnInputs in = read_inputs(ctx, c);
            if (ctx.input(0).dtype() == DataType::kFloat32)
                in.xw = input_products(c, in, ctx.pool());
            write_outputs(ctx, c, in, run_rnn(c, in, in.xw.empty() ? nullptr : ctx.pool()));
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
