// The blocked layout's dims and reorders (nchwc.h). Four-byte elements move through 16 x 16
// register transposes with AVX-512F; other sizes, and ragged pixel tails, element by element.
#include <algorithm>
#include <cstring>

#include "base/error.h"
#include "ops/gemm_kernels.h"
#include "ops/nchwc.h"
#include "ops/pack_rows_avx512.h"

#if defined(__x86_64__) && defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define PG_NCHWC_LAYOUT_AVX512 1
#endif

namespace pg::ops {

namespace {

constexpr int64_t kB = kNchwcBlock;
constexpr int64_t kPixelsPerTask = 4096;

void check_channels(int64_t c) {
    if (c <= 0 || c % kB)
        throw Error(ErrorKind::kInternal,
                    "blocked layout: " + std::to_string(c) + " channels is not a multiple of 16");
}

// Pixels [p0, p1) of one block's first `lanes` channels: `to` blocks (src: the block's first
// channel plane, planes `plane` apart; dst: the block's lines), else unblocks (src: lines; dst:
// planes).
void move_elements(const char* src, char* dst, int64_t plane, int64_t p0, int64_t p1, size_t elem,
                   bool to, int64_t lanes) {
    for (int64_t p = p0; p < p1; ++p)
        for (int64_t l = 0; l < lanes; ++l) {
            const int64_t planar = (l * plane + p) * static_cast<int64_t>(elem);
            const int64_t lined = (p * kB + l) * static_cast<int64_t>(elem);
            if (to)
                std::memcpy(dst + lined, src + planar, elem);
            else
                std::memcpy(dst + planar, src + lined, elem);
        }
}

#ifdef PG_NCHWC_LAYOUT_AVX512
__attribute__((target("avx512f"))) int64_t move_floats(const float* src, float* dst, int64_t plane,
                                                       int64_t p0, int64_t p1, bool to) {
    int64_t p = p0;
    for (; p + 16 <= p1; p += 16) {
        __m512 t[16];
        if (to) {
            transpose16(src + p, plane, 15, t);
            for (int q = 0; q < 16; ++q) _mm512_storeu_ps(dst + (p + q) * kB, t[q]);
        } else {
            transpose16(src + p * kB, kB, 15, t);
            for (int q = 0; q < 16; ++q) _mm512_storeu_ps(dst + q * plane + p, t[q]);
        }
    }
    return p;
}
#endif

// Blocks into (to) or out of the blocked layout. Unblocking takes any channel count c: x holds
// ceil(c / 16) blocks an image, and the last block's lanes from c on are left behind.
void reorder(const void* x, int64_t n, int64_t c, int64_t plane, size_t elem, void* y,
             ThreadPool* pool, bool to) {
    if (to || c <= 0) check_channels(c);
    const int64_t per_image = (c + kB - 1) / kB, blocks = n * per_image;
    const int64_t chunks = (plane + kPixelsPerTask - 1) / kPixelsPerTask;
    const bool fast = elem == 4 && nchwc_available();
    const int64_t bytes = static_cast<int64_t>(elem);
    run_parallel(blocks * plane > (1 << 15) ? pool : nullptr, blocks * chunks,
                 [&](int64_t b, int64_t e) {
                     for (int64_t task = b; task < e; ++task) {
                         const int64_t blk = task / chunks, p0 = task % chunks * kPixelsPerTask;
                         const int64_t p1 = std::min(plane, p0 + kPixelsPerTask);
                         const int64_t image = blk / per_image, first = blk % per_image * kB;
                         const int64_t lanes = std::min(kB, c - first);
                         const int64_t lined = blk * kB * plane * bytes;
                         const int64_t planar = (image * c + first) * plane * bytes;
                         const auto* src = static_cast<const char*>(x) + (to ? planar : lined);
                         auto* dst = static_cast<char*>(y) + (to ? lined : planar);
                         int64_t p = p0;
#ifdef PG_NCHWC_LAYOUT_AVX512
                         if (fast && lanes == kB)
                             p = move_floats(reinterpret_cast<const float*>(src),
                                             reinterpret_cast<float*>(dst), plane, p0, p1, to);
#endif
                         move_elements(src, dst, plane, p, p1, elem, to, lanes);
                     }
                 });
}

}  // namespace

std::vector<int64_t> nchwc_dims(const std::vector<int64_t>& nchw) {
    if (nchw.size() < 2) throw Error(ErrorKind::kInternal, "blocked layout: rank < 2");
    check_channels(nchw[1]);
    std::vector<int64_t> out = nchw;
    out[1] /= kB;
    out.push_back(kB);
    return out;
}

std::vector<int64_t> nchw_dims(const std::vector<int64_t>& blocked) {
    if (blocked.size() < 3 || blocked.back() != kB)
        throw Error(ErrorKind::kInternal, "blocked layout: not a blocked shape");
    std::vector<int64_t> out(blocked.begin(), blocked.end() - 1);
    out[1] *= kB;
    return out;
}

void to_nchwc(const void* x, int64_t n, int64_t c, int64_t plane, size_t elem, void* y,
              ThreadPool* pool) {
    reorder(x, n, c, plane, elem, y, pool, true);
}

void from_nchwc(const void* x, int64_t n, int64_t c, int64_t plane, size_t elem, void* y,
                ThreadPool* pool) {
    reorder(x, n, c, plane, elem, y, pool, false);
}

}  // namespace pg::ops
