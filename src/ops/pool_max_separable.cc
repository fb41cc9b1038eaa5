// The separable float32 max pool (pool_max_separable.h), eight outputs at a time (GCC vectors,
// with an AVX2 build chosen at run time, following gemm_current_isa so tests can force each). The
// row pass computes only the strided positions the output uses; 3x3 windows and strides 1 and 2
// have unrolled builds.
#include "ops/pool_max_separable.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>

#include "ops/gemm_kernels.h"
#include "ops/vec8.h"

namespace pg::ops {

namespace {

constexpr int64_t kMaxFloats = int64_t{1} << 16;  // padded plane floats (256 KiB per thread)
constexpr int64_t kStridedMaxPlane = 1024;        // input plane floats, strided windows
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

int64_t round8(int64_t v) {
    return (v + 7) / 8 * 8;
}

// The geometry of one call (plain values, so the vector bodies take no class).
struct Geo {
    int64_t in_h, in_w, out_h, out_w, kh, kw, sh, sw, pt, pl, rows, cols, pitch;
};

// Loads and stores through memcpy (no V8 passed by value: that would change the ABI).
#define PG_LOAD(v, p) std::memcpy(&(v), (p), sizeof(V8))
#define PG_STORE(p, v) std::memcpy((p), &(v), sizeof(V8))

// Eight floats from p, S apart (S = 0: g.sw apart, any stride).
template <int S>
inline __attribute__((always_inline)) void load_strided(V8& v, const float* p, int64_t sw) {
    if constexpr (S == 1) {
        PG_LOAD(v, p);
    } else if constexpr (S == 2) {
        V8 a, c;  // p[0, 8) and p[8, 16)
        PG_LOAD(a, p);
        PG_LOAD(c, p + 8);
        v = PG_SHUFFLE8(a, c, 0, 2, 4, 6, 8, 10, 12, 14);
    } else {
        float t[8];
        for (int i = 0; i < 8; ++i) t[i] = p[i * sw];
        PG_LOAD(v, t);
    }
}

// Fills the padded plane (-inf outside the input); returns whether x holds a NaN.
inline __attribute__((always_inline)) bool fill_body(const Geo& g, const float* x, float* pad) {
    const V8 ninf = V8{} + kNegInf;
    I8 nan = {};  // lanes that saw a NaN
    bool tail_nan = false;
    const int64_t lead = std::min(g.pl, g.pitch);
    const int64_t w = std::min(g.in_w, g.pitch - lead);  // the input columns windows can reach
    for (int64_t r = 0; r < g.rows; ++r) {
        float* d = pad + r * g.pitch;
        for (int64_t c = 0; c < g.pitch; c += 8) PG_STORE(d + c, ninf);
        const int64_t ih = r - g.pt;
        if (ih < 0 || ih >= g.in_h) continue;
        const float* s = x + ih * g.in_w;
        d += lead;
        int64_t i = 0;
        for (; i + 8 <= w; i += 8) {
            V8 v;
            PG_LOAD(v, s + i);
            nan |= v != v;
            PG_STORE(d + i, v);
        }
        for (; i < w; ++i) d[i] = s[i], tail_nan = tail_nan || s[i] != s[i];
    }
    for (int k = 0; k < 8; ++k) tail_nan = tail_nan || nan[k] != 0;
    return tail_nan;
}

// hmax row r, output column ox: the first of pad[r][ox * sw + k] over k < kw, then every
// greater one. KW = 0: g.kw taps.
template <int KW, int S>
inline __attribute__((always_inline)) void rows_body(const Geo& g, const float* pad, float* hmax) {
    const int64_t kw = KW ? KW : g.kw, step = S ? S : g.sw;
    for (int64_t r = 0; r < g.rows; ++r) {
        const float* s = pad + r * g.pitch;
        float* d = hmax + r * g.cols;
        for (int64_t ox = 0; ox < g.cols; ox += 8) {
            const float* p = s + ox * step;
            V8 cur, v;
            load_strided<S>(cur, p, g.sw);
            for (int64_t k = 1; k < kw; ++k) {
                load_strided<S>(v, p + k, g.sw);
                cur = v > cur ? v : cur;
            }
            PG_STORE(d + ox, cur);
        }
    }
}

// Output row oy: the first of hmax rows oy * sh + k over k < kh, then every greater one. Whole
// vectors go straight to y, the last partial one through `line`.
template <int KH>
inline __attribute__((always_inline)) void out_body(const Geo& g, const float* hmax, float* line,
                                                    float* y) {
    const int64_t kh = KH ? KH : g.kh;
    for (int64_t oy = 0; oy < g.out_h; ++oy) {
        const float* s = hmax + oy * g.sh * g.cols;
        float* yr = y + oy * g.out_w;
        for (int64_t ox = 0; ox < g.out_w; ox += 8) {
            V8 cur, v;
            PG_LOAD(cur, s + ox);
            for (int64_t k = 1; k < kh; ++k) {
                PG_LOAD(v, s + k * g.cols + ox);
                cur = v > cur ? v : cur;
            }
            if (ox + 8 <= g.out_w) {
                PG_STORE(yr + ox, cur);
            } else {
                PG_STORE(line, cur);
                std::copy_n(line, g.out_w - ox, yr + ox);
            }
        }
    }
}

#undef PG_LOAD
#undef PG_STORE

using PlaneFn = bool (*)(const Geo&, const float*, float*, float*, float*, float*);

template <int K, int S>
inline __attribute__((always_inline)) bool plane_body(const Geo& g, const float* x, float* y,
                                                      float* pad, float* hmax, float* line) {
    if (fill_body(g, x, pad)) return false;
    rows_body<K, S>(g, pad, hmax);
    out_body<K>(g, hmax, line, y);
    return true;
}

template <int K, int S>
bool plane_base(const Geo& g, const float* x, float* y, float* pad, float* hmax, float* line) {
    return plane_body<K, S>(g, x, y, pad, hmax, line);
}

#if defined(__x86_64__) && defined(__GNUC__)
template <int K, int S>
__attribute__((target("avx2"))) bool plane_avx2(const Geo& g, const float* x, float* y, float* pad,
                                                float* hmax, float* line) {
    return plane_body<K, S>(g, x, y, pad, hmax, line);
}
#endif

// The builds for windows 3x3 and any, each for column strides any, 1 and 2: AVX2 unless
// gemm_current_isa() is the baseline (the CPU has no AVX2, or a test forces it). An AVX-512
// build with 16-wide vectors measured 1.13-1.46x slower on 6x6 to 27x27 planes.
struct Builds {
    std::array<PlaneFn, 3> k3, any;
};

const Builds& current_builds() {
    static const Builds base{{&plane_base<3, 0>, &plane_base<3, 1>, &plane_base<3, 2>},
                             {&plane_base<0, 0>, &plane_base<0, 1>, &plane_base<0, 2>}};
#if defined(__x86_64__) && defined(__GNUC__)
    static const Builds avx2{{&plane_avx2<3, 0>, &plane_avx2<3, 1>, &plane_avx2<3, 2>},
                             {&plane_avx2<0, 0>, &plane_avx2<0, 1>, &plane_avx2<0, 2>}};
    if (gemm_current_isa() != GemmIsa::kBaseline) return avx2;
#endif
    return base;
}

PlaneFn plane_fn(const Window& g) {
    const Builds& b = current_builds();
    const size_t s = g.stride[2] <= 2 ? static_cast<size_t>(g.stride[2]) : 0;
    return (g.kernel[1] == 3 && g.kernel[2] == 3 ? b.k3 : b.any)[s];
}

// Padded rows, row-max positions (a multiple of 8) and the padded row pitch.
void sizes(const Window& g, int64_t* rows, int64_t* cols, int64_t* pitch) {
    *rows = (g.out[1] - 1) * g.stride[1] + g.kernel[1];
    *cols = round8(g.out[2]);
    // The row pass reads up to (cols - 1) * sw + kw - 1 (+ 1: a stride-2 load's odd lanes).
    *pitch = round8((*cols - 1) * g.stride[2] + g.kernel[2] + 1);
}

}  // namespace

bool SeparableMax::fits(const Window& g) {
    if (g.in[0] != 1 || g.kernel[0] != 1 || g.out[0] != 1 || g.dil[1] != 1 || g.dil[2] != 1)
        return false;
    for (int a = 1; a < 3; ++a)
        if (g.pad_begin[a] < 0 || g.pad_end[a] < 0 || g.stride[a] < 1 || g.kernel[a] < 1 ||
            g.stride[a] > kMaxFloats || g.kernel[a] > kMaxFloats || g.out[a] > kMaxFloats)
            return false;  // (the last three: sizes() stays inside int64)
    // Strided windows read each input value about once, which the exact loops also do; the
    // padded copy then pays only on small planes (3x3 stride 2, against the exact loops: 0.88-0.99
    // at 27x27, 1.03-1.18 at 54x54, 1.5 at 109x109; stride 1 0.29-0.41 at 6x6 to 27x27).
    if ((g.stride[1] > 1 || g.stride[2] > 1) && g.in_size() > kStridedMaxPlane) return false;
    int64_t rows, cols, pitch;
    sizes(g, &rows, &cols, &pitch);
    return rows <= kMaxFloats && pitch <= kMaxFloats && rows * pitch <= kMaxFloats;
}

SeparableMax::SeparableMax(const Window& g)
    : g_(g), fn_(reinterpret_cast<void (*)()>(plane_fn(g))) {
    sizes(g, &rows_, &cols_, &pitch_);
    pad_.resize(static_cast<size_t>(rows_ * pitch_));
    hmax_.resize(static_cast<size_t>(rows_ * cols_));
    line_.resize(8);
}

bool SeparableMax::plane(const float* x, float* y) {
    const Geo geo{g_.in[1],     g_.in[2],     g_.out[1],    g_.out[2],       g_.kernel[1],
                  g_.kernel[2], g_.stride[1], g_.stride[2], g_.pad_begin[1], g_.pad_begin[2],
                  rows_,        cols_,        pitch_};
    return reinterpret_cast<PlaneFn>(fn_)(geo, x, y, pad_.data(), hmax_.data(), line_.data());
}

}  // namespace pg::ops
