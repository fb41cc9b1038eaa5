#include "debug/search.h"

#include <algorithm>

#include "base/error.h"
#include "base/log.h"

namespace pg::debug {

namespace {

NodeSet to_set(const std::vector<std::string>& v) {
    return NodeSet(v.begin(), v.end());
}

std::vector<std::string> prefix(const std::vector<std::string>& v, size_t k) {
    return std::vector<std::string>(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k));
}

// The smallest k in (lo, hi] with check(prefix k) true, given check(prefix lo) false and
// check(prefix hi) true.
size_t binary_search_prefix(const std::vector<std::string>& ranked, CountingCheck& check, size_t lo,
                            size_t hi) {
    while (hi - lo > 1) {
        const size_t mid = lo + (hi - lo) / 2;
        if (check(to_set(prefix(ranked, mid))))
            hi = mid;
        else
            lo = mid;
        check.set_interval("greedy", hi, lo);
        check.report();
    }
    return hi;
}

// The smallest passing prefix length of `ranked` (galloping 1, 2, 4, ...), or 0 when none.
size_t smallest_passing_prefix(const std::vector<std::string>& ranked, CountingCheck& check) {
    size_t lo = 0;
    for (size_t k = 1;; k *= 2) {
        k = std::min(k, ranked.size());
        const bool ok = check(to_set(prefix(ranked, k)));
        check.set_interval("greedy", ok ? k : SearchProgress::kUnknown, ok ? lo : k);
        check.report();
        if (ok) return binary_search_prefix(ranked, check, lo, k);
        if (k == ranked.size()) return 0;
        lo = k;
    }
}

// Tries to drop `chunk` (names in `current`) from `current`; recurses into halves, second
// half first, when the whole chunk cannot go. `necessary` counts the nodes proven needed.
void try_remove(const std::vector<std::string>& chunk, NodeSet& current, CountingCheck& check,
                size_t& necessary) {
    if (chunk.empty()) return;
    NodeSet without = current;
    for (const auto& n : chunk) without.erase(n);
    const bool ok = check(without);
    if (ok) current = std::move(without);
    if (!ok && chunk.size() == 1) ++necessary;
    check.set_interval("minimize", current.size(), necessary);
    check.report();
    if (ok || chunk.size() == 1) return;
    const auto mid = chunk.begin() + static_cast<std::ptrdiff_t>(chunk.size() / 2);
    try_remove(std::vector<std::string>(mid, chunk.end()), current, check, necessary);
    try_remove(std::vector<std::string>(chunk.begin(), mid), current, check, necessary);
}

SearchResult finish(bool passed, const NodeSet& set, const std::vector<std::string>& order,
                    const CountingCheck& check) {
    SearchResult r;
    r.passed = passed;
    for (const auto& n : order)
        if (set.count(n)) r.fp32_nodes.push_back(n);
    r.evaluations = check.evaluations();
    return r;
}

const char* side(Direction dir) {
    return dir == Direction::kForward ? "first" : "last";
}

SearchResult span_result(bool passed, const std::vector<std::string>& topo, Direction dir,
                         size_t good, const CountingCheck& check) {
    if (!passed) {
        log_error("Could not find a configuration that satisfied accuracy requirements.");
        return finish(false, {}, topo, check);
    }
    log_info("To achieve acceptable accuracy, try running the {} {} layer(s) in higher precision",
             side(dir), good);
    return finish(true, to_set(select_span(topo, dir, good)), topo, check);
}

bool check_span(const std::vector<std::string>& topo, Direction dir, size_t k,
                CountingCheck& check) {
    log_info("Selecting {} {} layer(s) to run in higher precision", side(dir), k);
    return check(to_set(select_span(topo, dir, k)));
}

}  // namespace

Direction parse_direction(const std::string& s) {
    if (s == "forward") return Direction::kForward;
    if (s == "reverse") return Direction::kReverse;
    throw Error(ErrorKind::kUsage, "--direction: expected forward or reverse, got '" + s + "'");
}

bool CountingCheck::operator()(const NodeSet& s) {
    auto it = cache_.find(s);
    if (it != cache_.end()) return it->second;
    const bool ok = check_(s);
    cache_.emplace(s, ok);
    return ok;
}

void CountingCheck::set_interval(const char* phase, size_t good, size_t bad) {
    state_.phase = phase;
    state_.good = good;
    state_.bad = bad;
}

void CountingCheck::report() {
    if (!progress_ || reported_ == cache_.size()) return;
    reported_ = cache_.size();
    state_.evaluations = reported_;
    progress_(state_);
}

std::vector<std::string> select_span(const std::vector<std::string>& topo, Direction dir,
                                     size_t k) {
    k = std::min(k, topo.size());
    if (dir == Direction::kForward) return prefix(topo, k);
    return std::vector<std::string>(topo.end() - static_cast<std::ptrdiff_t>(k), topo.end());
}

SearchResult minimize(const std::vector<std::string>& ranked, const CheckFn& check_fn,
                      const ProgressFn& progress) {
    CountingCheck check(check_fn, progress);
    const bool empty_ok = check({});
    check.set_interval("greedy", empty_ok ? 0 : SearchProgress::kUnknown,
                       empty_ok ? SearchProgress::kUnknown : 0);
    check.report();
    if (empty_ok) return finish(true, {}, ranked, check);
    if (ranked.empty()) return finish(false, {}, ranked, check);
    const size_t k = smallest_passing_prefix(ranked, check);
    if (k == 0) return finish(false, {}, ranked, check);
    log_info("Greedy: the {} highest-ranked node(s) in float32 pass; minimizing", k);
    NodeSet current = to_set(prefix(ranked, k));
    // The k-th node is needed (prefix k-1 failed); the others may not be.
    std::vector<std::string> rest = prefix(ranked, k - 1);
    size_t necessary = 1;
    try_remove(rest, current, check, necessary);
    return finish(true, current, ranked, check);
}

SearchResult bisect(const std::vector<std::string>& topo, Direction dir, const CheckFn& check_fn,
                    const ProgressFn& progress) {
    CountingCheck check(check_fn, progress);
    const size_t L = topo.size();
    size_t k = L, good = L + 1, bad = 0;
    while (true) {
        const bool ok = check_span(topo, dir, k, check);
        (ok ? good : bad) = k;
        check.set_interval("bisect", good <= L ? good : SearchProgress::kUnknown, bad);
        check.report();
        const size_t next = ok ? (good + bad) / 2 : (good + bad + 1) / 2;
        if (next == k || good - bad <= 1 || next > L) break;
        k = next;
    }
    return span_result(good <= L, topo, dir, good, check);
}

SearchResult linear(const std::vector<std::string>& topo, Direction dir, const CheckFn& check_fn,
                    const ProgressFn& progress) {
    CountingCheck check(check_fn, progress);
    for (size_t k = 0; k <= topo.size(); ++k) {
        const bool ok = check_span(topo, dir, k, check);
        // Every shorter span failed: on a pass the last failure is k - 1 (none for k = 0).
        const size_t last_bad = k == 0 ? SearchProgress::kUnknown : k - 1;
        check.set_interval("linear", ok ? k : SearchProgress::kUnknown, ok ? last_bad : k);
        check.report();
        if (ok) return span_result(true, topo, dir, k, check);
    }
    return span_result(false, topo, dir, 0, check);
}

}  // namespace pg::debug
