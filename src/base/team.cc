// See team.h. Arrival numbers come from one counter: 0 leads. Before each step the leader admits
// the members that have arrived (each learns the step it starts at) and publishes the step's
// member count; a step ends with a counting barrier whose last member publishes the number of
// steps done, which is also what a newcomer waits for before its first step. Counts are kept
// for two steps at a time (a member reads step s's count after step s - 1's barrier; the leader
// writes step s + 2's only after step s + 1's, which needs that member). The leader closes the
// team when it has run the last step: members admitted by then finish with it, later arrivals
// return at once.
#include "base/team.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "base/thread_pool.h"

namespace pg {

namespace {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

// Spins until done(), yielding the core between bursts (the thread waited for may need it).
template <typename Done>
void spin(Done done) {
    while (true) {
        for (int i = 0; i < 64; ++i) {
            if (done()) return;
            cpu_relax();
        }
        std::this_thread::yield();
    }
}

struct Steps {
    Steps(int64_t n, int max, const StepFn& f)
        : steps(n), max_parts(max), fn(f), start(new std::atomic<int64_t>[max]) {
        for (int i = 0; i < max; ++i) start[i].store(-1);
    }
    const int64_t steps;
    const int max_parts;
    const StepFn& fn;
    std::atomic<int> arrived{0};
    std::unique_ptr<std::atomic<int64_t>[]> start;  // first step of each member (-1: none yet)
    std::atomic<int> parts_of[2] = {1, 1};          // members in step s at parts_of[s % 2]
    std::atomic<int64_t> done{0};                   // steps finished
    std::atomic<int> count{0};                      // members finished with the current step
    std::atomic<bool> closed{false};
    int members = 1;  // the leader's count of admitted members

    // Leader: admits the arrivals so far from step s on and publishes step s's member count.
    // The count is stored before the starts: a member admitted for step 0 waits for no barrier,
    // so its acquire of start[] is all that orders its read of the count (read first, the
    // count could be stale, the member would run step 0 as a team of one beside the leader and
    // the barrier count would drift: found as a hang after about a million runs).
    int admit(int64_t s) {
        const int here =
            std::max(members, std::min(arrived.load(std::memory_order_acquire), max_parts));
        parts_of[s % 2].store(here, std::memory_order_release);
        for (; members < here; ++members) start[members].store(s, std::memory_order_release);
        return members;
    }

    void barrier(int64_t s, int parts) {
        if (parts == 1 || count.fetch_add(1, std::memory_order_acq_rel) + 1 == parts) {
            count.store(0, std::memory_order_relaxed);
            done.store(s + 1, std::memory_order_release);
            return;
        }
        spin([&] { return done.load(std::memory_order_acquire) > s; });
    }

    void lead() {
        int parts = admit(0);
        for (int64_t s = 0; s < steps; ++s) {
            fn(s, 0, parts);
            const int next = s + 1 < steps ? admit(s + 1) : parts;
            barrier(s, parts);
            parts = next;
        }
        closed.store(true, std::memory_order_release);
    }

    void follow(int me) {
        spin([&] {
            return start[me].load(std::memory_order_acquire) >= 0 ||
                   closed.load(std::memory_order_acquire);
        });
        const int64_t first = start[me].load(std::memory_order_acquire);
        if (first < 0) return;  // closed before this member was admitted
        spin([&] { return done.load(std::memory_order_acquire) >= first; });
        for (int64_t s = first; s < steps; ++s) {
            const int parts = parts_of[s % 2].load(std::memory_order_acquire);
            fn(s, me, parts);
            barrier(s, parts);
        }
    }

    void join() {
        const int me = arrived.fetch_add(1, std::memory_order_acq_rel);
        if (me == 0)
            lead();
        else if (me < max_parts)
            follow(me);
    }
};

}  // namespace

void run_steps(ThreadPool* pool, int64_t steps, int max_parts, const StepFn& fn) {
    if (steps <= 0) return;
    if (pool) max_parts = std::min(max_parts, pool->num_threads());
    if (!pool || max_parts <= 1) {
        for (int64_t s = 0; s < steps; ++s) fn(s, 0, 1);
        return;
    }
    Steps team(steps, max_parts, fn);
    pool->parallel_for(max_parts, 1, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) team.join();
    });
}

}  // namespace pg
