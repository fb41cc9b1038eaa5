// measure_cross_core (cross_core.h): two threads pinned to the first two allowed CPUs hand a
// buffer back and forth through an atomic turn; the reader times its pass over the lines.
#include "cross_core.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

namespace pg::bench {

namespace {

using Clock = std::chrono::steady_clock;

// The first two CPUs this process may run on (-1 when fewer).
bool two_cpus(int* a, int* b) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return false;
    *a = *b = -1;
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set)) {
            if (*a < 0)
                *a = c;
            else {
                *b = c;
                return true;
            }
        }
    return false;
}

void pin(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

constexpr size_t kLine = 64 / sizeof(float);

// Microseconds to read one float per line of buf (the sum kept in *sink).
double timed_read(const std::vector<float>& buf, float* sink) {
    const auto start = Clock::now();
    float s = 0;
    for (size_t i = 0; i < buf.size(); i += kLine) s += buf[i];
    *sink += s;
    return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

}  // namespace

CrossCore measure_cross_core(size_t bytes, int reps) {
    CrossCore r;
    int reader = -1, writer = -1;
    if (!two_cpus(&reader, &writer) || reps < 1) return r;
    std::vector<float> buf(std::max<size_t>(bytes / sizeof(float), kLine), 1.0f);
    std::atomic<int> turn{0};  // 1: the writer writes, 2: the reader reads, 3: stop
    std::thread w([&] {
        pin(writer);
        while (true) {
            int t;
            while ((t = turn.load()) != 1 && t != 3) std::this_thread::yield();
            if (t == 3) return;
            for (size_t i = 0; i < buf.size(); i += kLine) buf[i] += 1.0f;
            turn.store(2);
        }
    });
    std::thread rd([&] {
        pin(reader);
        std::vector<double> other, own;
        float sink = 0;
        for (int i = 0; i < reps; ++i) {
            turn.store(1);
            while (turn.load() != 2) std::this_thread::yield();
            other.push_back(timed_read(buf, &sink));
            for (size_t k = 0; k < buf.size(); k += kLine) buf[k] += 1.0f;
            own.push_back(timed_read(buf, &sink));
        }
        turn.store(3);
        r.other_us = median(other), r.own_us = median(own);
        if (sink == 0.5f) std::fputc(' ', stderr);  // keeps the reads
    });
    rd.join();
    w.join();
    return r;
}

std::string cross_core_text(const CrossCore& c, size_t bytes) {
    char text[160];
    const unsigned kib = static_cast<unsigned>(bytes >> 10);
    if (std::isnan(c.other_us))
        std::snprintf(text, sizeof text, "cross-core read of %u KiB: not measured (one CPU)", kib);
    else
        std::snprintf(text, sizeof text, "cross-core read of %u KiB: %.1f us (own writes %.1f us)",
                      kib, c.other_us, c.own_us);
    return text;
}

}  // namespace pg::bench
