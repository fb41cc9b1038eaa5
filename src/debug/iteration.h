// The iteration engine of `debug` tools (spec §7.1) around a float32-set check: each set the
// search evaluates is one iteration. It answers sets known from a loaded debug replay without
// checking, writes the iteration's candidate model when the check needs it (or when
// --artifacts-dir keeps it), records verdicts in DIR/verdicts.txt, and saves the replay after
// every iteration.
//
// Replay format (§6.6 layout, with the float32 set as the state): a JSON object of
//   "_N<i>": {"state": {"fp32_nodes": [sorted names]}, "iteration_info": {"iteration": i},
//             "success": bool, "polygraphy_class": "IterationContext"}
// SPEC-DEVIATION: entries are matched by their float32 set, not by iteration index, so a replay
// stays valid when the search order changes. Entries without "fp32_nodes" (Polygraphy's own
// replays, state {}) are matched by iteration index when IterationOptions::replay_by_index is
// set (bisect / linear follow Polygraphy's order), else ignored.
//
// SIGINT (debug/interrupt.h): the iteration running when it arrives is discarded (not
// recorded; its temporary model and the _skip_current copy are removed) and SearchInterrupted
// is thrown, so the saved replay holds exactly the completed iterations.
#pragma once

#include <functional>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "debug/search.h"

namespace pg::debug {

struct IterationOptions {
    std::string artifacts_dir;     // keep iteration_<i>.onnx and verdicts.txt here ("" = no)
    std::string save_replay;       // "" = do not save
    std::string load_replay;       // "" = do not load
    bool needs_model = false;      // the check reads the candidate model (external check)
    bool replay_by_index = false;  // use index-keyed entries without a float32 set
};

// Writes the candidate model with `fp32_nodes` kept in float32 to `path`.
using WriteModelFn = std::function<void(const NodeSet& fp32_nodes, const std::string& path)>;
// The verdict for `fp32_nodes`; `model_path` is the written candidate ("" when none).
using VerdictFn = std::function<bool(const NodeSet& fp32_nodes, const std::string& model_path)>;

class IterativeCheck {
  public:
    IterativeCheck(IterationOptions o, WriteModelFn write, VerdictFn verdict);
    ~IterativeCheck();
    IterativeCheck(const IterativeCheck&) = delete;
    IterativeCheck& operator=(const IterativeCheck&) = delete;

    bool operator()(const NodeSet& fp32_nodes);
    size_t iterations() const { return index_; }
    size_t checks_run() const { return checks_run_; }
    size_t replayed() const { return replayed_; }
    size_t passed() const { return passed_; }

  private:
    void record(const NodeSet& s, bool ok);
    void save_replay(const std::string& path) const;
    void append_verdict(const std::string& what, const NodeSet& s, bool ok) const;
    bool from_replay(const NodeSet& s, size_t i, bool& ok) const;
    bool run_check(const NodeSet& s, size_t i);
    [[noreturn]] void stop_interrupted(const std::string& model_path, size_t completed);
    IterationOptions o_;
    WriteModelFn write_;
    VerdictFn verdict_;
    std::map<NodeSet, bool> loaded_;
    std::map<size_t, bool> loaded_by_index_;  // entries without a float32 set
    nlohmann::ordered_json replay_ = nlohmann::ordered_json::object();
    std::string temp_dir_;
    std::string pending_temp_;  // a temporary model not yet removed
    size_t index_ = 0, checks_run_ = 0, replayed_ = 0, passed_ = 0;
};

// `path` with "_skip_current" inserted before the extension.
std::string skip_current_path(const std::string& path);

}  // namespace pg::debug
