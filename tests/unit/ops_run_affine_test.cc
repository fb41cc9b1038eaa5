// run_parts (ops/gemm_kernels.h): each item once, thread t's share front to back in chunks, a
// slow thread's tail taken over by the other; one range per thread with the switch off.
// run_affine (ops/gemm_kernels.h): [0, n) in contiguous ranges of at least `grain` items, at
// most one per pool thread, each item once; inline for small n or no pool; with the switch off,
// dynamically claimed chunks cover [0, n) the same way.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "base/thread_pool.h"
#include "ops/gemm_kernels.h"

namespace pg::ops {
namespace {

// The ranges run_affine hands out for n items, sorted.
std::vector<std::pair<int64_t, int64_t>> ranges(ThreadPool* pool, int64_t n, int64_t grain) {
    std::mutex mu;
    std::vector<std::pair<int64_t, int64_t>> got;
    run_affine(pool, n, grain, [&](int64_t b, int64_t e) {
        std::lock_guard<std::mutex> lock(mu);
        got.emplace_back(b, e);
    });
    std::sort(got.begin(), got.end());
    return got;
}

// The ranges are disjoint and cover [0, n) in order.
void expect_cover(const std::vector<std::pair<int64_t, int64_t>>& r, int64_t n) {
    int64_t at = 0;
    for (const auto& [b, e] : r) {
        EXPECT_EQ(b, at);
        EXPECT_LT(b, e);
        at = e;
    }
    EXPECT_EQ(at, n);
}

TEST(RunAffine, OneContiguousRangePerThread) {
    ThreadPool pool(3);
    for (int64_t n : {7, 100, 1000}) {
        const auto r = ranges(&pool, n, 1);
        EXPECT_EQ(r.size(), 3u) << n;
        expect_cover(r, n);
        for (size_t t = 0; t < r.size(); ++t) {  // range t is [n t / 3, n (t + 1) / 3)
            EXPECT_EQ(r[t].first, n * static_cast<int64_t>(t) / 3);
            EXPECT_EQ(r[t].second, n * static_cast<int64_t>(t + 1) / 3);
        }
    }
}

TEST(RunAffine, RangesHoldAGrainEach) {
    ThreadPool pool(4);
    const auto r = ranges(&pool, 250, 100);  // room for two ranges of 100 or more
    EXPECT_EQ(r.size(), 2u);
    expect_cover(r, 250);
    EXPECT_EQ(ranges(&pool, 100, 100).size(), 1u);  // n <= grain: inline
    EXPECT_EQ(ranges(nullptr, 1000, 1).size(), 1u);
    EXPECT_TRUE(ranges(&pool, 0, 1).empty());
}

TEST(RunAffine, SwitchedOffChunksCoverTheRangeToo) {
    ThreadPool pool(2);
    const bool was = set_affine_parts(false);
    const auto r = ranges(&pool, 1000, 10);
    set_affine_parts(was);
    expect_cover(r, 1000);
    EXPECT_GT(r.size(), 2u);  // parallel_for's chunks: n / (threads * 4) items each
}

// The calls run_parts makes for n items, sorted.
std::vector<std::pair<int64_t, int64_t>> part_calls(ThreadPool* pool, int64_t n) {
    std::mutex mu;
    std::vector<std::pair<int64_t, int64_t>> got;
    run_parts(pool, n, [&](int64_t b, int64_t e) {
        std::lock_guard<std::mutex> lock(mu);
        got.emplace_back(b, e);
    });
    std::sort(got.begin(), got.end());
    return got;
}

TEST(RunParts, CoversEachItemOnceInChunksOfEachShare) {
    ThreadPool pool(2);
    for (int64_t n : {2, 5, 64, 1000}) expect_cover(part_calls(&pool, n), n);
    EXPECT_GT(part_calls(&pool, 1000).size(), 2u);  // shares of 500 in chunks
    EXPECT_EQ(part_calls(&pool, 1).size(), 1u);
    EXPECT_EQ(part_calls(nullptr, 100).size(), 1u);
}

TEST(RunParts, OneRangePerThreadWithoutStealing) {
    ThreadPool pool(2);
    const bool was = set_steal_tails(false);
    const auto r = part_calls(&pool, 1000);
    set_steal_tails(was);
    ASSERT_EQ(r.size(), 2u);
    EXPECT_EQ(r[0], std::make_pair(int64_t{0}, int64_t{500}));
    EXPECT_EQ(r[1], std::make_pair(int64_t{500}, int64_t{1000}));
}

// A worker that takes 2 ms per call: the caller, done with its share, takes over the back half
// of what the worker has left, again and again.
TEST(RunParts, ASlowThreadsTailMovesToTheOther) {
    ThreadPool pool(2);
    const auto caller = std::this_thread::get_id();
    std::atomic<int64_t> by_caller{0};
    run_parts(&pool, 64, [&](int64_t b, int64_t e) {
        if (std::this_thread::get_id() != caller)
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        else
            by_caller += e - b;
    });
    EXPECT_GE(by_caller.load(), 40);
}

}  // namespace
}  // namespace pg::ops
