// In-memory forms of Polygraphy's data files (polygraphy-spec §6.3-6.4): a list of feed dicts
// (inputs files) and RunResults (each runner's iterations with their outputs). Plain values;
// files are read and written by polygraphy_json.h, npz.h and data_files.h.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "runners/runner.h"

namespace pg::data {

// One feed dict per iteration, inputs in order.
using FeedList = std::vector<runners::NamedTensors>;

// Polygraphy's IterationResult: one inference of one runner.
struct IterationResult {
    runners::NamedTensors outputs;  // in the runner's output order
    std::optional<double> runtime;  // seconds; nullopt is written as null
    std::string runner_name;        // "custom_runner" when a file omits it
};

// One [runner_name, [IterationResult...]] pair of RunResults.lst.
struct RunnerResults {
    std::string runner_name;
    std::vector<IterationResult> iterations;
};

// Polygraphy's RunResults: runners in order; names may repeat.
struct RunResults {
    std::vector<RunnerResults> runners;
};

}  // namespace pg::data
