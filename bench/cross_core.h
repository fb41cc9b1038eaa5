// The machine's state for the benches: how long a core takes to read data another core has just
// written, against data it wrote itself. On this VM the first swings between about 1.8 and 4.7
// us for 128 KiB from one minute to the next (the two vCPUs' placement on the host), and the
// reference, whose steps read what both cores wrote in the step before, slows down more than
// ONNX Runtime when it is high (docs/performance.md, session 20). interpreter_bench and kernel_ab
// print it so that a table can be read with the phase it was taken in.
#pragma once

#include <cmath>
#include <cstddef>
#include <string>

namespace pg::bench {

struct CrossCore {
    double other_us = NAN;  // reading `bytes` the other core has just written (NaN: not measured)
    double own_us = NAN;    // reading `bytes` this core has just written
};

// Median over `reps` rounds of a thread on the first allowed CPU reading one float per cache
// line of `bytes` bytes written by a thread on the second allowed CPU, and then its own
// rewrite. Not measured (NaN) with fewer than two allowed CPUs.
CrossCore measure_cross_core(size_t bytes = 128 << 10, int reps = 100);

// "cross-core read of 128 KiB: 4.1 us (own writes 1.2 us)", or "... not measured".
std::string cross_core_text(const CrossCore& c, size_t bytes = 128 << 10);

}  // namespace pg::bench
