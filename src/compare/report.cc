#include "compare/report.h"

#include <algorithm>
#include <cmath>

#include "base/pyformat.h"

namespace pg::compare {

namespace {

std::string g5(double v) {
    return py_g(v, 5);
}

std::string at_index(const ArrayStats& s, const std::vector<int64_t>& idx) {
    return s.count ? py_tuple(idx) : "0";  // Polygraphy's zero_on_empty returns 0
}

std::string shape_text(const std::vector<int64_t>& d) {
    return py_tuple(d);
}

// The stats line with its Values and Histogram blocks one level deeper.
void stats_block(LogLines& out, int indent, const std::string& label, const ArrayStats& s,
                 const std::optional<Tensor>& values, const ValuesFormatter& fmt, bool failed) {
    out.push_back({Severity::kInfo, indent, label + " | Stats: " + stats_string(s)});
    const Severity sev = failed ? Severity::kInfo : Severity::kVerbose;
    if (values && fmt) {
        std::string text = fmt(*values), block = "---- Values ----\n    ";
        for (char c : text) block += c == '\n' ? std::string("\n    ") : std::string(1, c);
        out.push_back({sev, indent + 1, block});
    }
    const std::string hist = histogram_string(s.histogram);
    if (!hist.empty()) out.push_back({sev, indent + 1, hist});
}

std::string required_line(const OutputResult& r) {
    const auto& s = r.settings;
    std::string msg = std::string("Minimum Required Tolerance: ") + error_stat_name(s.stat) +
                      " error | [abs=" + g5(r.required_abs()) +
                      "] OR [rel=" + g5(r.required_rel()) + "]";
    if (s.stat == ErrorStat::kElemwise) {
        msg += " (requirements may be lower if both abs/rel tolerances are set)";
    } else if (s.stat == ErrorStat::kQuantile) {
        msg += " (quantile=" + py_g(s.quantile.value, 4) + ")";
    }
    return msg;
}

void polygraph_lines(LogLines& out, const OutputResult& r, const std::string& runner0,
                     const std::string& runner1) {
    const PairStats& p = *r.stats;
    out.push_back({Severity::kInfo, 2,
                   "Cosine Similarity: " + py_g(p.cosine_similarity, 8) +
                       " | SNR: " + g5(p.snr_db) + " dB | RMSE: " + g5(p.rmse)});
    const ArrayStats* s[2] = {&p.out0, &p.out1};
    const std::string* n[2] = {&runner0, &runner1};
    for (int k = 0; k < 2; ++k) {
        if (!s[k]->nan_count && !s[k]->inf_count) continue;
        out.push_back({Severity::kWarning, 2,
                       "Non-finite values | " + *n[k] + ": " + std::to_string(s[k]->nan_count) +
                           " NaN, " + std::to_string(s[k]->inf_count) + " Inf"});
    }
    if (!p.channel_axis || p.worst_channels.size() < 2) return;
    std::string t = "Worst Channels (axis " + std::to_string(*p.channel_axis) + ")";
    for (const auto& c : p.worst_channels) {
        t += "\n    channel " + std::to_string(c.channel) + ": max abs=" + g5(c.max_abs) +
             ", mean abs=" + g5(c.mean_abs) + ", max rel=" + g5(c.max_rel);
    }
    out.push_back({r.passed ? Severity::kVerbose : Severity::kInfo, 2, t});
}

void simple_lines(LogLines& out, const OutputResult& r, const std::string& runner0,
                  const std::string& runner1, const ValuesFormatter& fmt, ReportState& st) {
    const PairStats& p = *r.stats;
    const bool failed = !r.passed;
    if (p.zero_in_reference && !st.zero_warning_shown) {
        st.zero_warning_shown = true;
        out.push_back({Severity::kWarning, 1,
                       fmt::format("{:35} | Output: {}: Some values are 0. Will add a small "
                                   "epsilon quantity to these when computing relative "
                                   "difference. Note that this may cause some relative "
                                   "differences to be extremely high. ",
                                   runner1, r.name1)});
    }
    stats_block(out, 1, runner0 + ": " + r.name0, p.out0, r.values0, fmt, failed);
    stats_block(out, 1, runner1 + ": " + r.name1, p.out1, r.values1, fmt, failed);
    out.push_back({Severity::kInfo, 1, "Error Metrics: " + r.name0});
    out.push_back({Severity::kInfo, 2, required_line(r)});
    stats_block(out, 2, "Absolute Difference", p.absdiff, r.abs_values, fmt, failed);
    stats_block(out, 2, "Relative Difference", p.reldiff, r.rel_values, fmt, failed);
    polygraph_lines(out, r, runner0, runner1);
}

}  // namespace

std::string stats_string(const ArrayStats& s) {
    std::string t = "mean=" + g5(s.mean) + ", std-dev=" + g5(s.std_dev) + ", var=" + g5(s.var) +
                    ", median=" + g5(s.median) + ", min=" + g5(s.min) + " at " +
                    at_index(s, s.argmin) + ", max=" + g5(s.max) + " at " + at_index(s, s.argmax) +
                    ", avg-magnitude=" + g5(s.avg_magnitude);
    if (s.is_bool) return t + "\n";
    return t + ", p90=" + g5(s.p90) + ", p95=" + g5(s.p95) + ", p99=" + g5(s.p99);
}

std::string histogram_string(const Histogram& h) {
    if (h.empty()) return "";
    const uint64_t peak = *std::max_element(h.counts.begin(), h.counts.end());
    if (peak == 0) return "";
    std::vector<std::string> e;
    size_t w1 = 0, w2 = 0;
    for (size_t k = 0; k < h.edges.size(); ++k) {
        e.push_back(py_g(h.edges[k], 3));
        w1 = std::max(w1, e.back().size());
        if (k) w2 = std::max(w2, e.back().size());
    }
    std::string out = "---- Histogram ----\n" + fmt::format("{:{}}", "Bin Range", w1 + w2 + 5) +
                      "|  Num Elems | Visualization";
    for (size_t k = 0; k < h.counts.size(); ++k) {
        const int bar =
            static_cast<int>(40.0 * static_cast<double>(h.counts[k]) / static_cast<double>(peak));
        out += fmt::format("\n({:<{}}, {:<{}}) | {:>10} | {}", e[k], w1, e[k + 1], w2, h.counts[k],
                           std::string(static_cast<size_t>(bar), '#'));
    }
    return out;
}

LogLines report_output(const OutputResult& r, const std::string& runner0,
                       const std::string& runner1, const ValuesFormatter& values,
                       ReportState& state) {
    LogLines out;
    out.push_back({Severity::kStart, 0,
                   "Comparing Output: '" + r.name0 + "' (dtype=" + dtype_name(r.dtype0) +
                       ", shape=" + shape_text(r.dims0) + ") with '" + r.name1 + "' (dtype=" +
                       dtype_name(r.dtype1) + ", shape=" + shape_text(r.dims1) + ")"});
    if (r.func == CompareFunc::kIndices) {
        for (const auto& f : r.index_failures) out.push_back({Severity::kError, 1, f});
        for (const auto& f : r.not_compared) out.push_back({Severity::kError, 1, f});
        if (!r.stats) return out;
        stats_block(out, 1, runner0 + ": " + r.name0, r.stats->out0, {}, values, !r.passed);
        stats_block(out, 1, runner1 + ": " + r.name1, r.stats->out1, {}, values, !r.passed);
        if (r.passed) {
            out.push_back({Severity::kFinish, 1,
                           "PASSED | Difference is within index tolerance (" +
                               std::to_string(r.index_tolerance) + ")"});
        }
        return out;
    }
    const auto& s = r.settings;
    out.push_back({Severity::kInfo, 1,
                   "Tolerance: [abs=" + g5(s.atol.value) + ", rel=" + g5(s.rtol.value) +
                       "] | Checking " + error_stat_name(s.stat) + " error"});
    for (const auto& n : r.shape_notes) out.push_back({Severity::kWarning, 1, n});
    if (!r.not_compared.empty()) {
        for (const auto& f : r.not_compared) out.push_back({Severity::kError, 1, f});
        if (!state.shape_note_shown) {
            state.shape_note_shown = true;
            out.push_back({Severity::kError, 1,
                           "Note: Use --no-shape-check or set check_shapes=False to attempt to "
                           "compare values anyway."});
        }
        return out;
    }
    simple_lines(out, r, runner0, runner1, values, state);
    const std::string tol = "(rel=" + s.rtol.repr + ", abs=" + s.atol.repr + ")";
    if (r.passed) {
        out.push_back(
            {Severity::kFinish, 1,
             "PASSED | Output: '" + r.name0 + "' | Difference is within tolerance " + tol});
    } else {
        out.push_back({Severity::kError, 1,
                       "FAILED | Output: '" + r.name0 + "' | Difference exceeds tolerance " + tol});
    }
    return out;
}

}  // namespace pg::compare
