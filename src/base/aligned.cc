#include "base/aligned.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <new>

namespace pg {

namespace {

std::atomic<bool>& aligned_flag() {
    static std::atomic<bool> on{true};
    return on;
}

}  // namespace

bool set_aligned_buffers(bool on) {
    return aligned_flag().exchange(on);
}

void* aligned_bytes(size_t n) {
    n = std::max<size_t>(n, 1);
    void* p = nullptr;
    if (!aligned_flag().load(std::memory_order_relaxed))
        p = std::malloc(n);
    else if (n <= SIZE_MAX - kCacheLine)  // aligned_alloc wants a multiple of the alignment
        p = std::aligned_alloc(kCacheLine, (n + kCacheLine - 1) / kCacheLine * kCacheLine);
    if (!p) throw std::bad_alloc();
    return p;
}

}  // namespace pg
