// One entry point for every data file `run` and `inspect data` accept, dispatching on content:
//   * Polygraphy JSON (inputs list or RunResults),                    polygraphy_json.h
//   * .npz (one feed dict; keys are names),                           npz.h
//   * .npy (one array; named after the model's single input),         npy.h
//   * ONNX test-data folders (test_data_set_N/input_K.pb, output_K.pb; names from the model,
//     else from the .pb, else input_K), or one test_data_set_N folder.
// Saving writes Polygraphy JSON, or .npz when the path ends in ".npz".
// To add a format: a detector and a loader in data_files.cc, and a row in the comment above.
#pragma once

#include <string>
#include <vector>

#include "data/polygraphy_json.h"
#include "data/run_results.h"

namespace pg::data {

// Names the model gives to positional data (.npy files, input_K.pb / output_K.pb).
struct ModelNames {
    std::vector<std::string> inputs;
    std::vector<std::string> outputs;
};

// Feed dicts from any supported file (a RunResults JSON is refused, with a hint).
// Throws kIo / kInvalidInput / kUnsupported.
FeedList load_inputs(const std::string& path, const ModelNames& names = {});
// RunResults from a Polygraphy JSON file, a .npz/.npy (one runner named after the file, one
// iteration) or a test-data folder's output_K.pb files (one iteration per set).
RunResults load_outputs(const std::string& path, const ModelNames& names = {});
// Whatever the file holds (inputs or RunResults), for `inspect data`.
PolygraphyJson load_data_file(const std::string& path, const ModelNames& names = {});

// Writes feeds as Polygraphy JSON, or as .npz (exactly one feed dict) when path ends in .npz.
void save_inputs(const std::string& path, const FeedList& feeds);
// Writes RunResults as Polygraphy JSON, or as .npz (one runner, one iteration).
void save_outputs(const std::string& path, const RunResults& results);

}  // namespace pg::data
