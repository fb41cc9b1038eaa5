// Transpose's blocked path for 4-byte elements (ops/transpose_tiles.h) against transpose_plain:
// matrix transposes, NCHW <-> NHWC, attention's K^T and random permutations of random shapes
// (sides not multiples of the 8 x 8 tile included), AVX2 and scalar tiles, with and without the
// pool; and transpose_block32 itself against the definition.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "base/thread_pool.h"
#include "ops/tensor_shape_take.h"
#include "ops/transpose_tiles.h"

namespace pg {
namespace {

using Dims = std::vector<int64_t>;

Tensor random_tensor(DataType dt, Dims dims, std::mt19937& rng) {
    Tensor t = Tensor::zeros(dt, std::move(dims));
    uint8_t* p = t.mutable_bytes();
    for (uint64_t i = 0; i < t.nbytes(); ++i) p[i] = static_cast<uint8_t>(rng());
    return t;
}

struct ForceScalar {
    explicit ForceScalar(bool s) { ops::transpose_block32_force_scalar(s); }
    ~ForceScalar() { ops::transpose_block32_force_scalar(false); }
};

TEST(OpsTransposeTiles, BlockMatchesDefinition) {
    std::mt19937 rng(41);
    for (bool scalar : {false, true}) {
        ForceScalar f(scalar);
        for (int t = 0; t < 200; ++t) {
            const int64_t rows = 1 + rng() % 40, cols = 1 + rng() % 40;
            const int64_t ss = rows + rng() % 5, ds = cols + rng() % 5;
            std::vector<uint32_t> src(static_cast<size_t>(cols * ss));
            for (uint32_t& v : src) v = rng();
            std::vector<uint32_t> dst(static_cast<size_t>(rows * ds), 0xA5A5A5A5u), want(dst);
            for (int64_t k = 0; k < rows; ++k)
                for (int64_t j = 0; j < cols; ++j)
                    want[size_t(k * ds + j)] = src[size_t(j * ss + k)];
            ops::transpose_block32(src.data(), ss, dst.data(), ds, rows, cols);
            ASSERT_EQ(dst, want) << rows << " x " << cols << " scalar " << scalar;
        }
    }
}

TEST(OpsTransposeTiles, TransposeMatchesPlain) {
    std::mt19937 rng(42);
    ThreadPool pool(2);
    const std::vector<std::pair<Dims, Dims>> fixed = {
        {{37, 70}, {1, 0}},
        {{1, 128, 4, 64}, {0, 2, 3, 1}},  // attention's K^T
        {{2, 3, 17, 9}, {0, 2, 3, 1}},    // NCHW -> NHWC
        {{2, 17, 9, 3}, {0, 3, 1, 2}},    // NHWC -> NCHW
        {{300, 260}, {1, 0}},             // large: strips over the pool
        {{8, 8}, {1, 0}},
        {{0, 5}, {1, 0}}};
    for (bool scalar : {false, true}) {
        ForceScalar f(scalar);
        for (int t = 0; t < 160; ++t) {
            Dims dims, perm;
            if (t < static_cast<int>(fixed.size())) {
                dims = fixed[size_t(t)].first, perm = fixed[size_t(t)].second;
            } else {
                const int rank = 2 + t % 3;
                for (int i = 0; i < rank; ++i) dims.push_back(1 + rng() % (i % 2 ? 21 : 11));
                perm.resize(size_t(rank));
                std::iota(perm.begin(), perm.end(), 0);
                std::shuffle(perm.begin(), perm.end(), rng);
            }
            const DataType dt = t % 3 == 0 ? DataType::kInt32 : DataType::kFloat32;
            const Tensor x = random_tensor(dt, dims, rng);
            ThreadPool* p = t % 2 ? &pool : nullptr;
            EXPECT_TRUE(ops::transpose_fast(x, perm, p)
                            .same_contents(ops::transpose_plain(x, perm, nullptr)))
                << "t " << t << " scalar " << scalar;
        }
    }
}

}  // namespace
}  // namespace pg
