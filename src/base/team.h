// Steps run on a team of threads that grows while it runs: run_steps calls fn(step, part, parts)
// for steps 0, 1, ... in order; the calls of one step run at the same time on different threads
// and together do that step's work, and a step starts only when every call of the one before has
// returned (a recurrent op's time steps, each needing all of the previous one). parallel_for
// alone cannot promise that its chunks run at once (a worker may be asleep, busy, or the call
// nested in another job), and a barrier between chunks that do not run together never opens.
// So the first thread to arrive leads and runs every step, and pool workers join at step
// boundaries as they arrive, up to max_parts members: nobody waits for a thread that has not
// come. fn must not throw and must give the same results whatever `parts` is.
#pragma once

#include <cstdint>
#include <functional>

namespace pg {

class ThreadPool;

using StepFn = std::function<void(int64_t step, int part, int parts)>;

// Runs steps [0, steps) as described above; pool null or max_parts <= 1: every step with
// parts = 1 on the calling thread. Returns when every step is done.
void run_steps(ThreadPool* pool, int64_t steps, int max_parts, const StepFn& fn);

}  // namespace pg
