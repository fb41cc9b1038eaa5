#include "debug/keyed_iteration.h"

#include <unistd.h>

#include <chrono>

#include "base/log.h"
#include "debug/interrupt.h"
#include "debug/iteration_common.h"

namespace pg::debug {

namespace {

nlohmann::json load_replay(const std::string& path) {
    nlohmann::json j = read_replay_object(path);
    log_info("Loaded {} iteration(s) from debug replay: {}", j.size(), path);
    return j;
}

// True when every field of the recorded state equals ours (Polygraphy's reduce records only
// num_nodes; we also record node_index).
bool state_matches(const nlohmann::json& recorded, const nlohmann::json& state) {
    if (!recorded.is_object() || !state.is_object()) return recorded == state;
    for (const auto& [k, v] : recorded.items())
        if (!state.contains(k) || state[k] != v) return false;
    return true;
}

}  // namespace

KeyedIterations::KeyedIterations(IterationOptions o) : o_(std::move(o)) {
    if (!o_.load_replay.empty()) loaded_ = load_replay(o_.load_replay);
    temp_dir_ = prepare_iteration_dir(o_);
}

KeyedIterations::~KeyedIterations() {
    if (temp_dir_.empty()) return;
    remove_temp(pending_);  // the check threw
    ::rmdir(temp_dir_.c_str());
}

void KeyedIterations::remove_temp(IterationFiles& f) {
    if (temp_dir_.empty()) return;
    for (std::string* p : {&f.model, &f.inputs})
        if (!p->empty()) ::unlink(p->c_str());
    f = {};
}

IterationFiles KeyedIterations::files_for(const std::string& key) const {
    std::string dir = !o_.artifacts_dir.empty() ? o_.artifacts_dir : temp_dir_;
    if (dir.empty()) return {};
    const std::string stem = dir + "/" + key.substr(1);  // "N3_outputs"
    return {stem + ".onnx", stem + "_inputs.json"};
}

void KeyedIterations::stop_interrupted() {
    remove_temp(pending_);
    throw_interrupted(o_.save_replay, iterations_ - 1);
}

void KeyedIterations::record(const std::string& key, size_t index, const nlohmann::json& state,
                             bool ok) {
    replay_[key] = replay_entry(state, index, ok);
}

bool KeyedIterations::operator()(const std::string& suffix, size_t index,
                                 const nlohmann::json& state, const WriteFilesFn& write,
                                 const FilesVerdictFn& verdict) {
    const std::string key = "_N" + std::to_string(index) + "_" + suffix;
    ++iterations_;
    if (interrupted()) stop_interrupted();
    log_info("RUNNING | Iteration {} ({}) | state {}", index + 1, suffix, state.dump());
    const auto start = std::chrono::steady_clock::now();
    bool ok = false;
    const auto it = loaded_.find(key);
    const bool usable = it != loaded_.end() && it->is_object() && it->contains("success") &&
                        (*it)["success"].is_boolean();
    if (usable && state_matches(it->value("state", nlohmann::json()), state)) {
        ok = (*it)["success"].get<bool>();
        ++replayed_;
        log_info("Loading iteration information from debug replay: success={}",
                 ok ? "True" : "False");
    } else {
        if (usable)
            log_warning("--load-debug-replay: {} was recorded with state {}; checking again", key,
                        it->value("state", nlohmann::json()).dump());
        IterationFiles files = files_for(key);
        if (!temp_dir_.empty()) pending_ = files;
        if (!files.model.empty()) write(files);
        if (interrupted()) stop_interrupted();  // do not start a check that is discarded
        if (!o_.save_replay.empty()) {
            record(key, index, state, false);
            save_replay_file(skip_current_path(o_.save_replay), replay_);
        }
        ++checks_run_;
        ok = verdict(files);
        if (interrupted()) stop_interrupted();  // the verdict may be the signal's doing
        remove_temp(pending_);
    }
    record(key, index, state, ok);
    append_verdict_line(o_.artifacts_dir,
                        key.substr(1) + (ok ? " PASSED " : " FAILED ") + state.dump());
    if (!o_.save_replay.empty()) {
        log_verbose("Saving debug replay to {}", o_.save_replay);
        save_replay_file(o_.save_replay, replay_);
    }
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    log_info("{} | Iteration {} ({}) | Duration {:.3f}s", ok ? "PASSED" : "FAILED", index + 1,
             suffix, secs);
    return ok;
}

}  // namespace pg::debug
