// aligned_bytes / aligned_array / aligned_zeros: cache-line aligned, zeroed where promised, and
// the buffers tensors are made of are aligned too.
#include <gtest/gtest.h>

#include <cstdint>
#include <new>
#include <vector>

#include "base/aligned.h"
#include "tensor/tensor.h"

namespace pg {
namespace {

bool aligned(const void* p) {
    return reinterpret_cast<uintptr_t>(p) % kCacheLine == 0;
}

TEST(Aligned, EverySizeIsCacheLineAligned) {
    // Small blocks come from the heap's bins, large ones (here up to 8 MiB) may be mapped: both
    // start 16 bytes into a malloc chunk.
    for (size_t n : {size_t{0}, size_t{1}, size_t{3}, size_t{63}, size_t{64}, size_t{65},
                     size_t{4096 + 16}, size_t{1} << 20, (size_t{8} << 20) + 4}) {
        const AlignedArray<uint8_t> a = aligned_array<uint8_t>(n);
        ASSERT_NE(a.get(), nullptr) << n;
        EXPECT_TRUE(aligned(a.get())) << n;
        if (n) a[n - 1] = 1;  // the whole size is usable
    }
}

TEST(Aligned, ZerosAreZero) {
    const AlignedArray<float> z = aligned_zeros<float>(1000);
    EXPECT_TRUE(aligned(z.get()));
    for (int i = 0; i < 1000; ++i) ASSERT_EQ(z[i], 0.0f) << i;
}

TEST(Aligned, HugeRequestThrowsBadAlloc) {
    EXPECT_THROW(aligned_bytes(SIZE_MAX - 8), std::bad_alloc);
    EXPECT_THROW(aligned_bytes(SIZE_MAX / 2), std::bad_alloc);
}

TEST(Aligned, SwitchOffGivesPlainBlocksAndRestores) {
    const bool before = set_aligned_buffers(false);
    EXPECT_TRUE(before);
    const AlignedArray<uint8_t> a = aligned_array<uint8_t>(100);
    EXPECT_NE(a.get(), nullptr);
    EXPECT_FALSE(set_aligned_buffers(true));
    EXPECT_TRUE(aligned(aligned_array<uint8_t>(100).get()));
}

TEST(Aligned, TensorBuffersAreAligned) {
    for (int64_t n : {1, 7, 1000, 300000}) {
        const Tensor t = Tensor::uninitialized(DataType::kFloat32, {n});
        EXPECT_TRUE(aligned(t.bytes())) << n;
        const Tensor z = Tensor::zeros(DataType::kFloat32, {n});
        EXPECT_TRUE(aligned(z.bytes())) << n;
        for (int64_t i = 0; i < n; ++i) ASSERT_EQ(z.bytes()[i * 4], 0) << i;
    }
}

TEST(Aligned, CopyOnWriteKeepsContentsAndAlignment) {
    Tensor a = Tensor::from_bytes(DataType::kFloat32, {3}, std::string(12, '\x01'));
    Tensor b = a;  // shared: the write copies
    b.mutable_bytes()[0] = 7;
    EXPECT_TRUE(aligned(b.bytes()));
    EXPECT_EQ(b.bytes()[0], 7);
    EXPECT_EQ(b.bytes()[11], 1);
    EXPECT_EQ(a.bytes()[0], 1);
}

}  // namespace
}  // namespace pg
