// retain_heap_between_runs: freed memory at the top of the heap stays resident instead of going
// back to the system, and large blocks come from the heap (glibc; elsewhere it reports that
// nothing was set). release_free_heap: free pages inside the heap leave on request.
#include <gtest/gtest.h>

#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "base/error.h"
#include "base/heap.h"
#include "support/expect_error.h"
#include "tensor/tensor.h"

namespace pg {
namespace {

// Makes the block's contents observable, so the compiler keeps the allocation and its writes.
void keep(const void* p) {
    asm volatile("" : : "r"(p) : "memory");
}

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
        keep(blocks.back());
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

// Minor page faults of this process so far.
long minor_faults() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_minflt;
}

TEST(BaseHeap, LargeBlocksComeBackWithoutFaults) {
#if !defined(__GLIBC__)
    GTEST_SKIP() << "only glibc maps large blocks this way";
#else
    ASSERT_TRUE(retain_heap_between_runs());
    // Use up the free top of the heap first (earlier tests may have left one), so that the block
    // below cannot simply be cut from it.
    const size_t top = mallinfo2().keepcost;
    char* filler = top > 4096 ? new char[top - 4096] : nullptr;
    keep(filler);
    // 8 MiB: above glibc's default mmap threshold, so without the setting every allocation would
    // be a fresh mapping, faulted in page by page (2,048 faults).
    const size_t size = 8 << 20;
    char* first = new char[size];
    std::memset(first, 1, size);
    keep(first);
    delete[] first;
    const long before = minor_faults();
    char* again = new char[size];
    std::memset(again, 2, size);
    keep(again);
    const long faults = minor_faults() - before;
    delete[] again;
    delete[] filler;
    EXPECT_LT(faults, 256) << faults << " faults re-touching a freed 8 MiB block";
#endif
}

TEST(BaseHeap, ReleaseFreeHeapReturnsFreePagesBelowUsedBlocks) {
#if !defined(__GLIBC__)
    GTEST_SKIP() << "only glibc's heap is trimmed this way";
#else
    ASSERT_TRUE(retain_heap_between_runs());  // nothing leaves by itself
    // 16 MiB of small blocks, then a block above them that stays: the freed blocks are inside the
    // heap, not at its top, so only an explicit trim can return their pages.
    const size_t block = 1 << 10, count = 16 << 10;
    std::vector<char*> blocks;
    for (size_t i = 0; i < count; ++i) {
        blocks.push_back(new char[block]);
        std::memset(blocks.back(), 1, block);
        keep(blocks.back());
    }
    char* fence = new char[block];
    keep(fence);
    for (char* b : blocks) delete[] b;
    const long before = resident_pages();
    release_free_heap();
    const long after = resident_pages();
    delete[] fence;
    ASSERT_GT(before, 0);
    const long page = sysconf(_SC_PAGESIZE);
    EXPECT_LT(after, before - long((12 << 20) / page))
        << "before " << before << ", after " << after;
#endif
}

// A working set larger than the machine is refused with the request and the machine's size in
// the message; one that fits passes.
TEST(BaseHeap, RequestsBeyondPhysicalMemoryAreInvalidInput) {
    const double have = static_cast<double>(physical_memory_bytes());
    ASSERT_GT(have, 0);
    EXPECT_NO_THROW(require_memory_for(1024.0, "small"));
    try {
        require_memory_for(have * 2, "Huge op");
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
        EXPECT_NE(std::string(e.what()).find("Huge op would need"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("GiB"), std::string::npos) << e.what();
    }
}

// A ceiling below the machine refuses what the machine alone would allow, naming the ceiling
// (a tensor's allocation too); a ceiling above it changes nothing, and 0 restores the machine's.
TEST(BaseHeap, AMemoryCeilingLowersTheLimit) {
    const double have = static_cast<double>(physical_memory_bytes());
    ASSERT_GT(have, 0);
    const uint64_t before = set_memory_ceiling(1 << 20);
    EXPECT_NO_THROW(require_memory_for(1 << 20, "at the ceiling"));
    test::expect_error([] { require_memory_for((1 << 20) + 1, "Past op"); },
                       ErrorKind::kInvalidInput, "Past op would need");
    test::expect_error([] { require_memory_for((1 << 20) + 1, "Past op"); },
                       ErrorKind::kInvalidInput, "more than the memory ceiling's");
    EXPECT_THROW(Tensor::zeros(DataType::kFloat32, {1024, 1024}), Error);
    set_memory_ceiling(static_cast<uint64_t>(have * 4));
    EXPECT_NO_THROW(require_memory_for(have, "the machine's size"));
    EXPECT_EQ(set_memory_ceiling(0), static_cast<uint64_t>(have * 4));
    EXPECT_NO_THROW(require_memory_for(have / 2, "half the machine"));
    set_memory_ceiling(before);
}

}  // namespace
}  // namespace pg
