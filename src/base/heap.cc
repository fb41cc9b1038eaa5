// See heap.h. Setting either threshold stops glibc's own adjustment of the mmap threshold, which
// it raises only as large blocks are freed; frozen wherever it stood, blocks allocated later
// above it (another model's, or a kernel's scratch the first run did not need) were mapped and
// faulted in on every use, so it is set to 32 MiB (glibc's own ceiling for it) as well.
#include "base/heap.h"

#include <cstdlib>  // defines __GLIBC__ under glibc

#include <unistd.h>

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

void require_memory_for(double bytes, const std::string& what) {
    static const double have = static_cast<double>(physical_memory_bytes());
    if (have <= 0 || bytes <= have) return;
    char text[96];
    std::snprintf(text, sizeof text, " would need %.3g GiB, more than this machine's %.3g GiB",
                  bytes / 1073741824.0, have / 1073741824.0);
    throw Error(ErrorKind::kInvalidInput, what + text);
}

}  // namespace pg
