// See heap.h. Setting either threshold stops glibc's own adjustment of the mmap threshold, which
// it raises only as large blocks are freed; frozen wherever it stood, blocks allocated later
// above it (another model's, or a kernel's scratch the first run did not need) were mapped and
// faulted in on every use, so it is set to 32 MiB (glibc's own ceiling for it) as well.
#include "base/heap.h"

#include <cstdlib>  // defines __GLIBC__ under glibc

#include <unistd.h>

#include <atomic>
#include <cstdio>

#include "base/error.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace pg {

bool retain_heap_between_runs() {
#if defined(__GLIBC__)
    static const bool applied =
        mallopt(M_MMAP_THRESHOLD, 32 << 20) != 0 && mallopt(M_TRIM_THRESHOLD, 1 << 30) != 0;
    return applied;
#else
    return false;
#endif
}

void release_free_heap() {
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
}

uint64_t physical_memory_bytes() {
    const long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    return pages > 0 && size > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(size) : 0;
}

namespace {
std::atomic<uint64_t> g_ceiling{0};  // set_memory_ceiling; 0: none
}  // namespace

void require_memory_for(double bytes, const std::string& what) {
    static const double machine = static_cast<double>(physical_memory_bytes());
    const double ceiling = static_cast<double>(g_ceiling.load(std::memory_order_relaxed));
    const bool lower = ceiling > 0 && (machine <= 0 || ceiling < machine);
    const double have = lower ? ceiling : machine;
    if (have <= 0 || bytes <= have) return;
    char text[112];
    std::snprintf(text, sizeof text, " would need %.3g GiB, more than %s %.3g GiB",
                  bytes / 1073741824.0, lower ? "the memory ceiling's" : "this machine's",
                  have / 1073741824.0);
    throw Error(ErrorKind::kInvalidInput, what + text);
}

uint64_t set_memory_ceiling(uint64_t bytes) {
    return g_ceiling.exchange(bytes, std::memory_order_relaxed);
}

uint64_t memory_ceiling() {
    return g_ceiling.load(std::memory_order_relaxed);
}

}  // namespace pg
