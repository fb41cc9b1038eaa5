// Polygraphy's Comparator.compare_accuracy: runners in consecutive pairs, iterations zipped,
// outputs matched by name, each output compared with CompareFunc.simple or .indices, and the
// per-iteration and per-pair summary lines. Lines go to a sink as they are produced, so a caller
// can stream them (the `run` tool passes emit()).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compare/compare_options.h"
#include "compare/log_lines.h"
#include "compare/report.h"
#include "compare/run_results.h"
#include "compare/simple_compare.h"

namespace pg::compare {

// Receives lines with their absolute indentation already set.
using LineSink = std::function<void(const LogLines&)>;

struct IterationComparison {
    std::vector<OutputResult> outputs;  // in result0's output order, compared ones only
    bool passed() const;                // every compared output passed
};

struct PairComparison {
    std::string runner0, runner1;  // runner1 is the reference
    std::vector<IterationComparison> iterations;
    bool stopped_early = false;  // --fail-fast stopped at a mismatch (no summary printed)
    size_t passed_iterations() const;
    bool passed() const;
};

struct AccuracyResult {
    std::vector<PairComparison> pairs;
    bool passed() const;  // every output of every iteration of every pair matched
};

// Everything needed besides the results.
struct ComparatorContext {
    CompareOptions options;
    ValuesFormatter values;  // numpy-style value text for small outputs; may be null
    LineSink sink;           // may be null: lines are dropped
    ReportState state;
};

// Compares one iteration pair. Throws pg::Error(kInvalidInput) with Polygraphy's "All outputs
// were skipped, no common outputs found!" message when nothing could be matched.
IterationComparison compare_iteration(const std::string& runner0, const Outputs& it0,
                                      const std::string& runner1, const Outputs& it1,
                                      ComparatorContext& ctx);

// Compares every consecutive runner pair.
AccuracyResult compare_accuracy(const std::vector<RunResult>& runs, ComparatorContext& ctx);

// JSON report: per runner pair, per iteration, per output: passed and every statistic.
nlohmann::ordered_json accuracy_to_json(const AccuracyResult& r);

}  // namespace pg::compare
