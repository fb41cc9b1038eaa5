// The tensor buffer cache (tensor/buffer_cache.h): a freed large buffer comes back for the next
// request of the same page-rounded size, small buffers bypass it, and the cached bytes plus the
// live ones never exceed (1 + kBufferCacheShare) x the peak of the live bytes.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "tensor/buffer_cache.h"
#include "tensor/tensor.h"

namespace pg {
namespace {

TEST(BufferCache, FreedLargeBufferIsReusedForTheSameSize) {
    buffer_cache_clear();
    const uint64_t n = 3 * kBufferCacheMin + 100;
    auto big = allocate_buffer(n);  // keeps the peak high enough to cache a second buffer
    auto a = allocate_buffer(n);
    const uint8_t* first = a.get();
    const BufferCacheStats before = buffer_cache_stats();
    a.reset();
    EXPECT_GE(buffer_cache_stats().cached_bytes, n);
    auto b = allocate_buffer(n + 50);  // the same number of pages
    EXPECT_EQ(b.get(), first);
    EXPECT_EQ(buffer_cache_stats().hits, before.hits + 1);
    auto c = allocate_buffer(n + kBufferCacheMin);  // another size: a miss
    EXPECT_NE(c.get(), first);
    EXPECT_EQ(buffer_cache_stats().misses, before.misses + 1);
}

TEST(BufferCache, SmallBuffersBypassTheCache) {
    buffer_cache_clear();
    const BufferCacheStats before = buffer_cache_stats();
    { auto s = allocate_buffer(kBufferCacheMin - 1); }
    const BufferCacheStats after = buffer_cache_stats();
    EXPECT_EQ(after.hits + after.misses, before.hits + before.misses);
    EXPECT_EQ(after.cached_bytes, 0u);
}

TEST(BufferCache, CachedAndLiveBytesStayWithinTheBudget) {
    buffer_cache_clear();
    std::mt19937 rng(4);
    std::uniform_int_distribution<uint64_t> size(kBufferCacheMin, 40 * kBufferCacheMin);
    std::vector<std::shared_ptr<uint8_t[]>> held;
    for (int i = 0; i < 400; ++i) {
        if (held.size() < 6 || rng() % 2)
            held.push_back(allocate_buffer(size(rng)));
        else
            held.erase(held.begin() + static_cast<long>(rng() % held.size()));
        const BufferCacheStats s = buffer_cache_stats();
        // A free only moves bytes from live to cached; a hit moves them back; a miss evicts.
        EXPECT_LE(static_cast<double>(s.live_bytes + s.cached_bytes),
                  (1.0 + kBufferCacheShare) * static_cast<double>(s.peak_live_bytes))
            << "step " << i;
    }
    held.clear();
    buffer_cache_clear();
    EXPECT_EQ(buffer_cache_stats().cached_bytes, 0u);
}

TEST(BufferCache, TensorsUseIt) {
    buffer_cache_clear();
    const BufferCacheStats before = buffer_cache_stats();
    { Tensor t = Tensor::uninitialized(DataType::kFloat32, {1, 64, 32, 32}); }
    Tensor u = Tensor::uninitialized(DataType::kFloat32, {64, 32, 32});
    const BufferCacheStats after = buffer_cache_stats();
    EXPECT_EQ(after.misses, before.misses + 1);
    EXPECT_EQ(after.hits, before.hits + 1);
}

}  // namespace
}  // namespace pg
