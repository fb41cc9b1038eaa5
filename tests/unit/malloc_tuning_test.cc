// tune_malloc_for_inference: after it, a block of tensor size (30 MiB, under the 32 MiB
// threshold) comes from malloc's heap instead of its own mapping, and freeing it keeps the memory.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "base/malloc_tuning.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace pg {
namespace {

TEST(MallocTuning, TensorSizedBlocksComeFromTheHeap) {
#if defined(__GLIBC__)
    ASSERT_TRUE(tune_malloc_for_inference());
    ASSERT_TRUE(tune_malloc_for_inference());  // once per process; later calls report the same
    const size_t size = size_t{30} << 20;
    const size_t mapped_before = mallinfo2().hblkhd;
    void* p = std::malloc(size);
    ASSERT_NE(p, nullptr);
    std::memset(p, 1, size);
    EXPECT_EQ(mallinfo2().hblkhd, mapped_before) << "the block was mapped on its own";
    std::free(p);
    EXPECT_GE(mallinfo2().fordblks, size) << "the freed block was returned to the system";
#else
    EXPECT_FALSE(tune_malloc_for_inference());
#endif
}

}  // namespace
}  // namespace pg
