// Malloc tuning (see malloc_tuning.h).
#include "base/malloc_tuning.h"

#include <cstdlib>  // defines __GLIBC__ on glibc

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace pg {

bool tune_malloc_for_inference() {
#if defined(__GLIBC__)
    // Setting either threshold turns off glibc's own adjustment of the mmap threshold, so both
    // are set. 32 MiB is the largest mmap threshold glibc accepts on 64-bit systems.
    static const bool applied =
        mallopt(M_MMAP_THRESHOLD, 32 << 20) == 1 && mallopt(M_TRIM_THRESHOLD, 64 << 20) == 1;
    return applied;
#else
    return false;
#endif
}

}  // namespace pg
