// What the conformance sweeps share (input_sweep_test.cc, attribute_sweep_test.cc): each runs every
// ONNX node test again with one thing changed, one change at a time, and asks that the reference
// interpreter answer each changed model with a result or a pg::Error naming the problem. A test's
// cases run in a forked child under a memory ceiling and a time limit, so a crash or a hang fails
// that test, naming the case it was running, and the suite goes on.
#pragma once

#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <map>
#include <memory>
#include <optional>

#include "ir/model.h"
#include "runners/runner.h"
#include "runtime/session.h"

namespace pg::test {

// One case's outcome: "ran", "same" (the change left the model as it was), the refusal (the
// error's kind and message), or the bug when `bug`. `kind`, when set, is the word the case's line
// starts with instead of the one derived from `what` ("bug", "ran", "same" or "refused").
struct SweepOutcome {
    SweepOutcome(bool is_bug, std::string text, std::string line_kind = {})
        : bug(is_bug), what(std::move(text)), kind(std::move(line_kind)) {}
    bool bug;
    std::string what;
    std::string kind;
};

struct SweepTally {
    int tests = 0, cases = 0, ran = 0;
    std::map<std::string, int> kinds;  // cases by their line's first word
    std::vector<std::string> failures;
};

// Plans `model` and runs it once on `feeds` (one thread). kInternal, any other exception, or a
// difference `check` reports (it returns "" for none; may be empty) is a bug.
SweepOutcome run_changed_model(const ir::Model& model, const runtime::Feeds& feeds,
                               const std::function<std::string(const runtime::Results&)>& check);

// `feeds` as tensors, as the runners take them; nullopt when one is a sequence or optional.
std::optional<std::map<std::string, Tensor>> tensor_feeds(const runtime::Feeds& feeds);

// One run of `model` through the reference runner on one thread: in float32, or with `fp64` as
// --ref-precision fp64 runs it.
runners::NamedTensors infer_ref(const ir::Model& model, const std::map<std::string, Tensor>& feeds,
                                bool fp64);

// A model that ran: the same planned and run as `--ref-precision fp64` runs it (its float32
// values promoted to float64, runners/ref_runner.h), which must also run or be refused without
// kInternal. "ran" also when a feed is not a tensor (the runner takes tensors only).
SweepOutcome run_as_fp64(const ir::Model& model, const runtime::Feeds& feeds);

// Writes "start WHAT", runs `run`, then "ran|refused|same|bug WHAT: OUTCOME" to `out` (the child's
// pipe; the last "start" line names the case a crash ended). A case of a second or more has its
// seconds appended ("[3 s]").
void sweep_case(FILE* out, const std::string& what, const std::function<SweepOutcome()>& run);

// Marks the running case as being in phase `name` (a "phase NAME" line): see sweep_isolated.
void sweep_phase(FILE* out, const char* name);

// Runs `cases` (which calls sweep_case for each of one test's cases) in a forked child with a
// memory ceiling of `ceiling` bytes and an alarm after `seconds`; counts its lines into `tally`
// (printing each when `verbose`). A child that does not exit 0 is a failure naming its last case,
// unless that case was in a phase `crash_kinds` names (sweep_phase): then the case is counted as
// that kind and a new child goes on with the next case.
void sweep_isolated(const std::string& test, const std::function<void(FILE*)>& cases,
                    uint64_t ceiling, unsigned seconds, bool verbose, SweepTally& tally,
                    const std::map<std::string, std::string>& crash_kinds = {});

// The node test folders under `root` (those with a model.onnx), sorted; when `filter` is given,
// those whose name it matches (a regex) only.
std::vector<std::filesystem::path> sweep_test_dirs(const std::string& root, const char* filter);

// The model of the node test in `dir`, or nullptr when this build cannot load it (the conformance
// suite reports those).
std::unique_ptr<ir::Model> load_test_model(const std::filesystem::path& dir);

// The first data set's inputs of the test in `dir` for `model` (which the caller may change
// afterwards), by name; `inputs`, when given, receives the graph inputs without an initializer.
runtime::Feeds first_data_set_feeds(const std::filesystem::path& dir, const ir::Model& model,
                                    std::vector<ir::Value*>* inputs = nullptr);

// The ONNX node-test suites the sweeps visit: ../shared's 1.22 set, Debian's libonnx-testdata
// node set, and Debian's pytorch-converted, pytorch-operator and simple suites.
enum class NodeSuites { kOnnx122, kDebianNode, kDebianOther };

// Calls run(folder, label) for each folder of `which` that exists; "" when the data is there,
// else why not (the caller's GTEST_SKIP reason).
std::string for_node_suites(NodeSuites which,
                            const std::function<void(const std::string&, const char*)>& run);

// "[SWEEP] LABEL: N tests, N changed ..., N failures" and one gtest failure per failure.
void report_sweep(const char* sweep, const std::string& label, const char* changed,
                  const SweepTally& tally);

}  // namespace pg::test
