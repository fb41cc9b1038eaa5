#include "compare/comparator.h"

#include "base/error.h"
#include "base/pyformat.h"
#include "compare/output_matching.h"

namespace pg::compare {

namespace {

void send(ComparatorContext& ctx, LogLines lines, int indent) {
    if (!ctx.sink) return;
    for (auto& l : lines) l.indent += indent;
    ctx.sink(lines);
}

std::vector<std::string> names_of(const Outputs& o) {
    std::vector<std::string> n;
    for (const auto& e : o) n.push_back(e.first);
    return n;
}

OutputResult compare_one(const std::string& n0, const Tensor& t0, const std::string& n1,
                         const Tensor& t1, const CompareOptions& o) {
    if (o.func == CompareFunc::kIndices) {
        return compare_indices(n0, t0, n1, t1, o.index_tolerance.get(n0), o.fail_fast);
    }
    return compare_simple(n0, t0, n1, t1, resolve_simple(o, n0));
}

void iteration_summary(const IterationComparison& ic, const Outputs& it0, const Outputs& it1,
                       const std::string& r0, const std::string& r1, ComparatorContext& ctx) {
    std::vector<std::string> bad, all;
    for (const auto& o : ic.outputs) {
        all.push_back(o.name0);
        if (!o.passed) bad.push_back(o.name0);
    }
    if (!bad.empty())
        send(ctx, {{Severity::kError, 0, "FAILED | Mismatched outputs: " + py_list(bad)}}, 1);
    else
        send(ctx,
             {{Severity::kFinish, 0, "PASSED | All outputs matched | Outputs: " + py_list(all)}},
             1);
    if (ic.outputs.empty() && (!it0.empty() || !it1.empty())) {
        throw Error(ErrorKind::kInvalidInput,
                    "All outputs were skipped, no common outputs found! Note:\n" + r0 +
                        " outputs: " + py_list(names_of(it0)) + "\n" + r1 +
                        " outputs: " + py_list(names_of(it1)));
    }
}

}  // namespace

bool IterationComparison::passed() const {
    for (const auto& o : outputs) {
        if (!o.passed) return false;
    }
    return true;
}

size_t PairComparison::passed_iterations() const {
    size_t n = 0;
    for (const auto& it : iterations) n += it.passed() ? 1 : 0;
    return n;
}

bool PairComparison::passed() const {
    return passed_iterations() == iterations.size();
}

bool AccuracyResult::passed() const {
    for (const auto& p : pairs) {
        if (!p.passed()) return false;
    }
    return true;
}

IterationComparison compare_iteration(const std::string& runner0, const Outputs& it0,
                                      const std::string& runner1, const Outputs& it1,
                                      ComparatorContext& ctx) {
    const auto& o = ctx.options;
    if (o.func == CompareFunc::kSimple) {
        LogLines pre;
        for (auto& w : extra_key_warnings(o, names_of(it0)))
            pre.push_back({Severity::kWarning, 0, w});
        if (!o.check_shapes) {
            pre.push_back({Severity::kInfo, 0,
                           "Strict shape checking disabled. Will attempt to "
                           "match output shapes before comparisons"});
        }
        send(ctx, pre, 1);
    }
    OutputMatching m = match_outputs(names_of(it0), names_of(it1), runner1);
    send(ctx, m.lines, 1);
    IterationComparison ic;
    for (const auto& match : m.matches) {
        const auto& [n0, t0] = it0[match.index0];
        const auto& [n1, t1] = it1[match.index1];
        ic.outputs.push_back(compare_one(n0, t0, n1, t1, o));
        send(ctx, report_output(ic.outputs.back(), runner0, runner1, ctx.values, ctx.state), 1);
        if (o.fail_fast && !ic.outputs.back().passed) return ic;
    }
    iteration_summary(ic, it0, it1, runner0, runner1, ctx);
    return ic;
}

namespace {

PairComparison compare_pair(const RunResult& a, const RunResult& b, ComparatorContext& ctx) {
    PairComparison pc{a.runner, b.runner, {}, false};
    send(ctx, {{Severity::kStart, 0, "Accuracy Comparison | " + a.runner + " vs. " + b.runner}}, 0);
    const size_t n = std::min(a.iterations.size(), b.iterations.size());
    for (size_t i = 0; i < n; ++i) {
        if (n > 1) send(ctx, {{Severity::kInfo, 0, "Iteration: " + std::to_string(i)}}, 1);
        pc.iterations.push_back(
            compare_iteration(a.runner, a.iterations[i], b.runner, b.iterations[i], ctx));
        if (ctx.options.fail_fast && !pc.iterations.back().passed()) {
            pc.stopped_early = true;
            return pc;
        }
    }
    const size_t p = pc.passed_iterations(), t = pc.iterations.size();
    const double rate = t ? 100.0 * static_cast<double>(p) / static_cast<double>(t) : 0.0;
    send(ctx,
         {{p == t ? Severity::kFinish : Severity::kError, 0,
           "Accuracy Summary | " + a.runner + " vs. " + b.runner +
               " | Passed: " + std::to_string(p) + "/" + std::to_string(t) +
               " iterations | Pass Rate: " + py_float(rate) + "%"}},
         0);
    return pc;
}

}  // namespace

AccuracyResult compare_accuracy(const std::vector<RunResult>& runs, ComparatorContext& ctx) {
    AccuracyResult r;
    for (const auto& [i, j] : consecutive_pairs(runs.size())) {
        r.pairs.push_back(compare_pair(runs[i], runs[j], ctx));
        if (ctx.options.fail_fast && r.pairs.back().stopped_early) break;
    }
    return r;
}

nlohmann::ordered_json accuracy_to_json(const AccuracyResult& r) {
    nlohmann::ordered_json j;
    j["passed"] = r.passed();
    j["pairs"] = nlohmann::ordered_json::array();
    for (const auto& p : r.pairs) {
        nlohmann::ordered_json pj;
        pj["runner0"] = p.runner0;
        pj["runner1"] = p.runner1;
        pj["passed"] = p.passed();
        pj["iterations"] = nlohmann::ordered_json::array();
        for (const auto& it : p.iterations) {
            nlohmann::ordered_json ij;
            ij["passed"] = it.passed();
            ij["outputs"] = nlohmann::ordered_json::array();
            for (const auto& o : it.outputs) ij["outputs"].push_back(output_to_json(o));
            pj["iterations"].push_back(std::move(ij));
        }
        j["pairs"].push_back(std::move(pj));
    }
    return j;
}

}  // namespace pg::compare
