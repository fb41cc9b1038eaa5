// ThreadPool: every index is covered exactly once over many back-to-back jobs (the spinning
// hand-off between jobs must not lose or repeat one), jobs after an idle pause (workers asleep),
// and an exception from a chunk reaches the caller; parallel_parts runs every part once, mostly
// on the same thread call after call, and an exception from a part reaches the caller;
// parallel_shares covers every item once in chunks (its own share front to back on the caller),
// a thread done early takes over most of a slow thread's share, and counts beyond its packed
// 32-bit counters fall back to fixed parts.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "base/thread_pool.h"

namespace pg {
namespace {

// Runs one job over [0, n) and checks every index was visited exactly once.
void expect_covered_once(ThreadPool& pool, int64_t n, int64_t grain) {
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    pool.parallel_for(n, grain, [&](int64_t b, int64_t e) {
        ASSERT_LE(0, b);
        ASSERT_LE(e, n);
        for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
    });
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << i;
}

TEST(ThreadPool, ManyBackToBackJobsCoverEveryIndexOnce) {
    for (int threads : {2, 3, 4}) {
        ThreadPool pool(threads);
        for (int job = 0; job < 500; ++job) expect_covered_once(pool, 1 + job % 97, 1);
    }
}

// Waiting threads that yield at once (the switch off) and after a quiet spin (on) hand jobs over
// the same way.
TEST(ThreadPool, BackToBackJobsWithEitherYieldSetting) {
    for (const bool late : {false, true}) {
        const bool was = set_pool_late_yield(late);
        ThreadPool pool(3);
        for (int job = 0; job < 200; ++job) expect_covered_once(pool, 1 + job % 53, 1);
        std::this_thread::sleep_for(std::chrono::microseconds(120));  // between quiet and sleep
        expect_covered_once(pool, 500, 3);
        set_pool_late_yield(was);
    }
}

TEST(ThreadPool, JobsAfterWorkersSleep) {
    ThreadPool pool(3);
    for (int job = 0; job < 3; ++job) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));  // past the spin: workers block
        expect_covered_once(pool, 1000, 7);
    }
}

TEST(ThreadPool, ExceptionReachesCaller) {
    ThreadPool pool(2);
    EXPECT_THROW(pool.parallel_for(100, 1,
                                   [](int64_t b, int64_t) {
                                       if (b == 0) throw std::runtime_error("chunk failed");
                                   }),
                 std::runtime_error);
    expect_covered_once(pool, 100, 1);  // the pool still works afterwards
}

// parallel_parts: parts [t, t + 1) for t < threads, each exactly once, interleaved with
// parallel_for jobs; and with every thread responsive, part 0 mostly on the caller and each
// other part mostly on one thread, call after call.
TEST(ThreadPool, PartsRunOnceEachMostlyOnTheSameThread) {
    for (int threads : {2, 3}) {
        ThreadPool pool(threads);
        std::map<int64_t, std::map<std::thread::id, int>> runs;  // part -> thread -> calls
        std::mutex mu;
        const int calls = 300;
        for (int call = 0; call < calls; ++call) {
            std::vector<std::atomic<int>> hits(static_cast<size_t>(threads));
            pool.parallel_parts([&](int64_t b, int64_t e) {
                ASSERT_EQ(e, b + 1);
                ASSERT_LT(b, threads);
                hits[static_cast<size_t>(b)].fetch_add(1);
                std::lock_guard<std::mutex> lock(mu);
                ++runs[b][std::this_thread::get_id()];
            });
            for (int t = 0; t < threads; ++t) ASSERT_EQ(hits[static_cast<size_t>(t)].load(), 1);
            if (call % 7 == 0) expect_covered_once(pool, 50, 1);
        }
        EXPECT_GE(runs[0][std::this_thread::get_id()], calls / 2);
        for (auto& [part, by_thread] : runs) {
            int most = 0;
            for (auto& [id, n] : by_thread) most = std::max(most, n);
            EXPECT_GE(most, calls / 2) << "part " << part << " moved between threads";
        }
    }
}

// An exception from any part reaches the caller, after every part has run.
TEST(ThreadPool, PartExceptionReachesCaller) {
    ThreadPool pool(3);
    for (int64_t bad = 0; bad < 3; ++bad) {
        std::vector<std::atomic<int>> hits(3);
        EXPECT_THROW(pool.parallel_parts([&](int64_t b, int64_t) {
            hits[static_cast<size_t>(b)].fetch_add(1);
            if (b == bad) throw std::runtime_error("part failed");
        }),
                     std::runtime_error);
        for (auto& h : hits) EXPECT_EQ(h.load(), 1);
    }
    expect_covered_once(pool, 100, 1);  // the pool still works afterwards
}

// parallel_shares over [0, n): each item once; the caller's own share [0, n / threads) from its
// front, in calls of `chunk` items.
TEST(ThreadPool, RangesCoverEachItemOnceInChunks) {
    for (int threads : {2, 3}) {
        ThreadPool pool(threads);
        for (int64_t n : {1, 2, 7, 100, 1000}) {
            std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
            std::mutex mu;
            std::vector<std::pair<int64_t, int64_t>> mine;  // the caller's calls, in order
            const auto caller = std::this_thread::get_id();
            pool.parallel_shares(n, 4, 1, [&](int64_t b, int64_t e) {
                ASSERT_LE(0, b);
                ASSERT_LT(b, e);
                ASSERT_LE(e, n);
                for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
                std::lock_guard<std::mutex> lock(mu);
                if (std::this_thread::get_id() == caller) mine.emplace_back(b, e);
            });
            for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1);
            if (n < threads) continue;  // inline, or no share for the caller
            // A caller the OS deschedules right after publishing the job can find every item
            // taken by the workers (seen once under a parallel ctest): nothing to check then.
            if (mine.empty()) continue;
            EXPECT_EQ(mine[0].first, 0) << n;  // its own share first, from the front
            EXPECT_LE(mine[0].second, 4) << n;  // one chunk
            if (n >= 100) {
                EXPECT_GT(mine.size(), 2u) << n;
            }
        }
    }
}

// A worker that takes 2 ms per call: the caller, done with its own half at once, takes the back
// half of what the worker has left again and again, so it runs most of the items.
TEST(ThreadPool, RangesOfASlowThreadMostlyMoveToTheFastOne) {
    ThreadPool pool(2);
    const auto caller = std::this_thread::get_id();
    std::atomic<int64_t> by_caller{0}, total{0};
    pool.parallel_shares(64, 4, 1, [&](int64_t b, int64_t e) {
        if (std::this_thread::get_id() != caller)
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        else
            by_caller += e - b;
        total += e - b;
    });
    EXPECT_EQ(total.load(), 64);
    EXPECT_GE(by_caller.load(), 48);  // its 32, then at least half of the worker's 32
}

TEST(ThreadPool, RangeExceptionReachesCaller) {
    ThreadPool pool(2);
    std::atomic<int64_t> total{0};
    EXPECT_THROW(pool.parallel_shares(100, 3, 1,
                                      [&](int64_t b, int64_t e) {
                                          total += e - b;
                                          if (b <= 50 && 50 < e) throw std::runtime_error("x");
                                      }),
                 std::runtime_error);
    EXPECT_EQ(total.load(), 100);  // every item was still handed out
    expect_covered_once(pool, 100, 1);
}

// 2^33 items (the fn only records its calls): beyond the 32-bit counters, one fixed range per
// thread.
TEST(ThreadPool, RangesBeyondThirtyTwoBitsRunInFixedParts) {
    ThreadPool pool(2);
    const int64_t n = int64_t{1} << 33;
    std::mutex mu;
    std::vector<std::pair<int64_t, int64_t>> got;
    pool.parallel_shares(n, 1, 1, [&](int64_t b, int64_t e) {
        std::lock_guard<std::mutex> lock(mu);
        got.emplace_back(b, e);
    });
    std::sort(got.begin(), got.end());
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0], std::make_pair(int64_t{0}, n / 2));
    EXPECT_EQ(got[1], std::make_pair(n / 2, n));
}

}  // namespace
}  // namespace pg
