// Process-wide tuning of glibc's malloc for running models: tensor-sized blocks (up to 32 MiB)
// come from the heap and freed heap memory is kept for reuse (up to 64 MiB at the top of the
// heap), instead of each block being mapped fresh (a page fault per 4 KiB on first touch) and
// unmapped when freed. Memory-bound kernels (Add, Relu, Transpose, Concat, pooling) spent more
// time faulting in their outputs than computing them. Peak memory is about unchanged (freed
// blocks are reused by later ones); memory freed after a run stays with the process. Elsewhere
// than glibc it does nothing. To tune another allocator, add it here.
#pragma once

namespace pg {

// Applies the tuning once per process (later calls do nothing); returns whether it applies here.
bool tune_malloc_for_inference();

}  // namespace pg
