// 2-D convolution as a GEMM with no im2col (conv_kernels.h: conv_direct). The input is copied
// once into zero-padded planes split by stride phase: for strides (sh, sw), phase (a, b) of
// channel c holds padded rows a, a + sh, ... and columns b, b + sw, ..., as an hq x wq plane.
// Output position (oh, ow) is column oh * wq + ow of a padded-width product, and im2col row
// (c, kh, kw) is the phase plane of (kh * dh % sh, kw * dw % sw) shifted by
// (kh * dh / sh) * wq + kw * dw / sw: contiguous, read in place by gemm_direct, whose column
// map drops the wq - out columns per row and writes the rest straight into y_g. Every read stays
// inside the planes: (out - 1) * s + (k - 1) * d < padded size gives out - 1 + (k - 1) * d / s <
// ceil(padded / s) on both axes (with a shared pad column, shared_pad_pitch, reads go up to the
// right pad's width into the next row or the zeros after the planes). A 1x1, stride-1, unpadded
// Conv needs no copy: its im2col rows are the input planes (measured 0-20 % faster than the packed
// GEMM with 2 threads); a strided one reads a compact copy of the positions it uses.
#include <algorithm>
#include <memory>
#include <vector>

#include "base/aligned.h"
#include "ops/conv_kernels.h"
#include "ops/gemm_direct.h"

namespace pg::ops {

namespace {

struct PhasePlanes {
    int64_t sh = 1, sw = 1, hq = 0, wq = 0;
    int64_t extra = 0;  // zeros after each channel's planes (see shared_pad_pitch)
    int64_t plane() const { return hq * wq; }
    int64_t channel() const { return sh * sw * plane() + extra; }  // floats per input channel
};

// Stride 1 with a right pad no wider than the left one: rows of in + left pad floats, whose
// right pad is the next row's left pad (a read past a row's end lands there, and past the last
// row in `extra` zeros): fewer product columns (a 13x13 3x3 map: 181 instead of 193, one
// vector tile less).
bool shared_pad_pitch(const Window& g) {
    return g.stride[1] == 1 && g.stride[2] == 1 && g.pad_end[2] > 0 &&
           g.pad_end[2] <= g.pad_begin[2] && g.in[2] + g.pad_begin[2] >= 8;
}

// Phase (a, b) of one channel (input x), written row by row into dst (zeros for padding).
void fill_phase(const Window& g, const PhasePlanes& q, const float* x, int64_t a, int64_t b,
                float* dst) {
    const int64_t pt = g.pad_begin[1], pl = g.pad_begin[2];
    // Phase columns xx whose padded column xx * sw + b is inside the input row.
    const int64_t lo = std::clamp<int64_t>((pl - b + q.sw - 1) / q.sw, 0, q.wq);
    const int64_t hi = std::clamp<int64_t>((pl + g.in[2] - b + q.sw - 1) / q.sw, lo, q.wq);
    for (int64_t yy = 0; yy < q.hq; ++yy, dst += q.wq) {
        const int64_t ih = yy * q.sh + a - pt;
        if (ih < 0 || ih >= g.in[1] || lo == hi) {
            std::fill_n(dst, q.wq, 0.0f);
            continue;
        }
        const float* src = x + ih * g.in[2] + b - pl;  // column xx at src[xx * sw]
        std::fill_n(dst, lo, 0.0f);
        if (q.sw == 1)
            std::copy(src + lo, src + hi, dst + lo);
        else if (q.sw == 2)  // a constant stride: vectorized
            for (int64_t xx = lo; xx < hi; ++xx) dst[xx] = src[2 * xx];
        else
            for (int64_t xx = lo; xx < hi; ++xx) dst[xx] = src[xx * q.sw];
        std::fill(dst + hi, dst + q.wq, 0.0f);
    }
}

// A 1x1 Conv over planes xg of `plane` floats: im2col row c is plane c itself, read in place.
void pointwise_direct(const float* xg, int64_t plane, const GemmArgs<float>& a, ThreadPool* pool) {
    GemmArgs<float> g = a;
    g.b = xg, g.ldb = plane, g.trans_a = g.trans_b = false;
    gemm_direct_dense(g, pool);
}

bool is_pointwise_2d(const Window& g) {
    for (int i = 0; i < 3; ++i)
        if (g.kernel[i] != 1 || g.stride[i] != 1 || g.pad_begin[i] != 0 || g.out[i] != g.in[i])
            return false;
    return true;
}

// A 1x1 Conv with strides and no padding (ResNet's projection shortcuts): only the input
// positions it reads, every stride-th row and column, are copied (channel by channel) into
// planes of the output's size, which then go in place like a stride-1 pointwise Conv (a phase
// split would copy every phase of the input to use one).
bool is_strided_pointwise_2d(const Window& g) {
    for (int i = 0; i < 3; ++i)
        if (g.kernel[i] != 1 || g.pad_begin[i] != 0 || g.pad_end[i] < 0 ||
            (g.out[i] - 1) * g.stride[i] >= g.in[i])
            return false;
    return g.in[0] == 1;
}

void strided_pointwise_direct(const Window& g, const float* xg, int64_t cg,
                              const GemmArgs<float>& a, ThreadPool* pool) {
    const int64_t oh = g.out[1], ow = g.out[2], plane = oh * ow, in_plane = g.in[1] * g.in[2];
    const int64_t sh = g.stride[1], sw = g.stride[2];
    AlignedArray<float> xs = aligned_array<float>(static_cast<size_t>(cg * plane));
    run_parallel(pool, cg, [&](int64_t b, int64_t e) {
        for (int64_t c = b; c < e; ++c)
            for (int64_t y = 0; y < oh; ++y) {
                const float* src = xg + c * in_plane + y * sh * g.in[2];
                float* dst = xs.get() + c * plane + y * ow;
                if (sw == 2)  // a constant stride: vectorized
                    for (int64_t x = 0; x < ow; ++x) dst[x] = src[2 * x];
                else
                    for (int64_t x = 0; x < ow; ++x) dst[x] = src[x * sw];
            }
    });
    pointwise_direct(xs.get(), plane, a, pool);
}

}  // namespace

bool conv_direct(const Window& g, const float* xg, int64_t cg, const GemmArgs<float>& a,
                 ThreadPool* pool) {
    if (!gemm_direct_available()) return false;
    if (is_pointwise_2d(g)) {
        pointwise_direct(xg, g.in_size(), a, pool);
        return true;
    }
    if (is_strided_pointwise_2d(g)) {
        strided_pointwise_direct(g, xg, cg, a, pool);
        return true;
    }
    if (g.in[0] != 1 || g.kernel[0] != 1 || g.out[0] != 1) return false;  // 1-D or 2-D only
    for (int i = 1; i < 3; ++i)
        if (g.pad_begin[i] < 0 || g.pad_end[i] < 0) return false;
    PhasePlanes q;
    q.sh = g.stride[1], q.sw = g.stride[2];
    const int64_t hp = g.in[1] + g.pad_begin[1] + g.pad_end[1];
    const int64_t wp = g.in[2] + g.pad_begin[2] + g.pad_end[2];
    // Padded rows or columns many times the input's and output's (pads of 2^40 around a dilated
    // window under SAME), or strides past 64 (a phase plane each): not this path's shapes, and
    // the padded copy's size would overflow.
    if (hp > 4 * (g.in[1] + g.out[1]) + 64 || wp > 4 * (g.in[2] + g.out[2]) + 64 || q.sh > 64 ||
        q.sw > 64)
        return false;
    q.hq = (hp + q.sh - 1) / q.sh, q.wq = (wp + q.sw - 1) / q.sw;
    if (shared_pad_pitch(g)) q.wq = g.in[2] + g.pad_begin[2], q.extra = g.pad_end[2];
    if (q.wq < 8 || q.wq < g.out[2]) return false;  // gemm_direct's column map needs 8
    AlignedArray<float> xp = aligned_array<float>(static_cast<size_t>(cg * q.channel()));
    const int64_t in_plane = g.in[1] * g.in[2];
    const int64_t phases = q.sh * q.sw;  // one task per (channel, phase): stems have 3 channels
    run_parallel(pool, cg * phases, [&](int64_t b, int64_t e) {
        for (int64_t t = b; t < e; ++t) {
            const int64_t c = t / phases, ph = t % phases;
            float* dst = xp.get() + c * q.channel();
            fill_phase(g, q, xg + c * in_plane, ph / q.sw, ph % q.sw, dst + ph * q.plane());
            if (ph == phases - 1) std::fill_n(dst + phases * q.plane(), q.extra, 0.0f);
        }
    });
    const int64_t ks = g.kernel_size(), kw_n = g.kernel[2];
    std::vector<int64_t> off(static_cast<size_t>(a.k));
    for (int64_t r = 0; r < a.k; ++r) {
        const int64_t k = r % ks, y = (k / kw_n) * g.dil[1], x = (k % kw_n) * g.dil[2];
        off[static_cast<size_t>(r)] = (r / ks) * q.channel() +
                                      ((y % q.sh) * q.sw + x % q.sw) * q.plane() +
                                      (y / q.sh) * q.wq + x / q.sw;
    }
    DirectGemm d;
    d.m = a.m, d.n = (g.out[1] - 1) * q.wq + g.out[2], d.k = a.k, d.a = a.a, d.lda = a.lda;
    d.b = xp.get(), d.b_off = off.data(), d.c = a.c, d.ldc = a.ldc;
    d.row_pitch = q.wq, d.row_len = g.out[2], d.out_pitch = g.out[2];
    d.alpha = a.alpha, d.beta = a.beta, d.epilogue = a.epilogue;
    gemm_direct(d, pool);
    return true;
}

}  // namespace pg::ops
