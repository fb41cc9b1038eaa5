// Block transposes (see transpose_tiles.h).
#include "ops/transpose_tiles.h"

#include <immintrin.h>

#include <algorithm>
#include <atomic>

namespace pg::ops {

namespace {

constexpr int64_t kTile = 8;

std::atomic<bool> g_force_scalar{false};

void block_scalar(const uint32_t* src, int64_t ss, uint32_t* dst, int64_t ds, int64_t rows,
                  int64_t cols) {
    for (int64_t k0 = 0; k0 < rows; k0 += kTile)
        for (int64_t j0 = 0; j0 < cols; j0 += kTile) {
            const int64_t k1 = std::min(rows, k0 + kTile), j1 = std::min(cols, j0 + kTile);
            for (int64_t k = k0; k < k1; ++k)
                for (int64_t j = j0; j < j1; ++j) dst[k * ds + j] = src[j * ss + k];
        }
}

// One full 8 x 8 tile: rows of src (8 consecutive k at one j) become columns of dst.
__attribute__((target("avx2"))) inline void tile8(const uint32_t* src, int64_t ss, uint32_t* dst,
                                                  int64_t ds) {
    __m256 r[8], t[8];
    for (int i = 0; i < 8; ++i)
        r[i] = _mm256_loadu_ps(reinterpret_cast<const float*>(src + i * ss));
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 8; i += 4) {
        r[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
        r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
        r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
        r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
    }
    // r[0..3]: columns 0, 1, 2, 3 of rows 0-3 (low half) and 4-7 of them (high half); r[4..7]
    // the same for rows 4-7.
    for (int c = 0; c < 4; ++c) {
        const __m256 lo = _mm256_permute2f128_ps(r[c], r[c + 4], 0x20);
        const __m256 hi = _mm256_permute2f128_ps(r[c], r[c + 4], 0x31);
        _mm256_storeu_ps(reinterpret_cast<float*>(dst + c * ds), lo);
        _mm256_storeu_ps(reinterpret_cast<float*>(dst + (c + 4) * ds), hi);
    }
}

__attribute__((target("avx2"))) void block_avx2(const uint32_t* src, int64_t ss, uint32_t* dst,
                                                int64_t ds, int64_t rows, int64_t cols) {
    const int64_t rk = rows - rows % kTile, cj = cols - cols % kTile;
    for (int64_t k0 = 0; k0 < rk; k0 += kTile)
        for (int64_t j0 = 0; j0 < cj; j0 += kTile)
            tile8(src + j0 * ss + k0, ss, dst + k0 * ds + j0, ds);
    if (cj < cols) block_scalar(src + cj * ss, ss, dst + cj, ds, rk, cols - cj);
    if (rk < rows) block_scalar(src + rk, ss, dst + rk * ds, ds, rows - rk, cols);
}

}  // namespace

void transpose_block32(const uint32_t* src, int64_t src_stride, uint32_t* dst, int64_t dst_stride,
                       int64_t rows, int64_t cols) {
    static const bool avx2 = __builtin_cpu_supports("avx2");
    if (avx2 && !g_force_scalar.load(std::memory_order_relaxed))
        return block_avx2(src, src_stride, dst, dst_stride, rows, cols);
    block_scalar(src, src_stride, dst, dst_stride, rows, cols);
}

void transpose_block32_force_scalar(bool scalar) {
    g_force_scalar.store(scalar);
}

}  // namespace pg::ops
