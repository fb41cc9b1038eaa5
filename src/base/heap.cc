// See heap.h. Called after a session's first run, so that glibc's mmap threshold, which it
// raises as large blocks are freed, has already grown to the run's block sizes: setting the
// trim threshold freezes that adjustment where it is.
#include "base/heap.h"

#include <cstdlib>  // defines __GLIBC__ under glibc

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace pg {

bool retain_heap_between_runs() {
#if defined(__GLIBC__)
    static const bool applied = mallopt(M_TRIM_THRESHOLD, 1 << 30) != 0;
    return applied;
#else
    return false;
#endif
}

}  // namespace pg
