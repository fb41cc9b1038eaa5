// Window geometry and convolution kernels (see conv_kernels.h). The references accumulate in T
// (float32 for float32), in the order bias, then channels, then kernel positions.
#include "ops/conv_kernels.h"
#include "base/aligned.h"
#include "base/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <vector>

#include "ops/conv_winograd.h"
#include "ops/gemm_kernels.h"
#include "ops/kernel.h"
#include "ops/nchwc.h"
#include "ops/nchwc_winograd.h"

namespace pg::ops {

WindowAttrs read_window_attrs(const Attrs& a) {
    WindowAttrs w;
    w.auto_pad = a.get_string("auto_pad", "NOTSET");
    w.kernel_shape = a.get_ints("kernel_shape");
    w.strides = a.get_ints("strides");
    w.dilations = a.get_ints("dilations");
    w.pads = a.get_ints("pads");
    w.ceil_mode = a.get_flag("ceil_mode", false);
    return w;
}

int64_t window_arith(int64_t a, int64_t b, int64_t c, const char* op) {
    int64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r) || __builtin_add_overflow(r, c, &r))
        fail(std::string(op) + ": the window's size, pads or strides overflow int64");
    return r;
}

void check_window_bound(int64_t v, const char* op) {
    if (v > kWindowBound || v < -kWindowBound)
        fail(std::string(op) + ": window sizes, strides and pads beyond 2^60 are not supported");
}

namespace {

int64_t floor_div(int64_t a, int64_t b) {  // b > 0; no overflow for any a
    return a / b - (a % b < 0);
}

// Output size along one axis with explicit pads.
int64_t pooled_size(int64_t in, int64_t ek, int64_t s, int64_t pb, int64_t pe, bool ceil_mode,
                    const char* op) {
    const int64_t padded = window_arith(1, window_arith(1, in, pb, op), pe, op);
    window_arith(1, in, pe, op);  // the padded input's end (pool_window.h)
    const int64_t span = window_arith(-1, ek, padded, op);
    if (span < -(int64_t{1} << 62)) return 0;  // negative pads of about int64's lowest
    if (!ceil_mode) return floor_div(span, s) + 1;
    int64_t out = -floor_div(-span, s) + 1;  // ceil(span / s) + 1
    if ((out - 1) * s >= in + pb) --out;  // the last window must start inside input or begin pad
    return out;
}

}  // namespace

Window make_window(const WindowAttrs& a, const std::vector<int64_t>& in,
                   const std::vector<int64_t>& kernel, const char* op, bool check_output) {
    const size_t nd = in.size();
    if (nd < 1 || nd > 3) unsupported(std::string(op) + ": only 1 to 3 spatial axes are supported");
    auto check_len = [&](const std::vector<int64_t>& v, size_t n, const char* name) {
        if (!v.empty() && v.size() != n)
            fail(std::string(op) + ": '" + name + "' has the wrong length");
    };
    check_len(kernel, nd, "kernel_shape"), check_len(a.strides, nd, "strides");
    check_len(a.dilations, nd, "dilations"), check_len(a.pads, 2 * nd, "pads");
    Window w;
    w.nd = static_cast<int>(nd);
    const size_t off = 3 - nd;
    for (size_t i = 0; i < nd; ++i) {
        const size_t j = off + i;
        w.in[j] = in[i], w.kernel[j] = kernel[i];
        w.stride[j] = a.strides.empty() ? 1 : a.strides[i];
        w.dil[j] = a.dilations.empty() ? 1 : a.dilations[i];
        if (w.stride[j] < 1 || w.dil[j] < 1 || w.kernel[j] < 1)
            fail(std::string(op) + ": strides, dilations and kernel sizes must be positive");
        const int64_t ek = window_arith(w.kernel[j] - 1, w.dil[j], 1, op);
        check_window_bound(ek, op), check_window_bound(w.stride[j], op);
        if (a.auto_pad == "SAME_UPPER" || a.auto_pad == "SAME_LOWER") {
            w.out[j] = w.in[j] / w.stride[j] + (w.in[j] % w.stride[j] != 0);
            const int64_t total =
                std::max<int64_t>(0, window_arith(w.out[j] - 1, w.stride[j], ek - w.in[j], op));
            w.pad_begin[j] = a.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
            w.pad_end[j] = total - w.pad_begin[j];
            check_window_bound(total, op);
            continue;
        }
        if (a.auto_pad == "NOTSET" && !a.pads.empty())
            w.pad_begin[j] = a.pads[i], w.pad_end[j] = a.pads[i + nd];
        else if (a.auto_pad != "NOTSET" && a.auto_pad != "VALID")
            fail(std::string(op) + ": unknown auto_pad '" + a.auto_pad + "'");
        check_window_bound(w.pad_begin[j], op), check_window_bound(w.pad_end[j], op);
        w.out[j] =
            pooled_size(w.in[j], ek, w.stride[j], w.pad_begin[j], w.pad_end[j], a.ceil_mode, op);
        if (check_output && w.out[j] < 1)
            fail(std::string(op) + ": the window is larger than the padded input");
    }
    // a window's tap count (a pool's divisor with count_include_pad) fits in int64
    window_arith(window_arith(w.kernel[0], w.kernel[1], 0, op), w.kernel[2], 0, op);
    return w;
}

template <typename T>
void conv_reference(const ConvShape& s, const T* x, const T* w, const T* bias, T* y) {
    const Window& g = s.w;
    const int64_t cg = s.c / s.group, mg = s.m / s.group, ks = g.kernel_size();
    for (int64_t n = 0; n < s.n; ++n)
        for (int64_t m = 0; m < s.m; ++m) {
            const int64_t c0 = (m / mg) * cg;
            T* yo = y + (n * s.m + m) * g.out_size();
            for (int64_t o = 0; o < g.out_size(); ++o) {
                const int64_t od = o / (g.out[1] * g.out[2]), oh = o / g.out[2] % g.out[1],
                              ow = o % g.out[2];
                T acc = bias ? bias[m] : T(0);
                for (int64_t c = 0; c < cg; ++c) {
                    const T* xc = x + (n * s.c + c0 + c) * g.in_size();
                    const T* wc = w + (m * cg + c) * ks;
                    for (int64_t k = 0; k < ks; ++k) {
                        const int64_t kd = k / (g.kernel[1] * g.kernel[2]),
                                      kh = k / g.kernel[2] % g.kernel[1], kw = k % g.kernel[2];
                        const int64_t id = od * g.stride[0] - g.pad_begin[0] + kd * g.dil[0];
                        const int64_t ih = oh * g.stride[1] - g.pad_begin[1] + kh * g.dil[1];
                        const int64_t iw = ow * g.stride[2] - g.pad_begin[2] + kw * g.dil[2];
                        if (id < 0 || id >= g.in[0] || ih < 0 || ih >= g.in[1] || iw < 0 ||
                            iw >= g.in[2])
                            continue;
                        acc += xc[(id * g.in[1] + ih) * g.in[2] + iw] * wc[k];
                    }
                }
                yo[o] = acc;
            }
        }
}

template <typename T>
void conv_transpose_reference(const ConvShape& s, const T* x, const T* w, const T* bias, T* y) {
    const Window& g = s.w;
    const int64_t cg = s.c / s.group, mg = s.m / s.group, ks = g.kernel_size();
    for (int64_t n = 0; n < s.n; ++n)
        for (int64_t m = 0; m < s.m; ++m)
            std::fill_n(y + (n * s.m + m) * g.out_size(), g.out_size(), bias ? bias[m] : T(0));
    for (int64_t n = 0; n < s.n; ++n)
        for (int64_t c = 0; c < s.c; ++c) {
            const int64_t grp = c / cg;
            const T* xc = x + (n * s.c + c) * g.in_size();
            for (int64_t i = 0; i < g.in_size(); ++i) {
                const int64_t id = i / (g.in[1] * g.in[2]), ih = i / g.in[2] % g.in[1],
                              iw = i % g.in[2];
                for (int64_t mm = 0; mm < mg; ++mm) {
                    const T* wk = w + (c * mg + mm) * ks;
                    T* yo = y + (n * s.m + grp * mg + mm) * g.out_size();
                    for (int64_t k = 0; k < ks; ++k) {
                        const int64_t kd = k / (g.kernel[1] * g.kernel[2]),
                                      kh = k / g.kernel[2] % g.kernel[1], kw = k % g.kernel[2];
                        const int64_t od = id * g.stride[0] - g.pad_begin[0] + kd * g.dil[0];
                        const int64_t oh = ih * g.stride[1] - g.pad_begin[1] + kh * g.dil[1];
                        const int64_t ow = iw * g.stride[2] - g.pad_begin[2] + kw * g.dil[2];
                        if (od < 0 || od >= g.out[0] || oh < 0 || oh >= g.out[1] || ow < 0 ||
                            ow >= g.out[2])
                            continue;
                        yo[(od * g.out[1] + oh) * g.out[2] + ow] += xc[i] * wk[k];
                    }
                }
            }
        }
}

template void conv_reference<float>(const ConvShape&, const float*, const float*, const float*,
                                    float*);
template void conv_reference<double>(const ConvShape&, const double*, const double*, const double*,
                                     double*);
template void conv_transpose_reference<float>(const ConvShape&, const float*, const float*,
                                              const float*, float*);
template void conv_transpose_reference<double>(const ConvShape&, const double*, const double*,
                                               const double*, double*);

namespace {

bool is_pointwise(const Window& g) {
    for (int i = 0; i < 3; ++i)
        if (g.kernel[i] != 1 || g.stride[i] != 1 || g.pad_begin[i] != 0 || g.out[i] != g.in[i])
            return false;
    return true;
}

// Output positions [lo, hi) of [ow0, ow0 + n) whose input column ow * stride + off lies inside
// the row, as offsets from ow0.
void inside_run(const Window& g, int64_t ow0, int64_t n, int64_t off, int64_t* lo, int64_t* hi) {
    const int64_t s = g.stride[2];
    const int64_t first = off >= 0 ? 0 : (-off + s - 1) / s;
    const int64_t end = g.in[2] - 1 - off < 0 ? 0 : (g.in[2] - 1 - off) / s + 1;
    *lo = std::clamp<int64_t>(first - ow0, 0, n);
    *hi = std::clamp<int64_t>(end - ow0, *lo, n);
}

// A run of output positions within one output row: columns [j, j + n) of a panel; id0 / ih0 /
// iw0 are the input coordinates its first position reads at kernel offset 0.
struct ColumnRun {
    int64_t id0, ih0, iw0, ow0, n, j;
};

// One im2col row (channel c, kernel offset kd, kh, kw): the channel's plane, the kernel's row and
// column offsets into the input and the output columns [lo, hi) whose input column is inside.
struct KernelTap {
    const float* xc;
    int64_t dd, dh, off, lo, hi;
};

// The runs of each kGemmNr-wide panel of output positions [j0, j0 + nc): panel jp's runs are
// runs[first[jp]] .. runs[first[jp + 1]).
void panel_runs(const Window& g, int64_t j0, int64_t nc, std::vector<ColumnRun>& runs,
                std::vector<size_t>& first) {
    const int64_t plane = g.out[1] * g.out[2], panels = (nc + kGemmNr - 1) / kGemmNr;
    first.assign(static_cast<size_t>(panels + 1), 0);
    for (int64_t jp = 0; jp < panels; ++jp) {
        first[static_cast<size_t>(jp)] = runs.size();
        const int64_t w = std::min<int64_t>(kGemmNr, nc - jp * kGemmNr);
        for (int64_t j = 0; j < w;) {
            const int64_t o = j0 + jp * kGemmNr + j, ow = o % g.out[2];
            const int64_t n = std::min(w - j, g.out[2] - ow);
            const int64_t od = o / plane, oh = o / g.out[2] % g.out[1];
            runs.push_back({od * g.stride[0] - g.pad_begin[0], oh * g.stride[1] - g.pad_begin[1],
                            ow * g.stride[2], ow, n, j});
            j += n;
        }
    }
    first[static_cast<size_t>(panels)] = runs.size();
}

// Copies one run of one im2col row into `out` (u.n floats, zeros where the input is padding).
inline void pack_run(const Window& g, const KernelTap& t, const ColumnRun& u, float* out) {
    const int64_t id = u.id0 + t.dd, ih = u.ih0 + t.dh;
    if (id < 0 || id >= g.in[0] || ih < 0 || ih >= g.in[1]) {  // the row is padding
        std::fill_n(out, u.n, 0.0f);
        return;
    }
    const int64_t lo = std::clamp<int64_t>(t.lo - u.ow0, 0, u.n);
    const int64_t hi = std::clamp<int64_t>(t.hi - u.ow0, lo, u.n);
    const float* in = t.xc + (id * g.in[1] + ih) * g.in[2] + u.iw0 + t.off;
    const int64_t s = g.stride[2];
    if (s == 1 && lo == 0 && hi == kGemmNr) {  // a whole panel inside one input row
        __builtin_memcpy(out, in, kGemmNr * sizeof(float));
        return;
    }
    std::fill_n(out, lo, 0.0f);
    if (s == 1)  // short runs: a plain loop beats a memmove call
        for (int64_t j = lo; j < hi; ++j) out[j] = in[j];
    else
        for (int64_t j = lo; j < hi; ++j) out[j] = in[j * s];
    std::fill_n(out + hi, u.n - hi, 0.0f);
}

// Packs im2col rows [p0, p0+kc) x output positions [j0, j0+nc) of channels xg into
// kGemmNr-wide panels (the layout gemm_fast_packed expects), without building the im2col matrix.
// The output-row runs of each panel and the geometry of each im2col row are computed once, so
// the per-element work is a copy; panels are written in order.
void pack_im2col(const Window& g, const float* xg, int64_t p0, int64_t kc, int64_t j0, int64_t nc,
                 float* dst) {
    const int64_t ks = g.kernel_size(), panels = (nc + kGemmNr - 1) / kGemmNr;
    thread_local std::vector<ColumnRun> runs;
    thread_local std::vector<size_t> first;
    thread_local std::vector<KernelTap> taps;
    runs.clear(), taps.clear();
    panel_runs(g, j0, nc, runs, first);
    for (int64_t p = 0; p < kc; ++p) {
        const int64_t r = p0 + p, k = r % ks;
        const int64_t kd = k / (g.kernel[1] * g.kernel[2]), kh = k / g.kernel[2] % g.kernel[1],
                      kw = k % g.kernel[2];
        KernelTap t{xg + (r / ks) * g.in_size(),
                    kd * g.dil[0],
                    kh * g.dil[1],
                    kw * g.dil[2] - g.pad_begin[2],
                    0,
                    0};
        inside_run(g, 0, g.out[2], t.off, &t.lo, &t.hi);
        taps.push_back(t);
    }
    for (int64_t jp = 0; jp < panels; ++jp) {
        const int64_t w = std::min<int64_t>(kGemmNr, nc - jp * kGemmNr);
        const size_t q0 = first[static_cast<size_t>(jp)], q1 = first[static_cast<size_t>(jp + 1)];
        float* d = dst + jp * kc * kGemmNr;
        for (int64_t p = 0; p < kc; ++p, d += kGemmNr) {
            const KernelTap& t = taps[static_cast<size_t>(p)];
            for (size_t q = q0; q < q1; ++q) pack_run(g, t, runs[q], d + runs[q].j);
            std::fill(d + w, d + kGemmNr, 0.0f);
        }
    }
}

// Stride-1 2-D convolutions with few output channels (where packing the im2col panels costs as
// much as the products) run over a zero-padded copy of the image instead: output position
// (oh, ow) is computed at column oh * wp + ow of a padded-width result (wp = padded width), so
// the im2col row of (channel c, tap t) is the padded plane of c shifted by t's offset, and each
// panel row is one contiguous copy. The products and their order are the im2col path's (its
// zeros are the padding's), so the values are the same; the wp - out columns per row are
// computed and dropped.
bool use_padded_width(const Window& g, int64_t mg) {
    if (g.in[0] != 1 || g.kernel[0] != 1 || g.out[0] != 1) return false;
    for (int i = 1; i < 3; ++i)
        if (g.stride[i] != 1 || g.pad_begin[i] < 0 || g.pad_end[i] < 0) return false;
    return mg <= 96 && g.out[2] >= 14;
}

// y_g (a.c; beta 0, the bias in the epilogue) through the padded-width result.
void conv_padded_width(const Window& g, const float* xg, int64_t cg, GemmArgs<float> a,
                       ThreadPool* pool) {
    const int64_t wp = g.in[2] + g.pad_begin[2] + g.pad_end[2];
    const int64_t hp = g.in[1] + g.pad_begin[1] + g.pad_end[1];
    const int64_t ks = g.kernel_size(), kw_n = g.kernel[2];
    const int64_t plane = hp * wp + (kw_n - 1) * g.dil[2] + kGemmNr;  // slack: the last taps
    const AlignedArray<float> xp = aligned_array<float>(static_cast<size_t>(cg * plane));
    run_parallel(pool, cg, [&](int64_t b, int64_t e) {
        for (int64_t c = b; c < e; ++c) {
            float* dst = xp.get() + c * plane;
            std::fill_n(dst, plane, 0.0f);
            for (int64_t r = 0; r < g.in[1]; ++r)
                std::copy_n(xg + (c * g.in[1] + r) * g.in[2], g.in[2],
                            dst + (r + g.pad_begin[1]) * wp + g.pad_begin[2]);
        }
    });
    std::vector<int64_t> tap(static_cast<size_t>(ks));
    for (int64_t k = 0; k < ks; ++k)
        tap[static_cast<size_t>(k)] = (k / kw_n) * g.dil[1] * wp + (k % kw_n) * g.dil[2];
    const int64_t np = g.out[1] * wp, mg = a.m;
    std::vector<float> cp(static_cast<size_t>(mg * np));
    float* yg = a.c;  // channel planes a.ldc apart
    const int64_t ldc = a.ldc;
    a.n = np, a.c = cp.data(), a.ldc = np;
    gemm_fast_packed(
        a,
        [&](int64_t p0, int64_t kc, int64_t j0, int64_t nc, float* dst) {
            for (int64_t jp = 0; jp < nc; jp += kGemmNr) {
                const int64_t w = std::min<int64_t>(kGemmNr, nc - jp);
                for (int64_t p = 0; p < kc; ++p, dst += kGemmNr) {
                    const int64_t r = p0 + p;
                    const float* src =
                        xp.get() + (r / ks) * plane + tap[static_cast<size_t>(r % ks)] + j0 + jp;
                    if (w == kGemmNr) {
                        __builtin_memcpy(dst, src, kGemmNr * sizeof(float));
                    } else {
                        std::copy_n(src, w, dst);
                        std::fill(dst + w, dst + kGemmNr, 0.0f);
                    }
                }
            }
        },
        pool);
    run_parallel(pool, mg, [&](int64_t b, int64_t e) {
        for (int64_t m = b; m < e; ++m)
            for (int64_t oh = 0; oh < g.out[1]; ++oh)
                std::copy_n(cp.data() + m * np + oh * wp, g.out[2], yg + m * ldc + oh * g.out[2]);
    });
}

// Rows [r0, r0 + a.m) of one (image, group)'s GEMM (a: their weights and output rows), then
// the bias and `ep` as the GEMM's epilogue (no pass over y_g to prefill the bias); `row` is the
// output channel of r0, which offsets the per-channel parameters.
void conv_rows(const Window& g, const float* xg, int64_t cg, GemmArgs<float> a, int64_t row,
               const float* bias, ThreadPool* pool, const GemmEpilogue* ep) {
    GemmEpilogue eg;  // the rows are channels row ...; the bias is the epilogue's first step
    if (ep) eg = *ep;
    if (eg.sub) eg.sub += row, eg.mul += row, eg.add += row;
    if (eg.scale) eg.scale += row;
    if (eg.shift) eg.shift += row;
    if (bias) eg.bias = bias + row;
    if (ep || bias) a.epilogue = &eg;
    if (conv_winograd(g, xg, cg, a, pool)) return;
    if (conv_direct(g, xg, cg, a, pool)) return;
    if (is_pointwise(g)) return gemm_fast(a, pool);
    // The padded-width path applies the epilogue to a scratch result, where no residual is.
    if (use_padded_width(g, a.m) && !(ep && ep->res)) return conv_padded_width(g, xg, cg, a, pool);
    gemm_fast_packed(
        a,
        [&](int64_t p0, int64_t kc, int64_t j0, int64_t nc, float* dst) {
            pack_im2col(g, xg, p0, kc, j0, nc, dst);
        },
        pool);
}

// One (image, group): y_g (mg x os) = w_g (mg x cg*ks) * im2col(x_g) (cg*ks x os). With a
// channel shuffle (conv_fast), the group's rows are cut where the shuffle's groups of
// m / shuffle channels begin; the rows of one piece go to channels `shuffle` planes apart.
void conv_one(const ConvShape& s, int64_t n, int64_t grp, const float* x, const float* w,
              const float* bias, float* y, ThreadPool* pool, const GemmEpilogue* ep,
              int64_t shuffle) {
    const Window& g = s.w;
    const int64_t cg = s.c / s.group, mg = s.m / s.group, kk = cg * g.kernel_size(),
                  os = g.out_size(), seg = s.m / shuffle;
    const float* xg = x + (n * s.c + grp * cg) * g.in_size();
    for (int64_t r0 = 0; r0 < mg;) {
        const int64_t o = grp * mg + r0;  // the piece's first output channel
        const int64_t r1 = std::min(mg, r0 + seg - o % seg);
        GemmArgs<float> a;
        a.m = r1 - r0, a.n = os, a.k = kk, a.a = w + o * kk, a.lda = kk, a.b = xg, a.ldb = os;
        a.c = y + (n * s.m + (o % seg) * shuffle + o / seg) * os, a.ldc = shuffle * os;
        conv_rows(g, xg, cg, a, o, bias, pool, ep);
        r0 = r1;
    }
}

// Runs a blocked kernel on a plain x and y: x reordered into blocks of 16 channels, run(xb, yb),
// yb reordered back into y.
template <typename Run>
void through_blocks(const ConvShape& s, const float* x, float* y, ThreadPool* pool, Run run) {
    const int64_t in = s.w.in_size(), out = s.w.out_size();
    const AlignedArray<float> xb = aligned_array<float>(static_cast<size_t>(s.n * s.c * in));
    const AlignedArray<float> yb = aligned_array<float>(static_cast<size_t>(s.n * s.m * out));
    to_nchwc(x, s.n, s.c, in, sizeof(float), xb.get(), pool);
    run(xb.get(), yb.get());
    from_nchwc(yb.get(), s.n, s.m, out, sizeof(float), y, pool);
}

// A plain x and y through the blocked Winograd (nchwc_winograd.h) where it pays: x reordered
// into blocks, the product, y reordered back (per-node runs with a hook and Convs outside the
// blocked regions). Measured on single layers, 2 threads, reorders included, against this
// file's path: 64 @56 0.60, 128 @28 0.58, 256 @14 0.78, 512 @14 0.78, 64 @224 0.69, 256 @56
// 0.53, 64 -> 256 @13 0.84 (docs/performance.md, session 13). Not with a residual (it would
// need reordering too) or a channel shuffle.
bool blocked_winograd(const ConvShape& s, const float* x, const float* w, const float* bias,
                      float* y, ThreadPool* pool, const GemmEpilogue* ep, int64_t shuffle) {
    if (shuffle != 1 || (ep && ep->res) || !nchwc_winograd_pays(s)) return false;
    through_blocks(s, x, y, pool, [&](const float* xb, float* yb) {
        conv_nchwc_winograd(s, xb, w, bias, ep, yb, pool);
    });
    return true;
}

std::atomic<bool> g_blocked_depthwise{true};  // set_blocked_depthwise

// A plain x and y through the blocked depthwise Conv (depthwise_nchwc) on maps narrow enough
// that a 16-wide vector along a row of one plane goes mostly empty (ShuffleNet's 272 and 544
// channels at 14 x 14 and 7 x 7: a row of 14 fills 14 of 16 lanes and its nine taps are one
// chain, where the blocked kernel keeps eight pixels' chains of 16 channels side by side): x
// reordered into blocks, the blocked Conv, y reordered back. Channels in whole blocks, no
// residual (it would need reordering too). One thread only: on one thread ShuffleNet's
// depthwise steps took 0.56-0.72 of their time (kernel_ab blocked_dw, the model 0.975-0.996);
// in a two-thread session they took 2.0-2.5 times as long, the reorders run on both threads or
// on one (docs/performance.md, session 35).
bool blocked_depthwise(const ConvShape& s, const float* x, const float* w, const float* bias,
                       float* y, ThreadPool* pool, const GemmEpilogue* ep) {
    if (!g_blocked_depthwise.load(std::memory_order_relaxed) || (ep && ep->res) ||
        (pool && pool->num_threads() > 1) || !nchwc_available() || !depthwise_nchwc_fits(s) ||
        s.w.nd != 2 || s.w.out[2] > 16)
        return false;
    GemmEpilogue e = ep ? *ep : GemmEpilogue{};
    e.keep_cached = true;  // yb is read back at once
    through_blocks(s, x, y, pool, [&](const float* xb, float* yb) {
        depthwise_nchwc(s, xb, w, bias, &e, yb, pool);
    });
    return true;
}

}  // namespace

bool set_blocked_depthwise(bool on) {
    return g_blocked_depthwise.exchange(on);
}

void conv_fast(const ConvShape& s, const float* x, const float* w, const float* bias, float* y,
               ThreadPool* pool, const GemmEpilogue* epilogue, int64_t shuffle) {
    const bool depthwise = is_depthwise(s);
    if (shuffle != 1 &&
        (shuffle < 1 || s.m % shuffle != 0 || depthwise || (epilogue && epilogue->res)))
        throw Error(ErrorKind::kInternal, "conv_fast: a channel shuffle by " +
                                              std::to_string(shuffle) + " of " +
                                              std::to_string(s.m) + " channels is not supported");
    if (depthwise && blocked_depthwise(s, x, w, bias, y, pool, epilogue)) return;
    if (depthwise) return depthwise_fast(s, x, w, bias, y, pool, epilogue);
    if (blocked_winograd(s, x, w, bias, y, pool, epilogue, shuffle)) return;
    const int64_t jobs = s.n * s.group;
    const int64_t work = (s.m / s.group) * s.w.out_size() * (s.c / s.group) * s.w.kernel_size();
    const bool split_jobs = jobs > 1 && work < (1 << 20);
    run_affine(split_jobs ? pool : nullptr, jobs, 1, [&](int64_t b, int64_t e) {
        for (int64_t j = b; j < e; ++j)
            conv_one(s, j / s.group, j % s.group, x, w, bias, y, split_jobs ? nullptr : pool,
                     epilogue, shuffle);
    });
}

}  // namespace pg::ops
