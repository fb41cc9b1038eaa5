// The pool (see thread_pool.h). Each parallel_for publishes a Job; chunks are claimed from it
// with an atomic counter and the caller returns once every item is done, so a worker the OS has
// not scheduled yet never holds the caller up: the caller claims the chunks itself and a late
// worker finds none left (it holds a reference, so the finished Job stays valid). Between jobs a
// worker spins for a short while (kSpin, yielding the core between bursts after kQuietSpin) on
// the job counter before it sleeps on a condition variable, and the caller waits the same way:
// models run many small kernels back to back, and a futex wake-up per kernel costs more than the
// kernel. A parallel_parts Job has one flag per part instead of the counter: each thread tries
// its own part first, then the others, so the same part lands on the same thread when all are
// there. A parallel_shares Job has one range per thread, its unclaimed items [front, back) in
// one atomic word: the owner claims a chunk at a time from the front, a thread done with its own
// range takes the back half of what another has left (so a thread that started late or runs slow
// does not hold the others up for long, while most items stay on the thread that had them last
// call).
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
constexpr auto kQuietSpin = std::chrono::microseconds(50);
std::atomic<bool> g_late_yield{true};  // set_pool_late_yield

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

// Spins until ready() or kSpin has passed, yielding the core between bursts after the first
// kQuietSpin (on a busy machine the thread being waited for may need it); returns ready(). A
// thread that yields at once hands its core to any other runnable process for a whole time
// slice, and misses the next jobs meanwhile: with a busy loop at nice 5 beside the bench, the
// worker ran 7 % of ResNet-50's items and 1,570 of 2,310 jobs ran without it.
template <typename Pred>
bool spin_until(Pred ready) {
    const auto start = std::chrono::steady_clock::now();
    const auto end = start + kSpin, quiet = start + kQuietSpin;
    const bool late_yield = g_late_yield.load(std::memory_order_relaxed);
    while (true) {
        for (int i = 0; i < 64; ++i) {
            if (ready()) return true;
            cpu_relax();
        }
        const auto now = std::chrono::steady_clock::now();
        if (now >= end) return ready();
        if (!late_yield || now >= quiet) std::this_thread::yield();
    }
}

// One parallel_for call: [0, n) in chunks of `chunk`; or one parallel_parts call: n parts, part
// t claimed through taken[t] (its own part first by each thread).
struct Job {
    const std::function<void(int64_t, int64_t)>* fn = nullptr;
    int64_t n = 0, chunk = 1;
    int64_t n_parts = 0, grain = 1;              // parallel_shares: one per thread
    std::atomic<int64_t> next{0};                // first unclaimed item
    std::atomic<int64_t> done{0};                // items finished
    std::exception_ptr error;                    // the first exception (under the pool's mutex)
    std::unique_ptr<std::atomic<bool>[]> taken;  // parallel_parts: part t started
    // parallel_shares: per thread, the unclaimed items front | back << 32 (a line each).
    struct alignas(64) Range {
        std::atomic<uint64_t> items{0};
    };
    std::unique_ptr<Range[]> ranges;
};

uint64_t pack_range(int64_t front, int64_t back) {
    return static_cast<uint64_t>(front) | static_cast<uint64_t>(back) << 32;
}

// Claims `want` of r's items from the front, or (`from_back`) the back half; never leaves fewer
// than `grain` behind (it takes them too) nor takes fewer (unless r holds fewer). False when r is
// empty.
bool claim(Job::Range& r, int64_t want, int64_t grain, bool from_back, int64_t* begin,
           int64_t* end) {
    uint64_t v = r.items.load();
    while (true) {
        const int64_t f = static_cast<int64_t>(v & 0xffffffffu), b = static_cast<int64_t>(v >> 32);
        if (f >= b) return false;
        int64_t take = from_back ? (b - f + 1) / 2 : std::min(want, b - f);
        take = std::max(take, std::min(grain, b - f));
        if (b - f - take < grain) take = b - f;
        const uint64_t next = from_back ? pack_range(f, b - take) : pack_range(f + take, b);
        if (r.items.compare_exchange_weak(v, next)) {
            *begin = from_back ? b - take : f;
            *end = from_back ? b : f + take;
            return true;
        }
    }
}

}  // namespace

struct ThreadPool::Impl {
    std::mutex mu;
    std::condition_variable wake, finished;
    std::vector<std::thread> workers;
    std::shared_ptr<Job> job;  // the latest job (under mu)
    std::atomic<uint64_t> generation{0};
    std::atomic<bool> stop{false};

    // Runs fn(begin, end) of `j`, then counts the items done.
    void run(Job& j, int64_t begin, int64_t end) {
        try {
            (*j.fn)(begin, end);
        } catch (...) {
            std::lock_guard<std::mutex> lock(mu);
            if (!j.error) j.error = std::current_exception();
        }
        if (j.done.fetch_add(end - begin) + (end - begin) == j.n) {
            std::lock_guard<std::mutex> lock(mu);  // the caller may be about to wait
            finished.notify_all();
        }
    }

    // Claims and runs chunks of `j` until none is left; `self`: this thread's index (its own
    // part first in a parallel_parts job).
    void drain(Job& j, int self) {
        if (j.ranges) {
            const int64_t parts = j.n_parts;
            int64_t b = 0, e = 0;
            while (claim(j.ranges[self], j.chunk, j.grain, false, &b, &e)) run(j, b, e);
            for (int64_t k = 1; k < parts; ++k) {
                Job::Range& other = j.ranges[(self + k) % parts];
                while (claim(other, j.chunk, j.grain, true, &b, &e)) run(j, b, e);
            }
            return;
        }
        if (j.taken) {
            for (int64_t k = 0; k < j.n; ++k) {
                const int64_t t = (self + k) % j.n;
                if (!j.taken[t].exchange(true)) run(j, t, t + 1);
            }
            return;
        }
        while (true) {
            const int64_t begin = j.next.fetch_add(j.chunk);
            if (begin >= j.n) return;
            run(j, begin, std::min(j.n, begin + j.chunk));
        }
    }

    // Publishes j, runs its share in the calling thread and waits for the rest.
    void run_job(const std::shared_ptr<Job>& j) {
        {
            std::lock_guard<std::mutex> lock(mu);
            job = j;
            generation.fetch_add(1);
        }
        wake.notify_all();
        drain(*j, 0);
        auto all_done = [&] { return j->done.load() == j->n; };
        if (!spin_until(all_done)) {
            std::unique_lock<std::mutex> lock(mu);
            finished.wait(lock, all_done);
        }
        std::lock_guard<std::mutex> lock(mu);
        if (job == j) job.reset();  // fn dies with the call; late workers keep j alive, not fn
        if (j->error) std::rethrow_exception(j->error);
    }

    void worker_loop(int self) {
        uint64_t seen = 0;
        while (true) {
            auto ready = [&] { return stop.load() || generation.load() != seen; };
            std::shared_ptr<Job> j;
            {
                if (!spin_until(ready)) {
                    std::unique_lock<std::mutex> lock(mu);
                    wake.wait(lock, ready);
                }
                std::lock_guard<std::mutex> lock(mu);
                if (stop.load()) return;
                seen = generation.load();
                j = job;
            }
            if (j) drain(*j, self);
        }
    }
};

ThreadPool::ThreadPool(int threads)
    : threads_(std::max(1, threads)), impl_(std::make_unique<Impl>()) {
    for (int i = 1; i < threads_; ++i)
        impl_->workers.emplace_back([this, i] { impl_->worker_loop(i); });
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
    auto j = std::make_shared<Job>();
    j->fn = &fn;
    j->n = n;
    j->chunk = std::max(grain, (n + threads_ * 4 - 1) / (threads_ * 4));
    impl_->run_job(j);
}

void ThreadPool::parallel_parts(const std::function<void(int64_t, int64_t)>& fn) {
    if (threads_ == 1) {
        fn(0, 1);
        return;
    }
    auto j = std::make_shared<Job>();
    j->fn = &fn;
    j->n = threads_;
    j->taken.reset(new std::atomic<bool>[static_cast<size_t>(threads_)]());
    impl_->run_job(j);
}

void ThreadPool::parallel_shares(int64_t n, int64_t chunk, int64_t grain,
                                 const std::function<void(int64_t, int64_t)>& fn) {
    if (n <= 0) return;
    grain = std::max<int64_t>(1, grain);
    if (threads_ == 1 || n < 2 * grain) {
        fn(0, n);
        return;
    }
    if (n >= (int64_t{1} << 31)) {  // beyond the packed word: fixed parts
        parallel_parts([&](int64_t t, int64_t) {
            const int64_t b = n * t / threads_, e = n * (t + 1) / threads_;
            if (b < e) fn(b, e);
        });
        return;
    }
    auto j = std::make_shared<Job>();
    j->fn = &fn;
    j->n = n;
    j->chunk = std::max(grain, chunk);
    j->grain = grain;
    j->n_parts = threads_;
    j->ranges.reset(new Job::Range[static_cast<size_t>(threads_)]);
    for (int t = 0; t < threads_; ++t)
        j->ranges[t].items.store(pack_range(n * t / threads_, n * (t + 1) / threads_));
    impl_->run_job(j);
}

bool set_pool_late_yield(bool on) {
    return g_late_yield.exchange(on);
}

int hardware_threads() {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
    return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace pg
