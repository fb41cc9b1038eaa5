#include "base/thread_pool.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace pg {

struct ThreadPool::Impl {
    std::mutex mu;
    std::condition_variable wake, done;
    std::vector<std::thread> workers;
    const std::function<void(int64_t, int64_t)>* fn = nullptr;
    int64_t n = 0, chunk = 1;
    std::atomic<int64_t> next{0};
    int active = 0;
    uint64_t generation = 0;
    bool stop = false;
    std::exception_ptr error;

    // Takes chunks until none is left.
    void drain() {
        while (true) {
            const int64_t begin = next.fetch_add(chunk);
            if (begin >= n) return;
            try {
                (*fn)(begin, std::min(n, begin + chunk));
            } catch (...) {
                std::lock_guard<std::mutex> lock(mu);
                if (!error) error = std::current_exception();
            }
        }
    }

    void worker_loop() {
        uint64_t seen = 0;
        while (true) {
            {
                std::unique_lock<std::mutex> lock(mu);
                wake.wait(lock, [&] { return stop || generation != seen; });
                if (stop) return;
                seen = generation;
            }
            drain();
            std::lock_guard<std::mutex> lock(mu);
            if (--active == 0) done.notify_all();
        }
    }
};

ThreadPool::ThreadPool(int threads) : threads_(std::max(1, threads)), impl_(std::make_unique<Impl>()) {
    for (int i = 1; i < threads_; ++i) impl_->workers.emplace_back([this] { impl_->worker_loop(); });
}

ThreadPool::~ThreadPool() {
    {
        std::lock_guard<std::mutex> lock(impl_->mu);
        impl_->stop = true;
    }
    impl_->wake.notify_all();
    for (auto& t : impl_->workers) t.join();
}

void ThreadPool::parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
    if (n <= 0) return;
    grain = std::max<int64_t>(1, grain);
    if (threads_ == 1 || n <= grain) {
        fn(0, n);
        return;
    }
    Impl& s = *impl_;
    {
        std::lock_guard<std::mutex> lock(s.mu);
        s.fn = &fn;
        s.n = n;
        s.chunk = std::max(grain, (n + threads_ * 4 - 1) / (threads_ * 4));
        s.next = 0;
        s.active = static_cast<int>(s.workers.size());
        s.error = nullptr;
        ++s.generation;
    }
    s.wake.notify_all();
    s.drain();
    std::unique_lock<std::mutex> lock(s.mu);
    s.done.wait(lock, [&] { return s.active == 0; });
    if (s.error) std::rethrow_exception(s.error);
}

int hardware_threads() {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
    return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace pg
