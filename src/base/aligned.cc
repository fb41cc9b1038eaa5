#include "base/aligned.h"

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
    if (n > SIZE_MAX - kCacheLine) throw std::bad_alloc();
    // malloc's blocks are at least 16-byte aligned, so the offset is 16 to 64 (switched off:
    // always 16, the same overhead, so that an A/B changes the alignment only).
    auto* base = static_cast<uint8_t*>(std::malloc(n + kCacheLine));
    if (!base) throw std::bad_alloc();
    const auto at = reinterpret_cast<uintptr_t>(base);
    const size_t offset =
        aligned_flag().load(std::memory_order_relaxed) ? kCacheLine - at % kCacheLine : 16;
    base[offset - 1] = static_cast<uint8_t>(offset);
    return base + offset;
}

void aligned_free(void* p) noexcept {
    if (!p) return;
    auto* q = static_cast<uint8_t*>(p);
    std::free(q - q[-1]);
}

}  // namespace pg
