// The float32 fast path of RNN, GRU and LSTM (see rnn_config.h). X W^T plus the biases of every
// step comes from one gemm_fast per direction up front; then each chain (direction, batch row)
// runs its steps: the recurrent product R h through matvec_add_f32 and the gate arithmetic of
// rnn.cc's cell_step in float32 with vector activations (rnn_kernels.h). Inputs are read in
// place and outputs written in place in either layout (no float64 copies, no transposes).
// Several chains run in parallel on the pool. A lone chain with a large R runs on a team of
// threads (base/team.h) whose members each take a range of hidden units (a row's sum does not
// depend on the split) and meet once per step (GRU without linear_before_reset: twice). The LSTM
// computes its input products per chain, two steps ahead (LstmInputs: matvecs_add_f32, no
// packed copy of W).
// tests/unit/ops_fastpath_test.cc diffs this path against the float64 plain kernel.
#include <algorithm>
#include <cstring>
#include <vector>

#include "base/team.h"
#include "base/thread_pool.h"
#include "ops/gemm_kernels.h"
#include "ops/rnn_config.h"
#include "ops/rnn_kernels.h"

namespace pg::ops::rnn {

namespace {

// Float32 views of one run's inputs and where each (step, direction, batch row) lives.
struct Problem {
    const RnnConfig& c;
    RnnDims dims;
    int64_t S = 0, B = 0, I = 0, H = 0, G = 0, D = 0;
    const float* x = nullptr;
    const float* w = nullptr;   // [D][G*H][I]
    const float* r = nullptr;   // [D][G*H][H]
    const float* b = nullptr;   // [D][2*G*H] or nullptr
    const float* p = nullptr;   // [D][3*H] or nullptr (LSTM peepholes i, o, f)
    const float* h0 = nullptr;  // initial_h as laid out (the layout of Y_h) or nullptr
    const float* c0 = nullptr;  // initial_c likewise

    // Row of X (and of the input products) for step t of batch row bb.
    int64_t x_row(int64_t t, int64_t bb) const {
        return c.layout_batch_first ? bb * S + t : t * B + bb;
    }
    // Offset of chain (d, bb) in Y_h, Y_c and the initial states.
    int64_t state_at(int64_t d, int64_t bb) const {
        return (c.layout_batch_first ? bb * D + d : d * B + bb) * H;
    }
    // Offset of step t of chain (d, bb) in Y.
    int64_t y_at(int64_t t, int64_t d, int64_t bb) const {
        return (c.layout_batch_first ? (bb * S + t) * D + d : (t * D + d) * B + bb) * H;
    }
};

const float* data_or_null(const KernelContext& ctx, size_t i) {
    return ctx.has_input(i) ? ctx.input(i).data<float>() : nullptr;
}

// X W^T + Wb + Rb for every direction and row of X: [D][S * B][G * H]. GRU with
// linear_before_reset leaves the h gate's Rb out (it is scaled by the reset gate).
std::vector<float> input_products(const Problem& q, ThreadPool* pool) {
    const int64_t gh = q.G * q.H, rows = q.S * q.B;
    std::vector<float> out(static_cast<size_t>(q.D * rows * gh), 0.0f);
    const bool keep_rbh = !(q.c.cell == Cell::kGru && q.c.linear_before_reset);
    std::vector<float> bias(static_cast<size_t>(gh));
    for (int64_t d = 0; d < q.D; ++d) {
        float* o = out.data() + d * rows * gh;
        if (rows > 0 && q.I > 0) {
            GemmArgs<float> g;
            g.m = rows, g.n = gh, g.k = q.I, g.a = q.x, g.lda = q.I;
            g.b = q.w + d * gh * q.I, g.ldb = q.I, g.trans_b = true;
            g.c = o, g.ldc = gh;
            gemm_fast(g, pool);
        }
        if (!q.b) continue;
        const float* wb = q.b + d * 2 * gh;
        const float* rb = wb + gh;
        for (int64_t k = 0; k < gh; ++k)
            bias[static_cast<size_t>(k)] = keep_rbh || k < 2 * q.H ? wb[k] + rb[k] : wb[k];
        for (int64_t i = 0; i < rows; ++i)
            for (int64_t k = 0; k < gh; ++k) o[i * gh + k] += bias[static_cast<size_t>(k)];
    }
    return out;
}

void clip_f32(float* v, int64_t n, double clip) {
    if (clip <= 0) return;
    const float c = static_cast<float>(clip);
    for (int64_t i = 0; i < n; ++i) v[i] = std::max(-c, std::min(c, v[i]));
}

// One LSTM step for hidden units [j0, j1): the gate sums from the input products xw (this step's
// row of LstmInputs) plus R h over those units' rows, the gate arithmetic, the cell state cs[j]
// and h_out[j]. g holds 4 * (j1 - j0) floats (i, o, f, c), tmp j1 - j0. A unit's values do not
// depend on the range it is computed in.
void lstm_units(const Problem& q, int64_t d, const float* r, const Act* act, const float* xw,
                const float* h, float* cs, float* h_out, int64_t j0, int64_t j1, float* g,
                float* tmp) {
    const int64_t H = q.H, n = j1 - j0;
    float *gi = g, *go = g + n, *gf = g + 2 * n, *gc = g + 3 * n;
    for (int64_t k = 0; k < 4; ++k) {
        std::copy(xw + k * H + j0, xw + k * H + j1, g + k * n);
        matvec_add_f32(r + (k * H + j0) * H, h, n, H, g + k * n);
    }
    const float* p = q.p ? q.p + d * 3 * H + j0 : nullptr;  // peepholes i, o, f
    cs += j0;
    if (p)
        for (int64_t j = 0; j < n; ++j) gi[j] += p[j] * cs[j], gf[j] += p[2 * H + j] * cs[j];
    clip_f32(gi, n, q.c.clip);
    clip_f32(gf, 2 * n, q.c.clip);  // f and c
    act[0].apply(gi, n);
    act[0].apply(gf, n);
    act[1].apply(gc, n);
    if (q.c.input_forget)
        for (int64_t j = 0; j < n; ++j) gf[j] = 1 - gi[j];
    for (int64_t j = 0; j < n; ++j) cs[j] = gf[j] * cs[j] + gi[j] * gc[j];
    if (p)
        for (int64_t j = 0; j < n; ++j) go[j] += p[H + j] * cs[j];
    clip_f32(go, n, q.c.clip);
    act[0].apply(go, n);
    std::copy(cs, cs + n, tmp);
    act[2].apply(tmp, n);
    for (int64_t j = 0; j < n; ++j) h_out[j0 + j] = go[j] * tmp[j];
}

// First hidden unit of member `part` of `parts` (a multiple of 8; H for part == parts).
int64_t first_unit(int part, int parts, int64_t H) {
    return part >= parts ? H : H * part / parts / 8 * 8;
}

// The most members a chain's team takes when each step reads `rows` rows of R (H columns): one
// per 32 hidden units once the product outweighs a barrier per step, else one.
int team_parts(int64_t rows, int64_t H) {
    return rows * H >= (1 << 15) ? static_cast<int>(std::max<int64_t>(1, H / 32)) : 1;
}

// What the steps of chain (d, bb) share: its activations, its length and direction, and h
// double-buffered (step s reads h_in(s) and writes h_out(s), so a team meets once per step).
struct ChainState {
    ChainState(const Problem& q, int64_t d, int64_t bb, const float* h0)
        : H(q.H),
          act(&q.c.acts[static_cast<size_t>(d * acts_per_dir(q.c.cell))]),
          len(std::min(q.dims.lens[static_cast<size_t>(bb)], q.S)),
          rev(q.c.reverse || d == 1),
          hb(h0, h0 + q.H) {
        hb.resize(static_cast<size_t>(2 * H));
    }
    int64_t time(int64_t step) const { return rev ? len - 1 - step : step; }
    const float* h_in(int64_t step) const { return hb.data() + step % 2 * H; }
    float* h_out(int64_t step) { return hb.data() + (step + 1) % 2 * H; }
    // The state after the last step, into h.
    void final_h(float* h) const { std::copy(h_in(len), h_in(len) + H, h); }

    const int64_t H;
    const Act* act;
    const int64_t len;
    const bool rev;
    std::vector<float> hb;
};

// The input products of LSTM chain (d, bb), kChunk steps at a time: row k of a chunk holds
// x_t W^T + Wb + Rb (4 H: the i, o, f and c rows) for the chunk's step k (t = its time). Two
// buffers: chunk c lives in buffer c % 2, and chunk c + 1 is computed during chunk c's first step
// (its rows split over that step's members), so the chain holds 2 * kChunk rows instead of one
// per step (the whole sequence took 64 KiB on the zoo LSTM, more than its activations). A row's
// sum does not depend on the chunk or the split (matvecs_add_f32), so the bits are those of one
// product over the whole sequence.
class LstmInputs {
  public:
    static constexpr int64_t kChunk = 2;

    LstmInputs(const Problem& q, int64_t d, int64_t bb, const ChainState& st)
        : q_(q),
          st_(st),
          gh_(4 * q.H),
          bb_(bb),
          w_(q.w + d * gh_ * q.I),
          bias_(q.b ? q.b + d * 2 * gh_ : nullptr),  // Wb, then Rb
          buf_(static_cast<size_t>(2 * kChunk * gh_)) {}

    // Chunk 0, its rows split over the pool when the product is large enough.
    void first(ThreadPool* pool) {
        if (!pool || gh_ * q_.I * kChunk < (1 << 16)) return fill(0, 0, gh_);
        run_parallel(pool, (gh_ + 31) / 32,
                     [&](int64_t b, int64_t e) { fill(0, b * 32, std::min(gh_, e * 32)); });
    }
    // Called at every step by each of its members: the first step of a chunk computes the next
    // chunk's rows [part's share).
    void step(int64_t step, int part, int parts) {
        if (step % kChunk != 0 || step + kChunk >= st_.len) return;
        const int64_t blocks = (gh_ + 7) / 8;
        fill(step / kChunk + 1, std::min(gh_, blocks * part / parts * 8),
             std::min(gh_, blocks * (part + 1) / parts * 8));
    }
    // The products of `step` (its chunk computed by an earlier step, or by first()).
    const float* row(int64_t step) const {
        return buf_.data() + (step / kChunk % 2 * kChunk + step % kChunk) * gh_;
    }

  private:
    // Rows [r0, r1) of every step of chunk c.
    void fill(int64_t c, int64_t r0, int64_t r1) {
        const int64_t s0 = c * kChunk, n = std::min(kChunk, st_.len - s0);
        if (n <= 0 || r0 >= r1) return;
        float* out = buf_.data() + c % 2 * kChunk * gh_;
        for (int64_t k = 0; k < n; ++k)
            for (int64_t r = r0; r < r1; ++r)
                out[k * gh_ + r] = bias_ ? bias_[r] + bias_[gh_ + r] : 0.0f;
        const int64_t t0 = st_.time(s0);
        const float* x = q_.x + q_.x_row(t0, bb_) * q_.I;
        const int64_t ldx = n > 1 ? (q_.x_row(st_.time(s0 + 1), bb_) - q_.x_row(t0, bb_)) * q_.I
                                  : q_.I;  // negative when the chain runs backwards
        matvecs_add_f32(w_ + r0 * q_.I, r1 - r0, q_.I, x, n, ldx, out + r0, gh_);
    }

    const Problem& q_;
    const ChainState& st_;
    const int64_t gh_, bb_;
    const float* w_;
    const float* bias_;
    std::vector<float> buf_;
};

// The steps of LSTM chain (d, bb) on its state h / cs, writing Y. With a pool and a large R, on
// a team (base/team.h, run_steps): in each step every member takes a range of hidden units, their
// rows of R and their part of the cell state; h is double-buffered (a step reads one copy and
// writes the other), so the members meet once per step.
void run_lstm_chain(const Problem& q, int64_t d, int64_t bb, float* h, float* cs, float* y,
                    ThreadPool* pool) {
    const int64_t H = q.H;
    const float* r = q.r + d * 4 * H * H;
    ChainState st(q, d, bb, h);
    LstmInputs xw(q, d, bb, st);
    xw.first(pool);
    // g and tmp of units [j0, j1) at 5 * j0: the members' ranges are disjoint, so 5 H floats
    // serve any number of them.
    std::vector<float> work(static_cast<size_t>(5 * H));
    run_steps(pool, st.len, team_parts(4 * H, H), [&](int64_t step, int part, int parts) {
        const int64_t j0 = first_unit(part, parts, H), j1 = first_unit(part + 1, parts, H);
        const int64_t t = st.time(step);
        float* out = st.h_out(step);
        float* g = work.data() + 5 * j0;
        lstm_units(q, d, r, st.act, xw.row(step), st.h_in(step), cs, out, j0, j1, g,
                   g + 4 * (j1 - j0));
        xw.step(step, part, parts);
        std::copy(out + j0, out + j1, y + q.y_at(t, d, bb) + j0);
    });
    st.final_h(h);
}

// The steps of RNN chain (d, bb) on its state h, writing Y: as run_lstm_chain, one team step
// per time step (h = f(x W^T + Wb + Rb + R h) per hidden unit).
void run_rnn_chain(const Problem& q, const std::vector<float>& xw, int64_t d, int64_t bb, float* h,
                   float* y, ThreadPool* pool) {
    const int64_t H = q.H;
    const float* r = q.r + d * H * H;
    ChainState st(q, d, bb, h);
    run_steps(pool, st.len, team_parts(H, H), [&](int64_t step, int part, int parts) {
        const int64_t j0 = first_unit(part, parts, H), j1 = first_unit(part + 1, parts, H);
        const int64_t t = st.time(step), n = j1 - j0;
        const float* row = xw.data() + (d * q.S * q.B + q.x_row(t, bb)) * H;
        float* g = st.h_out(step) + j0;
        std::copy(row + j0, row + j1, g);
        matvec_add_f32(r + j0 * H, st.h_in(step), n, H, g);
        clip_f32(g, n, q.c.clip);
        st.act[0].apply(g, n);
        std::copy(g, g + n, y + q.y_at(t, d, bb) + j0);
    });
    st.final_h(h);
}

// The steps of GRU chain (d, bb) on its state h, writing Y, on a team as run_lstm_chain. Gates
// z, r, h (ONNX order). Without linear_before_reset the h gate's product reads r * h over every
// unit, so each time step is two team steps: z, r and r * h for the member's units, then the h
// gate's product and the new state. The gate sums live in chain-wide arrays (g: z, r, h; rh;
// tmp), indexed by unit, so members may take other units in the second step.
void run_gru_chain(const Problem& q, const std::vector<float>& xw, int64_t d, int64_t bb, float* h,
                   float* y, ThreadPool* pool) {
    const int64_t H = q.H;
    const float* r = q.r + d * 3 * H * H;
    const bool lbr = q.c.linear_before_reset;
    const float* rbh = q.b ? q.b + d * 6 * H + 5 * H : nullptr;
    ChainState st(q, d, bb, h);
    std::vector<float> g(static_cast<size_t>(3 * H)), rh(static_cast<size_t>(H));
    // tmp (linear_before_reset's h R_h^T + Rbh) shares rh's storage: each mode uses one of them.
    float *gz = g.data(), *gr = gz + H, *gh = gr + H, *tmp = rh.data();
    const int64_t phases = lbr ? 1 : 2;
    run_steps(pool, st.len * phases, team_parts(2 * H, H), [&](int64_t s, int part, int parts) {
        const int64_t step = s / phases, j0 = first_unit(part, parts, H),
                      j1 = first_unit(part + 1, parts, H), n = j1 - j0;
        const int64_t t = st.time(step);
        const float* in = st.h_in(step);
        float* out = st.h_out(step);
        if (s % phases == 0) {
            const float* row = xw.data() + (d * q.S * q.B + q.x_row(t, bb)) * 3 * H;
            for (int64_t k = 0; k < 3; ++k)
                std::copy(row + k * H + j0, row + k * H + j1, gz + k * H + j0);
            for (int64_t k = 0; k < 2; ++k)
                matvec_add_f32(r + (k * H + j0) * H, in, n, H, gz + k * H + j0);
            for (float* v : {gz + j0, gr + j0}) {
                clip_f32(v, n, q.c.clip);
                st.act[0].apply(v, n);
            }
            if (!lbr) {  // x W_h^T + (r * h) R_h^T + Wbh + Rbh: r * h first, over every unit
                for (int64_t j = j0; j < j1; ++j) rh[j] = gr[j] * in[j];
                return;
            }
            // x W_h^T + r * (h R_h^T + Rbh) + Wbh
            for (int64_t j = j0; j < j1; ++j) tmp[j] = rbh ? rbh[j] : 0.0f;
            matvec_add_f32(r + (2 * H + j0) * H, in, n, H, tmp + j0);
            for (int64_t j = j0; j < j1; ++j) gh[j] += gr[j] * tmp[j];
        } else {
            matvec_add_f32(r + (2 * H + j0) * H, rh.data(), n, H, gh + j0);
        }
        clip_f32(gh + j0, n, q.c.clip);
        st.act[1].apply(gh + j0, n);
        for (int64_t j = j0; j < j1; ++j) out[j] = (1 - gz[j]) * gh[j] + gz[j] * in[j];
        std::copy(out + j0, out + j1, y + q.y_at(t, d, bb) + j0);
    });
    st.final_h(h);
}

// A state output filled from the initial state (same layout) or zeros.
Tensor initial_state(const float* init, std::vector<int64_t> dims) {
    Tensor t = Tensor::uninitialized(DataType::kFloat32, std::move(dims));
    float* p = reinterpret_cast<float*>(t.mutable_bytes());
    if (init)
        std::copy(init, init + t.numel(), p);
    else
        std::fill(p, p + t.numel(), 0.0f);
    return t;
}

}  // namespace

bool f32_applies(const KernelContext& ctx) {
    for (size_t i : {0, 1, 2, 3, 5, 6, 7})
        if (ctx.has_input(i) && ctx.input(i).dtype() != DataType::kFloat32) return false;
    return true;
}

void run_f32(KernelContext& ctx, const RnnConfig& c) {
    Problem q{c, check_dims(ctx, c)};
    q.S = q.dims.seq, q.B = q.dims.batch, q.I = q.dims.input;
    q.H = c.hidden, q.G = num_gates(c.cell), q.D = c.num_dirs;
    q.x = ctx.input(0).data<float>(), q.w = ctx.input(1).data<float>();
    q.r = ctx.input(2).data<float>(), q.b = data_or_null(ctx, 3);
    q.h0 = data_or_null(ctx, 5);
    const bool lstm = c.cell == Cell::kLstm;
    if (lstm) q.c0 = data_or_null(ctx, 6), q.p = data_or_null(ctx, 7);
    const std::vector<float> xw = lstm ? std::vector<float>() : input_products(q, ctx.pool());
    const bool bf = c.layout_batch_first;
    Tensor y = Tensor::zeros(DataType::kFloat32, bf ? std::vector<int64_t>{q.B, q.S, q.D, q.H}
                                                    : std::vector<int64_t>{q.S, q.D, q.B, q.H});
    const std::vector<int64_t> state_dims =
        bf ? std::vector<int64_t>{q.B, q.D, q.H} : std::vector<int64_t>{q.D, q.B, q.H};
    Tensor yh = initial_state(q.h0, state_dims);
    Tensor yc = lstm ? initial_state(q.c0, state_dims) : Tensor();
    float* py = reinterpret_cast<float*>(y.mutable_bytes());
    float* ph = reinterpret_cast<float*>(yh.mutable_bytes());
    float* pc = lstm ? reinterpret_cast<float*>(yc.mutable_bytes()) : nullptr;
    const int64_t chains = q.D * q.B;
    auto chain = [&](int64_t i, ThreadPool* pool) {
        const int64_t d = i / q.B, bb = i % q.B, at = q.state_at(d, bb);
        if (lstm)
            run_lstm_chain(q, d, bb, ph + at, pc + at, py, pool);
        else if (c.cell == Cell::kGru)
            run_gru_chain(q, xw, d, bb, ph + at, py, pool);
        else
            run_rnn_chain(q, xw, d, bb, ph + at, py, pool);
    };
    if (chains == 1) {
        chain(0, ctx.pool());
    } else {  // chains in parallel when their work outweighs waking the pool
        const bool big = q.G * q.H * q.H * q.S >= (1 << 16);
        run_parallel(big ? ctx.pool() : nullptr, chains, [&](int64_t b, int64_t e) {
            for (int64_t i = b; i < e; ++i) chain(i, nullptr);
        });
    }
    ctx.set_output(0, std::move(y));
    ctx.set_output(1, std::move(yh));
    if (lstm) ctx.set_output(2, std::move(yc));
}

}  // namespace pg::ops::rnn
