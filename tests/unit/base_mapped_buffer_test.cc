// mapped_bytes / mapped_array: page-aligned, zero, writable over the whole size, and given back
// to the system when dropped (its address is in no mapping of the process any more); KeptArray
// reuses its block until asked for more.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <string>

#include "base/mapped_buffer.h"

namespace pg {
namespace {

// Whether address p lies in one of this process's mappings (/proc/self/maps).
bool mapped(const void* p) {
    const uintptr_t at = reinterpret_cast<uintptr_t>(p);
    std::ifstream in("/proc/self/maps");
    std::string line;
    while (std::getline(in, line)) {
        const size_t dash = line.find('-'), space = line.find(' ');
        const uintptr_t lo = std::stoull(line.substr(0, dash), nullptr, 16);
        const uintptr_t hi = std::stoull(line.substr(dash + 1, space - dash - 1), nullptr, 16);
        if (at >= lo && at < hi) return true;
    }
    return false;
}

TEST(MappedBuffer, PageAlignedZeroAndWritable) {
    const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
    for (size_t n : {size_t{0}, size_t{1}, size_t{4095}, size_t{4097}, size_t{1} << 20}) {
        MappedArray<float> a = mapped_array<float>(n);
        ASSERT_NE(a.get(), nullptr) << n;
        EXPECT_EQ(reinterpret_cast<uintptr_t>(a.get()) % page, 0u) << n;
        EXPECT_EQ(a.get_deleter().bytes, (n ? n : 1) * sizeof(float)) << n;
        const size_t last = n ? n - 1 : 0;
        EXPECT_EQ(a[0], 0.0f);
        EXPECT_EQ(a[last], 0.0f);
        a[last] = 1.5f;  // the whole size is usable
        EXPECT_EQ(a[last], 1.5f);
    }
}

TEST(MappedBuffer, DroppingABufferUnmapsIt) {
    const void* at = nullptr;
    {
        MappedArray<char> a = mapped_array<char>(size_t{8} << 20);
        a[(size_t{8} << 20) - 1] = 1;
        at = a.get();
        EXPECT_TRUE(mapped(at));
    }
    EXPECT_FALSE(mapped(at));  // the pages went back with the buffer, not to a free list
}

TEST(MappedBuffer, KeptArrayGrowsOnlyWhenAskedForMore) {
    KeptArray<float> k;
    float* first = k.at_least(1000);
    ASSERT_NE(first, nullptr);
    first[999] = 2.0f;
    EXPECT_EQ(k.at_least(10), first);  // a smaller request reuses the block, its values kept
    EXPECT_EQ(k.at_least(1000), first);
    EXPECT_EQ(first[999], 2.0f);
    float* grown = k.at_least(size_t{1} << 20);  // more: a new mapping, the old one dropped
    grown[(size_t{1} << 20) - 1] = 1.0f;
    EXPECT_EQ(k.at_least(5), grown);
}

}  // namespace
}  // namespace pg
