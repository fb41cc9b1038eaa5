// Process-wide tuning of the C heap for repeated inference. glibc gives the free memory at the
// top of its heap back to the system whenever it exceeds a threshold, and a session's run frees
// everything it allocated, so each run's activations came back as fresh pages: 1,500-6,300 page
// faults per run on resnet50, mobilenet and vgg19 (docs/performance.md). retain_heap_between_runs
// stops that trimming and serves blocks up to 32 MiB from the heap (once per process; other C
// libraries: nothing), so later runs reuse the same pages. The runtime calls it after a
// session's first run, so that run's peak is glibc's default; measured peaks did not move.
// Memory freed after a larger model stays with the process.
#pragma once

#include <cstdint>
#include <string>

namespace pg {

// Keeps freed heap memory mapped from now on (idempotent, thread-safe). Returns true when the
// C library took the setting.
bool retain_heap_between_runs();

// Gives the free pages inside the C heap back to the system (malloc_trim under glibc; other C
// libraries: nothing). For the end of a phase that freed many small blocks it will not reuse
// (a parsed message after import, planning's temporaries).
void release_free_heap();

// Bytes of physical memory of this machine (sysconf; 0 when unknown).
uint64_t physical_memory_bytes();

// Throws kInvalidInput naming `what` when `bytes` (a working set an input asks for) exceeds this
// machine's physical memory, or the ceiling set below when lower: such a request could only swap
// or be killed, so it is refused before anything is allocated. Requests that fit are left to the
// allocator (std::bad_alloc).
void require_memory_for(double bytes, const std::string& what);

// Lowers the limit require_memory_for applies to `bytes` (0: the machine's physical memory alone;
// process-wide, thread-safe). The fuzzers run models in a bounded address space with it. Returns
// the previous ceiling.
uint64_t set_memory_ceiling(uint64_t bytes);
// The ceiling set, 0 when none.
uint64_t memory_ceiling();

}  // namespace pg
