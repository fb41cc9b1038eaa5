#include "debug/reduce.h"

#include <utility>
#include <vector>

#include "base/error.h"
#include "base/log.h"

namespace pg::debug {

namespace {

// best_bad / best_good bookkeeping over the trials of one phase.
class Book {
  public:
    Book(ReducePhase phase, size_t whole) : phase_(phase), whole_(whole) {}

    Trial run(const TrialFn& fn, size_t index) {
        const Trial t = fn(index);
        ++trials_;
        if (!t.passed) {
            // Fewest nodes; the later trial wins ties.
            if (!best_bad_ || t.num_nodes <= best_bad_nodes_) {
                best_bad_ = index;
                best_bad_nodes_ = t.num_nodes;
            }
        } else if (!t.skipped) {
            goods_.emplace_back(t.num_nodes, index);
        }
        return t;
    }

    void log(const Trial& t, long long lo, long long hi) const {
        log_info("Reducing {} | Iteration {} | nodes {} | {} | interval [{}, {}]",
                 phase_name(phase_), trials_, t.num_nodes,
                 t.skipped ? "SKIPPED" : (t.passed ? "PASSED" : "FAILED"), lo, hi);
    }

    PhaseResult finish() const {
        PhaseResult r;
        r.best_bad = best_bad_;
        r.best_bad_nodes = best_bad_ ? best_bad_nodes_ : whole_;
        r.trials = trials_;
        // The largest pass below the bad count; else the smallest at or above it.
        for (const auto& [nodes, index] : goods_)
            if (nodes < r.best_bad_nodes && (!r.best_good || nodes >= r.best_good_nodes)) {
                r.best_good = index;
                r.best_good_nodes = nodes;
            }
        if (r.best_good) return r;
        for (const auto& [nodes, index] : goods_)
            if (!r.best_good || nodes < r.best_good_nodes) {
                r.best_good = index;
                r.best_good_nodes = nodes;
            }
        return r;
    }

  private:
    ReducePhase phase_;
    size_t whole_;
    std::optional<size_t> best_bad_;
    size_t best_bad_nodes_ = 0;
    std::vector<std::pair<size_t, size_t>> goods_;  // (num_nodes, index) in trial order
    size_t trials_ = 0;
};

// Binary search between a passing and a failing end. Phase 1: pass at -1, fail at n, the
// answer is the smallest failing index. Phase 2: fail at -1, pass at n, the largest failing.
void bisect(ReducePhase phase, size_t n, Book& book, const TrialFn& fn) {
    const bool outputs = phase == ReducePhase::kOutputs;
    long long good = outputs ? -1 : static_cast<long long>(n);
    long long bad = outputs ? static_cast<long long>(n) : -1;
    while ((good > bad ? good - bad : bad - good) > 1) {
        const long long mid = (good + bad) / 2;
        const Trial t = book.run(fn, static_cast<size_t>(mid));
        (t.passed ? good : bad) = mid;
        book.log(t, good, bad);
    }
}

// Every index once: phase 1 from n-1 down to 0, phase 2 from 0 up to n-1.
void linear(ReducePhase phase, size_t n, Book& book, const TrialFn& fn) {
    for (size_t k = 0; k < n; ++k) {
        const size_t index = phase == ReducePhase::kOutputs ? n - 1 - k : k;
        const Trial t = book.run(fn, index);
        if (phase == ReducePhase::kOutputs)
            book.log(t, 0, static_cast<long long>(index) - 1);
        else
            book.log(t, static_cast<long long>(index) + 1, static_cast<long long>(n) - 1);
    }
}

}  // namespace

ReduceMode parse_reduce_mode(const std::string& s) {
    if (s == "bisect") return ReduceMode::kBisect;
    if (s == "linear") return ReduceMode::kLinear;
    throw Error(ErrorKind::kUsage, "--mode: expected bisect or linear, got '" + s + "'");
}

const char* phase_name(ReducePhase p) {
    return p == ReducePhase::kOutputs ? "outputs" : "inputs";
}

PhaseResult reduce_phase(ReducePhase phase, size_t n, size_t whole_nodes, ReduceMode mode,
                         const TrialFn& trial) {
    Book book(phase, whole_nodes);
    log_info("Reducing model {} over {} cut point(s) with --mode {}", phase_name(phase), n,
             mode == ReduceMode::kBisect ? "bisect" : "linear");
    if (mode == ReduceMode::kBisect)
        bisect(phase, n, book, trial);
    else
        linear(phase, n, book, trial);
    PhaseResult r = book.finish();
    log_info("Finished reducing model {} | {} trial(s) | best bad: {}", phase_name(phase), r.trials,
             r.best_bad ? "node " + std::to_string(*r.best_bad) : "none");
    return r;
}

}  // namespace pg::debug
