// The pool (see thread_pool.h). Between jobs a worker spins for a short while (kSpin) on the
// job counter before it sleeps on a condition variable, and the caller spins the same way for
// the workers to finish: models run many small kernels back to back, and a futex wake-up per
// kernel costs more than the kernel. Only then does anyone block.
#include "base/thread_pool.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace pg {

namespace {

constexpr auto kSpin = std::chrono::microseconds(200);

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

// Spins until ready() or kSpin has passed, yielding the core between bursts (on a busy machine
// the thread being waited for may need it); returns ready().
template <typename Pred>
bool spin_until(Pred ready) {
    const auto end = std::chrono::steady_clock::now() + kSpin;
    while (true) {
        for (int i = 0; i < 64; ++i) {
            if (ready()) return true;
            cpu_relax();
        }
        std::this_thread::yield();  // a thread of ours waiting for this core gets it
        if (std::chrono::steady_clock::now() >= end) return ready();
    }
}

}  // namespace

struct ThreadPool::Impl {
    std::mutex mu;
    std::condition_variable wake, done;
    std::vector<std::thread> workers;
    const std::function<void(int64_t, int64_t)>* fn = nullptr;
    int64_t n = 0, chunk = 1;
    std::atomic<int64_t> next{0};
    std::atomic<int> active{0};
    std::atomic<uint64_t> generation{0};
    std::atomic<bool> stop{false};
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
            auto ready = [&] { return stop.load() || generation.load() != seen; };
            if (!spin_until(ready)) {
                std::unique_lock<std::mutex> lock(mu);
                wake.wait(lock, ready);
            }
            if (stop.load()) return;
            seen = generation.load();
            drain();
            if (active.fetch_sub(1) == 1) {
                std::lock_guard<std::mutex> lock(mu);  // the caller may be about to wait
                done.notify_all();
            }
        }
    }
};

ThreadPool::ThreadPool(int threads)
    : threads_(std::max(1, threads)), impl_(std::make_unique<Impl>()) {
    for (int i = 1; i < threads_; ++i)
        impl_->workers.emplace_back([this] { impl_->worker_loop(); });
}

ThreadPool::~ThreadPool() {
    {
        std::lock_guard<std::mutex> lock(impl_->mu);
        impl_->stop = true;
    }
    impl_->wake.notify_all();
    for (auto& t : impl_->workers) t.join();
}

void ThreadPool::parallel_for(int64_t n, int64_t grain,
                              const std::function<void(int64_t, int64_t)>& fn) {
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
        s.generation.fetch_add(1);  // seq_cst: the job fields above are visible to a spinner
    }
    s.wake.notify_all();
    s.drain();
    if (!spin_until([&] { return s.active.load() == 0; })) {
        std::unique_lock<std::mutex> lock(s.mu);
        s.done.wait(lock, [&] { return s.active.load() == 0; });
    }
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.error) std::rethrow_exception(s.error);
}

int hardware_threads() {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
    return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace pg
