// retain_heap_between_runs: freed memory at the top of the heap stays resident instead of going
// back to the system (glibc; elsewhere it reports that nothing was set).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "base/heap.h"

namespace pg {
namespace {

// Resident pages of this process (/proc/self/statm), or -1.
long resident_pages() {
    FILE* f = std::fopen("/proc/self/statm", "r");
    if (!f) return -1;
    long size = 0, resident = -1;
    if (std::fscanf(f, "%ld %ld", &size, &resident) != 2) resident = -1;
    std::fclose(f);
    return resident;
}

TEST(BaseHeap, FreedHeapMemoryStaysResident) {
#if !defined(__GLIBC__)
    EXPECT_FALSE(retain_heap_between_runs());
    GTEST_SKIP() << "only glibc trims its heap this way";
#else
    ASSERT_TRUE(retain_heap_between_runs());
    EXPECT_TRUE(retain_heap_between_runs());  // idempotent
    // 32 MiB in 64 KiB blocks (below glibc's mmap threshold: heap memory), touched, then freed
    // from the top down so that it all ends in the top chunk, which glibc would trim.
    const size_t block = 64 << 10, count = 512;
    std::vector<char*> blocks;
    for (size_t i = 0; i < count; ++i) {
        blocks.push_back(new char[block]);
        std::memset(blocks.back(), 1, block);
    }
    const long before = resident_pages();
    for (size_t i = count; i-- > 0;) delete[] blocks[i];
    const long after = resident_pages();
    ASSERT_GT(before, 0);
    const long page = sysconf(_SC_PAGESIZE);
    // Without the setting about 8,000 pages (32 MiB) would leave; allow a little churn.
    EXPECT_GT(after, before - long((4 << 20) / page)) << "before " << before << ", after " << after;
#endif
}

}  // namespace
}  // namespace pg
