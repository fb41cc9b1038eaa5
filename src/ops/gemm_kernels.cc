// The float32 fast GEMM: B is packed into column panels of kNr, A into row panels of kMr, and a
// micro-kernel keeps a kMr x kNr tile of C in registers (the compiler vectorizes its simple
// loops). The micro-kernel is compiled twice, for the x86-64 baseline and for AVX2+FMA, and
// chosen at run time. Work is split over (row block, column block) tiles on the thread pool.
#include "ops/gemm_kernels.h"

#include <algorithm>
#include <vector>

#include "base/thread_pool.h"

namespace pg::ops {

void gemm_reference(const GemmArgs<float>& g) {
    gemm_plain(g);
}

void run_parallel(ThreadPool* pool, int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
    if (n <= 0) return;
    if (!pool || pool->num_threads() <= 1 || n == 1) return fn(0, n);
    pool->parallel_for(n, 1, fn);
}

namespace {

constexpr int kMr = 6, kNr = 16;
constexpr int64_t kKc = 256, kMc = 96, kNc = 512;  // kMc % kMr == 0, kNc % kNr == 0

using MicroFn = void (*)(int64_t kc, const float* ap, const float* bp, float* c, int64_t ldc,
                         int mr, int nr, float alpha);

// Eight floats; GCC lowers it to one AVX register or two SSE registers.
typedef float V8 __attribute__((vector_size(32)));

// C[mr x nr] += alpha * Ap (kc x kMr panel) * Bp (kc x kNr panel).
inline __attribute__((always_inline)) void micro_body(int64_t kc, const float* ap, const float* bp,
                                                      float* c, int64_t ldc, int mr, int nr,
                                                      float alpha) {
    V8 acc[kMr][2] = {};
    for (int64_t p = 0; p < kc; ++p) {
        V8 b0, b1;
        __builtin_memcpy(&b0, bp + p * kNr, sizeof b0);
        __builtin_memcpy(&b1, bp + p * kNr + 8, sizeof b1);
        for (int i = 0; i < kMr; ++i) {
            const float av = ap[p * kMr + i];
            acc[i][0] += av * b0;
            acc[i][1] += av * b1;
        }
    }
    for (int i = 0; i < mr; ++i) {
        float row[kNr];
        __builtin_memcpy(row, &acc[i][0], sizeof row);
        for (int j = 0; j < nr; ++j) c[i * ldc + j] += alpha * row[j];
    }
}

void micro_base(int64_t kc, const float* ap, const float* bp, float* c, int64_t ldc, int mr, int nr,
                float alpha) {
    micro_body(kc, ap, bp, c, ldc, mr, nr, alpha);
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2,fma"))) void micro_avx2(int64_t kc, const float* ap, const float* bp,
                                                    float* c, int64_t ldc, int mr, int nr,
                                                    float alpha) {
    micro_body(kc, ap, bp, c, ldc, mr, nr, alpha);
}
#endif

MicroFn pick_micro() {
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return micro_avx2;
#endif
    return micro_base;
}

// Packs rows [p0, p0+kc) x columns [j0, j0+nc) of op(B) into kNr-wide panels, zero-padded.
void pack_b(const GemmArgs<float>& g, int64_t p0, int64_t kc, int64_t j0, int64_t nc, float* dst) {
    for (int64_t jp = 0; jp < nc; jp += kNr) {
        const int64_t w = std::min<int64_t>(kNr, nc - jp);
        for (int64_t p = 0; p < kc; ++p, dst += kNr) {
            for (int64_t j = 0; j < w; ++j) {
                const int64_t col = j0 + jp + j, row = p0 + p;
                dst[j] = g.trans_b ? g.b[col * g.ldb + row] : g.b[row * g.ldb + col];
            }
            for (int64_t j = w; j < kNr; ++j) dst[j] = 0.0f;
        }
    }
}

// Packs rows [i0, i0+mc) x columns [p0, p0+kc) of op(A) into kMr-tall panels, zero-padded.
void pack_a(const GemmArgs<float>& g, int64_t i0, int64_t mc, int64_t p0, int64_t kc, float* dst) {
    for (int64_t ip = 0; ip < mc; ip += kMr) {
        const int64_t h = std::min<int64_t>(kMr, mc - ip);
        for (int64_t p = 0; p < kc; ++p, dst += kMr) {
            for (int64_t i = 0; i < h; ++i) {
                const int64_t row = i0 + ip + i, col = p0 + p;
                dst[i] = g.trans_a ? g.a[col * g.lda + row] : g.a[row * g.lda + col];
            }
            for (int64_t i = h; i < kMr; ++i) dst[i] = 0.0f;
        }
    }
}

// C = beta * C (C not read when beta == 0).
void scale_c(const GemmArgs<float>& g) {
    if (g.beta == 1.0f) return;
    for (int64_t i = 0; i < g.m; ++i) {
        float* row = g.c + i * g.ldc;
        if (g.beta == 0.0f)
            std::fill(row, row + g.n, 0.0f);
        else
            for (int64_t j = 0; j < g.n; ++j) row[j] *= g.beta;
    }
}

// One (row block, column block) tile for k-slice [p0, p0+kc) with B already packed.
void run_tile(const GemmArgs<float>& g, MicroFn micro, const float* bpack, int64_t p0, int64_t kc,
              int64_t i0, int64_t mc, int64_t j0, int64_t nc, std::vector<float>& apack) {
    apack.resize(static_cast<size_t>((mc + kMr - 1) / kMr * kMr * kc));
    pack_a(g, i0, mc, p0, kc, apack.data());
    for (int64_t jp = 0; jp < nc; jp += kNr) {
        const float* bp = bpack + jp * kc;
        const int nr = static_cast<int>(std::min<int64_t>(kNr, nc - jp));
        for (int64_t ip = 0; ip < mc; ip += kMr) {
            const int mr = static_cast<int>(std::min<int64_t>(kMr, mc - ip));
            float* c = g.c + (i0 + ip) * g.ldc + j0 + jp;
            micro(kc, apack.data() + ip * kc, bp, c, g.ldc, mr, nr, g.alpha);
        }
    }
}

}  // namespace

void gemm_fast(const GemmArgs<float>& g, ThreadPool* pool) {
    static const MicroFn micro = pick_micro();
    if (g.m <= 0 || g.n <= 0) return;
    scale_c(g);
    if (g.k <= 0 || g.alpha == 0.0f) return;
    const int64_t mblocks = (g.m + kMc - 1) / kMc, nblocks = (g.n + kNc - 1) / kNc;
    const int64_t npad = (g.n + kNr - 1) / kNr * kNr;
    std::vector<float> bpack;
    for (int64_t p0 = 0; p0 < g.k; p0 += kKc) {
        const int64_t kc = std::min(kKc, g.k - p0);
        bpack.resize(static_cast<size_t>(npad * kc));
        run_parallel(pool, nblocks, [&](int64_t b, int64_t e) {
            for (int64_t jb = b; jb < e; ++jb) {
                const int64_t j0 = jb * kNc;
                pack_b(g, p0, kc, j0, std::min(kNc, g.n - j0), bpack.data() + j0 * kc);
            }
        });
        run_parallel(pool, mblocks * nblocks, [&](int64_t b, int64_t e) {
            std::vector<float> apack;
            for (int64_t t = b; t < e; ++t) {
                const int64_t i0 = (t / nblocks) * kMc, j0 = (t % nblocks) * kNc;
                run_tile(g, micro, bpack.data() + j0 * kc, p0, kc, i0, std::min(kMc, g.m - i0), j0,
                         std::min(kNc, g.n - j0), apack);
            }
        });
    }
}

}  // namespace pg::ops
