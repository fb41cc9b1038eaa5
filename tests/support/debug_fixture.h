// Shared pieces of the `debug` tests (tests/cli/debug_*_test.cc; slurp also serves the unit
// tests of the iteration engines): argument lists, files, the planted-overflow model, the
// reference inputs/outputs a search is checked against, the external --check commands, and
// running the binary to interrupt it with SIGINT once its debug replay holds some iterations. To
// add a helper: declare it here with a one-line comment and use it from every test that needs it.
#pragma once

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/cli_runner.h"

namespace pg::test {

using Args = std::vector<std::string>;

// `a` followed by `b`.
Args concat(Args a, const Args& b);

// The whole content of the file at `path` ("" when it cannot be read).
std::string slurp(const std::string& path);

// True when the file at `path` can be opened for reading.
bool file_exists(const std::string& path);

// Writes zoo::planted_overflow_model() to DIR/planted.onnx and returns the path.
std::string planted_model(const std::string& dir);

// `polygraph run MODEL --ref EXTRA... --save-inputs DIR/in.json --save-outputs DIR/golden.json`:
// the inputs and float32 outputs a search is checked against.
CliResult save_reference_io(const std::string& model, const std::string& dir,
                            const Args& extra = {});

// `run MODEL RUNNER --load-inputs DIR/in.json --load-outputs DIR/golden.json`: compares MODEL
// (by default an external check's candidate) with save_reference_io's outputs.
Args golden_run(const std::string& dir, const std::string& model = "polygraph_debug.onnx",
                const std::string& runner = "--ref");

// `--check POLYGRAPH ARGS...`: an external check that runs the binary under test.
Args polygraph_check(const Args& args);

// `--check sh -c "SCRIPT; exec \"$@\"" sh POLYGRAPH ARGS...`: runs SCRIPT, then the binary.
Args shell_check(const std::string& script, const Args& args);

// Entries of the JSON replay at `path` (-1 when missing or not parseable yet).
int replay_entries(const std::string& path);

// What became of a run interrupted with SIGINT.
struct Interrupted {
    bool started = false;      // the binary could be spawned
    bool ended_early = false;  // it exited before the replay held the entries
    int signal = 0;            // the signal that killed it (0 = it exited)
    int status = -1;           // its exit status
    std::string err;           // its stderr
};

// Runs polygraph ARGS with TMPDIR=`tmpdir` (stdout and stderr to DIR/out.txt and DIR/err.txt),
// sends SIGINT once the replay at `replay` holds `entries` entries (checked every 20 ms, for at
// most 120 s) and waits for it to exit.
Interrupted run_until_replay_then_interrupt(const Args& args, const std::string& dir,
                                            const std::string& tmpdir, const std::string& replay,
                                            int entries);

// Success when the run was stopped by SIGINT as `debug` tools promise: exit status 130 (not
// killed by the signal, not ended before it) and a hint to resume with --load-debug-replay
// `replay`; otherwise a failure that says what happened, with the run's stderr.
::testing::AssertionResult stopped_by_sigint(const Interrupted& run, const std::string& replay);

}  // namespace pg::test
