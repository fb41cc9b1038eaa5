// The iteration engine for `debug` tools whose replay is keyed by iteration (spec §6.6, §7.1):
// each iteration has the key "_N<index>_<suffix>" and a tool state (reduce: {"num_nodes": n,
// "node_index": i}). A loaded replay entry with the same key and state answers the iteration
// without a check (a different state means the search changed: the check runs, with a
// warning). Writes the iteration's files (model and inputs) when the check needs them or
// --artifacts-dir keeps them, records verdicts in DIR/verdicts.txt, and saves the replay after
// every iteration and, before each check, a _skip_current copy with the iteration failed.
// SIGINT (debug/interrupt.h): the iteration running when it arrives is discarded (not recorded;
// its temporary files and the _skip_current copy are removed) and SearchInterrupted is thrown,
// so the saved replay holds exactly the completed iterations. A recorded state matches when
// each of its fields equals ours (a Polygraphy replay's {"num_nodes": n} matches by count).
// debug/iteration.h is the same engine keyed by float32 set (debug precision); what the two
// have in common lives in debug/iteration_common.h. To add a per-iteration file: a field in IterationFiles and its name in
// keyed_iteration.cc.
#pragma once

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "debug/iteration.h"

namespace pg::debug {

// Where an iteration's files go ("" = not written).
struct IterationFiles {
    std::string model;   // the candidate model (.onnx)
    std::string inputs;  // its inputs (Polygraphy JSON)
};

// Writes the iteration's files.
using WriteFilesFn = std::function<void(const IterationFiles& files)>;
// The verdict (true = pass); the files were written when their paths are set.
using FilesVerdictFn = std::function<bool(const IterationFiles& files)>;

class KeyedIterations {
  public:
    explicit KeyedIterations(IterationOptions o);
    ~KeyedIterations();
    KeyedIterations(const KeyedIterations&) = delete;
    KeyedIterations& operator=(const KeyedIterations&) = delete;

    // Runs (or replays) iteration `index` of `suffix` with tool state `state`.
    bool operator()(const std::string& suffix, size_t index, const nlohmann::json& state,
                    const WriteFilesFn& write, const FilesVerdictFn& verdict);
    size_t iterations() const { return iterations_; }
    size_t checks_run() const { return checks_run_; }
    size_t replayed() const { return replayed_; }

  private:
    IterationFiles files_for(const std::string& key) const;
    void record(const std::string& key, size_t index, const nlohmann::json& state, bool ok);
    void remove_temp(IterationFiles& f);
    [[noreturn]] void stop_interrupted();
    IterationOptions o_;
    nlohmann::json loaded_ = nlohmann::json::object();
    nlohmann::ordered_json replay_ = nlohmann::ordered_json::object();
    std::string temp_dir_;
    IterationFiles pending_;  // temporary files not yet removed
    size_t iterations_ = 0, checks_run_ = 0, replayed_ = 0;
};

}  // namespace pg::debug
