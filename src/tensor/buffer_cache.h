// Tensor buffers of kBufferCacheMin bytes and more, once freed, wait in a process-wide cache for a request of the same (page-rounded) size: repeated runs of a
// model allocate the same sizes step after step, and a reused buffer is already faulted in (a
// fresh mapping takes a page fault per 4 KiB on its first write, ~1000 a run on ShuffleNet). The
// cache is bounded: before a buffer is allocated anew, cached buffers (largest first) are freed
// until the live bytes plus the cached ones fit (1 + kBufferCacheShare) x the peak of the live
// bytes, so the buffers never take more than that share above the peak live set. Misses and
// evictions go through operator new / delete. Smaller buffers use operator new directly.
// To tune, change the two constants; buffer_cache_stats() reports hits for tests and benches.
#pragma once

#include <cstdint>
#include <memory>

namespace pg {

constexpr uint64_t kBufferCacheMin = 64 * 1024;
constexpr double kBufferCacheShare = 0.1;

// A buffer of at least `nbytes` bytes (uninitialized), freed through its deleter.
std::shared_ptr<uint8_t[]> allocate_buffer(uint64_t nbytes);

struct BufferCacheStats {
    uint64_t hits = 0, misses = 0;  // large allocations served from the cache / by mmap
    uint64_t cached_bytes = 0, live_bytes = 0, peak_live_bytes = 0;
};
BufferCacheStats buffer_cache_stats();
// Frees every cached buffer (tests; a process that wants its memory back).
void buffer_cache_clear();

}  // namespace pg
