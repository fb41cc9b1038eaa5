// Polygraphy's JSON files (polygraphy-spec §6.1-6.4), read and written byte-compatibly:
// ndarrays as {"array": base64(.npy), "polygraphy_class": "ndarray"}, inputs files as a list
// of feed dicts, RunResults as {"lst": [[runner, [IterationResult...]]...]}. Writers format
// exactly as Python's json.dumps(indent=4) so files compare byte for byte; RunResultsWriter
// streams one output at a time. Every file is written through AtomicFile.
// To decode another polygraphy_class, add it to decode_value() in polygraphy_json_read.cc.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/fs.h"
#include "data/json_text.h"
#include "data/run_results.h"

namespace pg::data {

// What a Polygraphy JSON file holds.
enum class JsonContent { kInputs, kRunResults };

// Parsed contents of a Polygraphy JSON data file: exactly one of the two is filled.
struct PolygraphyJson {
    JsonContent content = JsonContent::kInputs;
    FeedList inputs;         // a list of feed dicts (a single dict becomes a one-element list)
    RunResults run_results;  // a RunResults object
};

// Parses JSON text. `what` names the source in messages. Throws kInvalidInput (kUnsupported
// for torch-serialized tensors such as bfloat16).
PolygraphyJson parse_polygraphy_json(const std::string& text, const std::string& what);
// Reads a file; see parse_polygraphy_json.
PolygraphyJson load_polygraphy_json(const std::string& path);

// The JSON text Polygraphy writes for an inputs file / a RunResults.
std::string inputs_to_json(const FeedList& feeds);
std::string run_results_to_json(const RunResults& results);
// Writes an inputs file / a RunResults file atomically.
void save_inputs_json(const std::string& path, const FeedList& feeds);
void save_run_results_json(const std::string& path, const RunResults& results);

// Emits a RunResults document incrementally to a sink: outputs are encoded as they arrive, so
// layer-wise results never need every tensor in memory. Call order:
//   begin_runner(name) { begin_iteration() add_output()* end_iteration(runtime) }* ... finish()
class RunResultsStream {
  public:
    explicit RunResultsStream(std::function<void(std::string_view)> sink);
    virtual ~RunResultsStream() = default;

    void begin_runner(const std::string& runner_name);
    void begin_iteration();
    void add_output(const std::string& name, const Tensor& t);
    // Closes the iteration; runner_name defaults to the current runner's name.
    void end_iteration(std::optional<double> runtime,
                       const std::optional<std::string>& runner_name = std::nullopt);
    // begin_iteration + add_output for each output + end_iteration.
    void add_iteration(const IterationResult& it);
    // Closes the document.
    virtual void finish();

  private:
    void end_runner();
    JsonStream json_;
    std::string runner_;
    bool in_runner_ = false;
    bool in_iteration_ = false;
    bool finished_ = false;
};

namespace detail {
struct AtomicFileHolder {
    explicit AtomicFileHolder(const std::string& path) : file_(path) {}
    AtomicFile file_;
};
}  // namespace detail

// A RunResultsStream into a file: nothing appears at `path` until finish(); destroying the
// writer earlier discards the partial file.
class RunResultsWriter : private detail::AtomicFileHolder, public RunResultsStream {
  public:
    explicit RunResultsWriter(const std::string& path);
    // Closes the document and renames the file into place.
    void finish() override;
};

// The ndarray object for a tensor ({"array": ..., "polygraphy_class": "ndarray"}) written to
// `json` (bfloat16/float8 stored as float32 with a warning; see numpy_compatible()).
void write_ndarray(JsonStream& json, const std::string& name, const Tensor& t);

}  // namespace pg::data
