#include "debug/iteration.h"

#include <unistd.h>

#include <chrono>

#include "base/log.h"
#include "debug/interrupt.h"
#include "debug/iteration_common.h"

namespace pg::debug {

namespace {

std::string join(const NodeSet& s, const char* sep) {
    std::string out;
    for (const auto& n : s) out += (out.empty() ? "" : sep) + n;
    return out;
}

struct LoadedReplay {
    std::map<NodeSet, bool> by_set;
    std::map<size_t, bool> by_index;  // "_N<i>" entries without a float32 set
};

// The float32 set of an entry, or false when it has none (or a non-string name).
bool entry_set(const nlohmann::json& v, NodeSet& s) {
    if (!v["state"].contains("fp32_nodes") || !v["state"]["fp32_nodes"].is_array()) return false;
    for (const auto& n : v["state"]["fp32_nodes"]) {
        if (!n.is_string()) return false;
        s.insert(n.get<std::string>());
    }
    return true;
}

// The i of a key "_N<i>", or false.
bool key_index(const std::string& key, size_t& i) {
    if (key.size() < 3 || key.compare(0, 2, "_N") != 0) return false;
    if (key.find_first_not_of("0123456789", 2) != std::string::npos || key.size() > 12)
        return false;
    i = std::stoul(key.substr(2));
    return true;
}

LoadedReplay load_replay_file(const std::string& path) {
    const nlohmann::json j = read_replay_object(path);
    LoadedReplay out;
    size_t ignored = 0;
    for (const auto& [key, v] : j.items()) {
        const bool usable = v.is_object() && v.contains("success") && v["success"].is_boolean() &&
                            v.contains("state") && v["state"].is_object();
        NodeSet s;
        size_t i = 0;
        if (usable && entry_set(v, s))
            out.by_set[s] = v["success"].get<bool>();
        else if (usable && key_index(key, i))
            out.by_index[i] = v["success"].get<bool>();
        else
            ++ignored;
    }
    if (ignored)
        log_warning("--load-debug-replay: ignored {} unusable entr(y/ies) of {}", ignored, path);
    log_info("Loaded {} iteration(s) from debug replay: {}",
             out.by_set.size() + out.by_index.size(), path);
    return out;
}

}  // namespace

std::string skip_current_path(const std::string& path) {
    const size_t slash = path.find_last_of('/');
    const size_t dot = path.find_last_of('.');
    if (dot == std::string::npos || (slash != std::string::npos && dot < slash))
        return path + "_skip_current";
    return path.substr(0, dot) + "_skip_current" + path.substr(dot);
}

IterativeCheck::IterativeCheck(IterationOptions o, WriteModelFn write, VerdictFn verdict)
    : o_(std::move(o)), write_(std::move(write)), verdict_(std::move(verdict)) {
    if (!o_.load_replay.empty()) {
        auto l = load_replay_file(o_.load_replay);
        loaded_ = std::move(l.by_set);
        loaded_by_index_ = std::move(l.by_index);
        if (!loaded_by_index_.empty() && !o_.replay_by_index)
            log_warning(
                "--load-debug-replay: {} entr(y/ies) without a float32 node set (a Polygraphy "
                "replay?) are used only with --mode bisect or linear",
                loaded_by_index_.size());
    }
    temp_dir_ = prepare_iteration_dir(o_);
}

IterativeCheck::~IterativeCheck() {
    if (temp_dir_.empty()) return;
    if (!pending_temp_.empty()) ::unlink(pending_temp_.c_str());  // the check threw
    ::rmdir(temp_dir_.c_str());
}

void IterativeCheck::save_replay(const std::string& path) const {
    save_replay_file(path, replay_);
}

void IterativeCheck::record(const NodeSet& s, bool ok) {
    const size_t i = index_ - 1;
    replay_["_N" + std::to_string(i)] = replay_entry({{"fp32_nodes", s}}, i, ok);
}

void IterativeCheck::append_verdict(const std::string& what, const NodeSet& s, bool ok) const {
    if (o_.artifacts_dir.empty()) return;
    append_verdict_line(o_.artifacts_dir,
                        what + (ok ? " PASSED" : " FAILED") + " fp32_nodes=" + join(s, ","));
}

bool IterativeCheck::from_replay(const NodeSet& s, size_t i, bool& ok) const {
    auto it = loaded_.find(s);
    if (it != loaded_.end()) {
        ok = it->second;
        return true;
    }
    auto by_index = loaded_by_index_.find(i);
    if (!o_.replay_by_index || by_index == loaded_by_index_.end()) return false;
    ok = by_index->second;
    return true;
}

void IterativeCheck::stop_interrupted(const std::string& model_path, size_t completed) {
    if (!temp_dir_.empty() && !model_path.empty()) ::unlink(model_path.c_str());
    pending_temp_.clear();
    throw_interrupted(o_.save_replay, completed);
}

bool IterativeCheck::run_check(const NodeSet& s, size_t i) {
    std::string model_path;
    const std::string name = "iteration_" + std::to_string(i) + ".onnx";
    if (!o_.artifacts_dir.empty())
        model_path = o_.artifacts_dir + "/" + name;
    else if (o_.needs_model)
        model_path = temp_dir_ + "/" + name;
    if (!temp_dir_.empty()) pending_temp_ = model_path;
    if (!model_path.empty()) write_(s, model_path);
    if (interrupted()) stop_interrupted(model_path, i);  // do not start a check that is discarded
    if (!o_.save_replay.empty()) {
        // A crashing check is skipped on resume from this copy (§6.6).
        record(s, false);
        save_replay(skip_current_path(o_.save_replay));
        replay_.erase("_N" + std::to_string(i));
    }
    ++checks_run_;
    const bool ok = verdict_(s, model_path);
    if (interrupted()) stop_interrupted(model_path, i);  // the verdict may be the signal's doing
    if (!temp_dir_.empty()) {
        ::unlink(model_path.c_str());
        pending_temp_.clear();
    }
    append_verdict(name, s, ok);
    return ok;
}

bool IterativeCheck::operator()(const NodeSet& s) {
    if (interrupted()) stop_interrupted("", index_);
    const size_t i = index_++;
    log_info("RUNNING | Iteration {} | {} node(s) in float32", i + 1, s.size());
    const auto start = std::chrono::steady_clock::now();
    bool ok;
    if (from_replay(s, i, ok)) {
        ++replayed_;
        log_info("Loading iteration information from debug replay: success={}",
                 ok ? "True" : "False");
        append_verdict("iteration_" + std::to_string(i) + " (replayed)", s, ok);
    } else {
        ok = run_check(s, i);
    }
    record(s, ok);
    passed_ += ok ? 1 : 0;
    if (!o_.save_replay.empty()) {
        log_verbose("Saving debug replay to {}", o_.save_replay);
        save_replay(o_.save_replay);
    }
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (ok)
        log_info("PASSED | Iteration {} | Duration {:.3f}s", i + 1, secs);
    else
        log_info("FAILED | Iteration {} | Duration {:.3f}s", i + 1, secs);
    return ok;
}

}  // namespace pg::debug
