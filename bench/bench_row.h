// interpreter_bench's result for one model (its table row) and the one-line text a per-model
// child process hands it to the parent in: each model's comparison runs in a process of its own
// (interpreter_bench.cc says why).
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cross_core.h"

namespace pg::bench {

struct Memory {
    double peak = NAN, weights = NAN, live = NAN;  // bytes
    double loaded = NAN;     // VmRSS after loading the model, minus the baseline
    double load_peak = NAN;  // VmHWM after loading the model (before running), minus the baseline
    double file = NAN;       // growth of RssFile over the run (code and other file-backed pages)
    // Growth of the resident anonymous memory from before loading to after the run, from
    // /proc/self/smaps_rollup (a walk of the page tables): steady from child to child where the
    // VmHWM figure is not (interpreter_bench.cc). Not a peak: memory freed back to the system
    // during the run does not show.
    double anon = NAN;
};

// Output agreement: the table's element-wise figure and a scale-aware one for the notes.
struct Agreement {
    double max_rel = NAN;          // max |a - b| / max(|b|, 1e-6)
    double max_abs = NAN;          // max |a - b|
    double max_ort = NAN;          // max |b|
    double max_rel_pg = NAN;       // Polygraphy-style: max |a - b| / |b| (inf where b == 0 != a)
    uint64_t over = 0, count = 0;  // elements with |a - b| / |b| > 1e-5, elements compared
};

struct Row {
    std::string name;
    double ref_ms = NAN, ort_ms = NAN;
    std::vector<double> pair_ratios;  // per pair of blocks (reference median / ONNX Runtime's)
    Agreement agree;
    Memory mem;
    CrossCore before, after;  // the machine's phase around the timed runs
    std::string note;
};

// One line starting "PGROW " (no newline): the name, every number (NaN as "nan"), then the note
// with line breaks turned into spaces. The name must hold no whitespace.
std::string row_line(const Row& r);

// The Row of a row_line, or nullopt when `line` is not one (another prefix, too few fields).
std::optional<Row> parse_row_line(const std::string& line);

}  // namespace pg::bench
