// Winograd F(2x2, 3x3) convolution (see conv_winograd.h). Layout of the scratch, per block of
// kn output channels and band of tile rows holding nt tiles:
//   u[xi][k][c]  transformed filters (xi = 4 * row + column of the 4x4 transform)
//   v[xi][c][t]  transformed input tiles
//   p[xi][k][t]  the 16 products u[xi] (kn x cg) * v[xi] (cg x nt)
// so every GEMM is row-major with the output channels as rows, like the direct Conv's.
#include "ops/conv_winograd.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <string>

#include "base/aligned.h"
#include "base/thread_pool.h"
#include "ops/conv_winograd_tx.h"
#include "ops/gemm_direct.h"

namespace pg::ops {
namespace {

// On unless the environment says PG_CONV_WINOGRAD=0 (benchmarks compare both paths with it).
std::atomic<bool> g_enabled{[] {
    const char* v = std::getenv("PG_CONV_WINOGRAD");
    return !(v && std::string(v) == "0");
}()};
std::atomic<bool> g_filters_once{true};  // set_winograd_filters_once
std::atomic<bool> g_any_size{false};     // set_winograd_any_size

// Scratch per call: 2 MiB, or half the layer's weights when more (the run's memory target is
// relative to weights plus activations); a quarter holds a block of transformed filters, the
// rest a band of transformed input tiles and their products (each thread running blocks as
// tasks holds a block's filters and products of its own).
int64_t scratch_bytes(int64_t cg, int64_t mg) {
    return std::max<int64_t>(int64_t{2} << 20, mg * cg * 9 * 4 / 2);
}

WinoGeometry geometry_of(const Window& g) {
    WinoGeometry s;
    s.ih = g.in[1], s.iw = g.in[2], s.oh = g.out[1], s.ow = g.out[2];
    s.th = (s.oh + 1) / 2, s.tw = (s.ow + 1) / 2, s.pt = g.pad_begin[1], s.pl = g.pad_begin[2];
    return s;
}

AlignedArray<float> scratch(int64_t n) {
    return aligned_array<float>(static_cast<size_t>(n));
}

// p[xi] = u[xi] * v[xi] for the 16 positions, one GEMM per task.
void multiply(const float* u, const float* v, float* p, int64_t kn, int64_t cg, int64_t nt,
              ThreadPool* pool) {
    const bool direct = gemm_direct_available();
    run_parallel(pool, 16, [&](int64_t b, int64_t e) {
        for (int64_t xi = b; xi < e; ++xi) {
            GemmArgs<float> g;
            g.m = kn, g.n = nt, g.k = cg;
            g.a = u + xi * kn * cg, g.lda = cg;
            g.b = v + xi * cg * nt, g.ldb = nt;
            g.c = p + xi * kn * nt, g.ldc = nt;
            if (direct)
                gemm_direct_dense(g, nullptr);
            else
                gemm_fast(g, nullptr);
        }
    });
}

// One block of kb output channels from k0 over tile rows [ty0, ty1), in the calling thread:
// its filters transformed into u, multiplied with the transformed input v into p, and
// transformed back into y.
void run_block(const WinoGeometry& s, int64_t cg, const GemmArgs<float>& a, int64_t k0, int64_t kb,
               int64_t ty0, int64_t ty1, const float* v, float* u, float* p) {
    const int64_t nt = (ty1 - ty0) * s.tw;
    wino_filters(a.a, cg, k0, kb, 0, kb, u);
    multiply(u, v, p, kb, cg, nt, nullptr);
    wino_output(s, p, k0, kb, ty0, ty1, 0, kb, a.c, a.ldc, a.epilogue);
}

// Tile rows [ty0, ty1): the input transformed once into v, then the blocks of kn output
// channels, each with a block's scratch for its filters and products. With at least two blocks
// per thread, each block is one task with scratch of its own (1-1.5 % faster than the phases
// below in vgg19, zoo_resnet_style and resnet50 with 2 threads, runs interleaved in one process);
// otherwise block after block, each phase over the pool.
// `filters`: every filter already transformed (kn == a.m), else nullptr.
void run_band(const WinoGeometry& s, const float* xg, int64_t cg, const GemmArgs<float>& a,
              int64_t kn, int64_t ty0, int64_t ty1, float* v, const float* filters,
              ThreadPool* pool) {
    const int64_t nt = (ty1 - ty0) * s.tw, blocks = (a.m + kn - 1) / kn;
    const int threads = pool ? pool->num_threads() : 1;
    run_parallel(pool, cg, [&](int64_t b, int64_t e) { wino_input(s, xg, cg, ty0, ty1, b, e, v); });
    if (!filters && threads > 1 && blocks >= 2 * threads) {
        run_parallel(pool, blocks, [&](int64_t b, int64_t e) {
            const auto buf = scratch(16 * kn * (cg + nt));
            for (int64_t blk = b; blk < e; ++blk)
                run_block(s, cg, a, blk * kn, std::min(kn, a.m - blk * kn), ty0, ty1, v, buf.get(),
                          buf.get() + 16 * kn * cg);
        });
        return;
    }
    const auto buf = scratch(16 * kn * ((filters ? 0 : cg) + nt));
    float *u = buf.get(), *p = u + (filters ? 0 : 16 * kn * cg);
    for (int64_t k0 = 0; k0 < a.m; k0 += kn) {
        const int64_t kb = std::min(kn, a.m - k0);
        if (!filters)
            run_parallel(pool, kb,
                         [&](int64_t b, int64_t e) { wino_filters(a.a, cg, k0, kb, b, e, u); });
        multiply(filters ? filters : u, v, p, kb, cg, nt, pool);
        run_parallel(pool, kb, [&](int64_t b, int64_t e) {
            wino_output(s, p, k0, kb, ty0, ty1, b, e, a.c, a.ldc, a.epilogue);
        });
    }
}

}  // namespace

bool set_conv_winograd(bool on) {
    return g_enabled.exchange(on);
}

bool set_winograd_filters_once(bool on) {
    return g_filters_once.exchange(on);
}

bool set_winograd_any_size(bool on) {
    return g_any_size.exchange(on);
}

bool winograd_takes(const Window& g, int64_t cg, int64_t mg) {
    if (g.nd != 2 || g.kernel[1] != 3 || g.kernel[2] != 3) return false;
    if (g.stride[1] != 1 || g.stride[2] != 1 || g.dil[1] != 1 || g.dil[2] != 1) return false;
    return g.pad_begin[1] >= 0 && g.pad_begin[2] >= 0 && cg >= 64 && mg >= 64;
}

bool winograd_fits(const Window& g, int64_t cg, int64_t mg) {
    if (!winograd_takes(g, cg, mg)) return false;
    // Measured on an Intel Xeon with two 512-bit FMA units per core (single layers against the
    // direct path with 2 threads, the default on the 2-core machine, then kernel_ab in the bench
    // models): the direct GEMMs run twice as many multiply-adds per cycle as on the AMD Zen 4
    // this rule was first fitted on (tiles >= 100, or >= 49 with 256 channels), and Winograd's
    // 16 single-threaded GEMMs per band scale worse across threads. It now pays only on large
    // maps: 0.95-1.0 of the direct time at 112x112 and 224x224 and with 256 channels at 56x56;
    // 1.04-1.79 at 56x56 with 64 to 128 channels, 1.1-1.7 at 28x28, 1.2 at 14x14. (With one
    // thread it still takes 0.84-0.91 at 56x56 and larger, so vgg19 runs 0.94 with it there.)
    const int64_t tiles = ((g.out[1] + 1) / 2) * ((g.out[2] + 1) / 2);
    return g_any_size.load(std::memory_order_relaxed) || tiles >= 3136 ||
           (tiles >= 784 && cg >= 256 && mg >= 256);
}

bool conv_winograd(const Window& g, const float* xg, int64_t cg, const GemmArgs<float>& a,
                   ThreadPool* pool) {
    if (!g_enabled.load(std::memory_order_relaxed) || !winograd_fits(g, cg, a.m)) return false;
    const WinoGeometry s = geometry_of(g);
    // Output channels per filter block, and tile rows per band (at least one). When the image
    // takes several bands and every transformed filter fits in the budget beside bands as many
    // as before, all filters are transformed once up front (one block) instead of once per band
    // (measured on single layers, 2 threads: 64 @224 0.78, 64 @56 0.89, 64 -> 128 @112 0.90;
    // where it would take more bands, 128 @28 and 128 @112, it was 0.94-1.08, so those stay).
    const int64_t budget = scratch_bytes(cg, a.m), all_filters = 64 * a.m * cg;  // bytes
    const int64_t kn_blocks = std::clamp<int64_t>(budget / 4 / (64 * cg) / 16 * 16, 16, a.m);
    const int64_t rows_blocks =
        std::clamp<int64_t>(budget * 3 / 4 / (64 * (cg + kn_blocks)) / s.tw, 1, s.th);
    const int64_t rows_once = std::clamp<int64_t>(
        std::max<int64_t>(0, budget - all_filters) / (64 * (cg + a.m)) / s.tw, 1, s.th);
    const auto bands = [&](int64_t rows) { return (s.th + rows - 1) / rows; };
    const bool once = g_filters_once.load(std::memory_order_relaxed) && rows_blocks < s.th &&
                      all_filters <= budget / 2 && bands(rows_once) <= bands(rows_blocks);
    const int64_t kn = once ? a.m : kn_blocks, band_rows = once ? rows_once : rows_blocks;
    AlignedArray<float> filters;
    if (once) {
        filters = scratch(16 * a.m * cg);
        run_parallel(pool, a.m, [&](int64_t b, int64_t e) {
            wino_filters(a.a, cg, 0, a.m, b, e, filters.get());
        });
    }
    const auto v = scratch(16 * cg * band_rows * s.tw);
    for (int64_t ty0 = 0; ty0 < s.th; ty0 += band_rows)
        run_band(s, xg, cg, a, kn, ty0, std::min(s.th, ty0 + band_rows), v.get(), filters.get(),
                 pool);
    return true;
}

}  // namespace pg::ops
