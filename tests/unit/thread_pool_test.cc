// ThreadPool: every index is covered exactly once over many back-to-back jobs (the spinning
// hand-off between jobs must not lose or repeat one), jobs after an idle pause (workers asleep),
// and an exception from a chunk reaches the caller; parallel_parts runs every part once, mostly
// on the same thread call after call, and an exception from a part reaches the caller.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>
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

}  // namespace
}  // namespace pg
