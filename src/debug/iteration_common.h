// Pieces shared by the two iteration engines of the `debug` tools (debug/iteration.h, keyed by
// float32 set, and debug/keyed_iteration.h, keyed by iteration): reading a replay file, the
// working folder (--artifacts-dir or a temporary one), the replay entry and its atomic save,
// verdict lines, and the SIGINT stop. To share another piece: put it here and call it from
// both engines.
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "debug/iteration.h"

namespace pg::debug {

// The JSON object of the replay at `path`; kInvalidInput when it is not JSON or not an object.
nlohmann::json read_replay_object(const std::string& path);

// Creates o.artifacts_dir (truncating its verdicts.txt) or, when the check needs a model and no
// artifacts folder is given, a fresh temporary folder under $TMPDIR. Returns the temporary
// folder ("" when none was made); kIo when a folder cannot be made.
std::string prepare_iteration_dir(const IterationOptions& o);

// Appends `line` and a newline to ARTIFACTS_DIR/verdicts.txt; nothing when `artifacts_dir` is "".
void append_verdict_line(const std::string& artifacts_dir, const std::string& line);

// One replay entry in Polygraphy's IterationContext layout.
nlohmann::ordered_json replay_entry(const nlohmann::json& state, size_t iteration, bool success);

// Writes `replay` to `path` atomically (4-space JSON and a newline).
void save_replay_file(const std::string& path, const nlohmann::ordered_json& replay);

// Removes the _skip_current copy of `save_replay` (when given) and throws SearchInterrupted
// naming the `completed` iterations.
[[noreturn]] void throw_interrupted(const std::string& save_replay, size_t completed);

}  // namespace pg::debug
