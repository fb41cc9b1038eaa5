// A fixed pool of worker threads for data-parallel loops inside kernels. parallel_for splits
// [0, n) into chunks and runs them on the pool and the calling thread; it returns when all are
// done and rethrows the first exception a chunk threw. Idle workers spin briefly before they
// sleep (thread_pool.cc), so back-to-back small jobs do not pay a futex wake-up each.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

namespace pg {

class ThreadPool {
  public:
    // `threads` = total threads including the caller (<= 1 means run inline).
    explicit ThreadPool(int threads);
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    int num_threads() const { return threads_; }
    // Calls fn(begin, end) on disjoint ranges covering [0, n); ranges have at least `grain` items.
    void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);
    // Calls fn(t, t + 1) for each part t < num_threads(), part t on pool thread t when it comes
    // for it (the caller is thread 0): a kernel that splits its work into the same parts call
    // after call runs each part on the same core, whose caches hold what the part wrote last
    // time. A thread that finds its own part taken, or is done with it, runs any part not yet
    // started, so a thread the OS has not scheduled holds nobody up.
    void parallel_parts(const std::function<void(int64_t, int64_t)>& fn);
    // Calls fn(begin, end) on disjoint ranges covering [0, n): thread t's share is the t-th of
    // num_threads() contiguous ranges, which it runs front to back in calls of `chunk` items; a
    // thread done with its own share takes the back half of what another has not started, again
    // and again, so a late or slow thread holds the others up for about one chunk. Most items
    // land on the same thread call after call, as with parallel_parts. Every call gets `grain`
    // items or more (inline when n < 2 * grain); the shares need n >= threads * grain to hold a
    // grain each, which the caller sees to.
    void parallel_shares(int64_t n, int64_t chunk, int64_t grain,
                         const std::function<void(int64_t, int64_t)>& fn);

  private:
    struct Impl;
    int threads_;
    std::unique_ptr<Impl> impl_;
};

// Tests and benches: waiting threads (idle workers, a caller waiting for its job) spin without
// yielding their core for their first 50 us (on, the default) or yield between every burst of
// spinning (off). Process-wide; returns the previous setting.
bool set_pool_late_yield(bool on);

// Number of cores available to this process.
int hardware_threads();

}  // namespace pg
