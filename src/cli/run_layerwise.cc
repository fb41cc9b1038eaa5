#include "cli/run_layerwise.h"

#include "cli/attribute_error.h"
#include "cli/layerwise_save.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <set>
#include <unordered_map>

#include "base/error.h"
#include "base/log.h"
#include "base/pyformat.h"
#include "compare/error_stats.h"
#include "compare/simple_compare.h"
#include "compare/validate.h"
#include "emu/emu_runner.h"
#include "emu/root_cause.h"
#include "layerwise/layerwise.h"

namespace pg::cli {

namespace {

using nlohmann::ordered_json;

struct StopEarly {};

// float32 x float32 in float32 arithmetic, as numpy computes it (same figures as element_diff).
bool quick_compare_f32(const float* a, const float* b, uint64_t n, const compare::SimpleSettings& s,
                       bool* passed, double* max_abs, double* mean_abs, double* max_rel,
                       double* cosine) {
    const float atol = static_cast<float>(s.atol.value), rtol = static_cast<float>(s.rtol.value);
    const float eps = static_cast<float>(compare::kRelEpsilon);
    double sum_abs = 0, dot = 0, na = 0, nb = 0;
    float mabs = 0, mrel = 0;
    bool bad = false;
    for (uint64_t i = 0; i < n; ++i) {
        const float d = std::fabs(a[i] - b[i]);
        const float r = d / std::fabs(b[i] == 0.0f ? eps : b[i]);
        bad |= !(d <= atol) && !(r <= rtol);
        mabs = d > mabs || std::isnan(d) ? d : mabs;
        mrel = r > mrel || std::isnan(r) ? r : mrel;
        sum_abs += d;
        dot += static_cast<double>(a[i]) * b[i], na += static_cast<double>(a[i]) * a[i],
            nb += static_cast<double>(b[i]) * b[i];
    }
    *passed = !bad;
    *max_abs = mabs, *max_rel = mrel;
    *mean_abs = n ? sum_abs / static_cast<double>(n) : 0;
    *cosine = na == 0 && nb == 0 ? 1.0 : (na == 0 || nb == 0 ? 0.0 : dot / std::sqrt(na * nb));
    return true;
}

// One pass over a float pair for the elementwise check: the figures the table shows, without
// the medians, percentiles and histograms of the full comparison (layer-wise runs compare
// hundreds of tensors). Returns false when the pair needs the full comparison instead.
bool quick_compare(const Tensor& a, const Tensor& b, const compare::SimpleSettings& s, bool* passed,
                   double* max_abs, double* mean_abs, double* max_rel, double* cosine) {
    if (s.stat != compare::ErrorStat::kElemwise || a.dims() != b.dims() || a.is_string() ||
        b.is_string() || !dtype_is_float(a.dtype()) || !dtype_is_float(b.dtype()) ||
        dtype_bits(a.dtype()) < 16 || dtype_bits(b.dtype()) < 16)
        return false;
    if (a.dtype() == DataType::kFloat32 && b.dtype() == DataType::kFloat32 &&
        !s.infinities_compare_equal)
        return quick_compare_f32(a.data<float>(), b.data<float>(), a.numel(), s, passed, max_abs,
                                 mean_abs, max_rel, cosine);
    const auto kind = compare::diff_kind(a.dtype(), b.dtype());
    double sum_abs = 0, dot = 0, na = 0, nb = 0;
    *passed = true;
    *max_abs = *max_rel = 0;
    for (uint64_t i = 0; i < a.numel(); ++i) {
        const double x = a.element_as_double(i), y = b.element_as_double(i);
        double abs = 0, rel = 0;
        compare::element_diff(x, y, kind, s.infinities_compare_equal, true, abs, rel);
        if ((abs > s.atol.value || std::isnan(abs)) && (rel > s.rtol.value || std::isnan(rel)))
            *passed = false;
        if (!(abs <= *max_abs)) *max_abs = abs;
        if (!(rel <= *max_rel)) *max_rel = rel;
        sum_abs += abs;
        dot += x * y, na += x * x, nb += y * y;
    }
    *mean_abs = a.numel() ? sum_abs / static_cast<double>(a.numel()) : 0;
    *cosine = na == 0 && nb == 0 ? 1.0 : (na == 0 || nb == 0 ? 0.0 : dot / std::sqrt(na * nb));
    return true;
}

struct Row {
    std::string node, op, tensor;
    bool passed = false;
    double max_abs = 0, max_rel = 0, mean_abs = 0, cosine = 1;
    std::string note;
    std::string evidence;     // the emulator's evidence for the node (an --emu runner in the pair)
    std::string by_evidence;  // why the evidence makes the node divergent, or ""
    std::string label;        // root-cause label of a divergent node (an --emu runner in the pair)
};

// Compares each pair as it arrives and keeps only the figures.
class TableSink : public layerwise::PairSink {
  public:
    TableSink(const ir::Model& m, const compare::CompareOptions& o, bool fail_fast, size_t total,
              LayerwiseSaver* saver, const emu::EmuRunner* emu)
        : opts_(o),
          fail_fast_(fail_fast),
          total_(total),
          tty_(::isatty(2)),
          saver_(saver),
          emu_(emu) {
        for (const auto& n : m.graph->nodes())
            for (const ir::Value* v : n->outputs())
                if (v) producer_[v->name()] = n.get();
    }
    void on_pair(const std::string&, const std::string& name, const Tensor& a,
                 const Tensor& b) override {
        if (saver_) saver_->add(name, a, b);
        Row r;
        r.tensor = name;
        if (const ir::Node* n = producer_.count(name) ? producer_[name] : nullptr)
            r.node = n->name, r.op = n->op_type;
        const auto settings = compare::resolve_simple(opts_, name);
        try {
            if (quick_compare(a, b, settings, &r.passed, &r.max_abs, &r.mean_abs, &r.max_rel,
                              &r.cosine))
                return finish_row(r, a, b);
            auto res = compare::compare_simple("a", a, "b", b, settings);
            r.passed = res.passed;
            if (res.stats) {
                r.max_abs = res.stats->absdiff.max;
                r.mean_abs = res.stats->absdiff.mean;
                r.max_rel = res.stats->reldiff.max;
                r.cosine = res.stats->cosine_similarity;
            }
            if (!res.not_compared.empty()) r.note = res.not_compared.front();
        } catch (const Error& e) {
            r.note = e.message();
        }
        finish_row(r, a, b);
    }
    void finish_row(Row& r, const Tensor& a, const Tensor& b) {
        if (opts_.validate) check_finite(r, a, b);
        if (emu_) add_evidence(r);
        rows.push_back(r);
        progress();
        if (!r.passed && fail_fast_) throw StopEarly{};
    }
    std::vector<Row> rows;

  private:
    // The emulator's evidence for the row's node (recorded when the node ran, before its output
    // reached the sink); evidence of overflow, NaN/Inf or clipping makes the row divergent.
    void add_evidence(Row& r) const {
        const emu::NodeEvidence* e = emu_->evidence().find(r.node);
        if (!e) return;
        r.evidence = std::string(emu::precision_name(e->precision)) + " " + emu::evidence_cell(*e);
        r.by_evidence = emu::divergence_by_evidence(*e);
        if (!r.by_evidence.empty()) r.passed = false;
    }
    // --validate: NaN or Inf on either side fails the tensor.
    static void check_finite(Row& r, const Tensor& a, const Tensor& b) {
        for (const auto& [side, t] :
             {std::pair<const char*, const Tensor*>{"first runner", &a}, {"second runner", &b}}) {
            const auto v = compare::validate_tensor(side, r.tensor, *t);
            if (v.passed()) continue;
            r.passed = false;
            r.note = std::string(side) + ": " + std::to_string(v.nan_count) + " NaN, " +
                     std::to_string(v.inf_count) + " Inf";
            return;
        }
    }
    void progress() {
        if (!tty_ || total_ == 0) return;
        std::fprintf(stderr, "\r[layer-wise] %zu/%zu tensors compared", rows.size(), total_);
        if (rows.size() == total_) std::fprintf(stderr, "\n");
    }
    const compare::CompareOptions& opts_;
    bool fail_fast_;
    size_t total_;
    bool tty_;
    LayerwiseSaver* saver_;
    const emu::EmuRunner* emu_;
    std::unordered_map<std::string, const ir::Node*> producer_;
};

std::string table(const std::vector<Row>& rows) {
    std::string s = fmt::format("{:>5} | {:<32} | {:<16} | {:>11} | {:>11} | {:>10} | {}\n", "#",
                                "node", "op", "max abs", "max rel", "cosine", "status");
    for (size_t i = 0; i < rows.size(); ++i) {
        const Row& r = rows[i];
        std::string why = r.label.empty() ? "" : "root cause: " + r.label;
        for (const std::string* part : {&r.by_evidence, &r.note})
            if (!part->empty()) why += (why.empty() ? "" : "; ") + *part;
        s += fmt::format("{:>5} | {:<32} | {:<16} | {:>11} | {:>11} | {:>10} | {}{}{}\n", i,
                         r.node.empty() ? r.tensor : r.node, r.op, py_g(r.max_abs, 5),
                         py_g(r.max_rel, 5), py_g(r.cosine, 6), r.passed ? "ok" : "FAILED",
                         why.empty() ? "" : " (" + why + ")",
                         r.evidence.empty() ? "" : " [emu: " + r.evidence + "]");
    }
    return s;
}

ordered_json rows_json(const std::vector<Row>& rows) {
    ordered_json arr = ordered_json::array();
    for (const Row& r : rows)
        arr.push_back({{"tensor", r.tensor},
                       {"node", r.node},
                       {"op", r.op},
                       {"passed", r.passed},
                       {"max_abs", r.max_abs},
                       {"mean_abs", r.mean_abs},
                       {"max_rel", r.max_rel},
                       {"cosine_similarity", r.cosine}});
    for (size_t i = 0; i < rows.size(); ++i) {
        if (!rows[i].evidence.empty()) arr[i]["emu_evidence"] = rows[i].evidence;
        if (!rows[i].by_evidence.empty()) arr[i]["divergent_by_evidence"] = rows[i].by_evidence;
        if (!rows[i].label.empty()) arr[i]["root_cause_label"] = rows[i].label;
    }
    return arr;
}

// With an emulator in the pair: the root-cause label of every divergent row.
void add_labels(const emu::EmuRunner* emu, const ir::Model& m, std::vector<Row>& rows) {
    if (!emu) return;
    std::set<std::string> divergent;
    for (const Row& r : rows)
        if (!r.passed && !r.node.empty()) divergent.insert(r.node);
    for (Row& r : rows)
        if (!r.passed && !r.node.empty())
            r.label = emu::divergent_node_label(m, r.node, emu->evidence(), divergent);
}

// The emulator of a runner pair (the second runner first), or nullptr.
const emu::EmuRunner* emulator_of(const runners::Runner& a, const runners::Runner& b) {
    if (const auto* e = dynamic_cast<const emu::EmuRunner*>(&b)) return e;
    return dynamic_cast<const emu::EmuRunner*>(&a);
}

// With an emulator in the pair: the node whose evidence explains the divergence.
ordered_json report_root_cause(const emu::EmuRunner* emu_runner, const ir::Model& m,
                               const Row& bad) {
    if (!emu_runner || bad.node.empty()) return nullptr;
    const emu::RootCause rc = emu::find_root_cause(m, bad.node, emu_runner->evidence());
    if (rc.found)
        log_error("Root cause: {} | label: {} | '{}' ({}) {}", rc.explanation, rc.label, bad.node,
                  bad.op,
                  rc.divergent_label == "local" ? "is itself the cause"
                                                : "shows it through " + rc.divergent_label);
    else
        log_info("Root cause: '{}' ({}) | label: {} | {}", bad.node, bad.op, rc.label,
                 rc.explanation);
    return {{"node", rc.node},
            {"op", rc.op},
            {"label", rc.label},
            {"explanation", rc.explanation},
            {"divergent_node_label", rc.divergent_label}};
}

ordered_json first_divergent_json(const Row& bad) {
    ordered_json j{{"node", bad.node}, {"op", bad.op}, {"tensor", bad.tensor}};
    if (!bad.by_evidence.empty()) j["divergent_by_evidence"] = bad.by_evidence;
    if (!bad.label.empty()) j["root_cause_label"] = bad.label;
    return j;
}

const Row* first_divergent(const std::vector<Row>& rows) {
    for (const Row& r : rows)
        if (!r.passed) return &r;
    return nullptr;
}

// --attribute-error: local vs inherited error of the first (up to 10) divergent nodes.
ordered_json report_attribution(runners::Runner& a, runners::Runner& b, const ir::Model& m,
                                const std::vector<Row>& rows,
                                const std::map<std::string, Tensor>& feed,
                                const compare::CompareOptions& opts) {
    std::vector<const ir::Node*> nodes;
    for (const Row& r : rows)
        for (const auto& n : m.graph->nodes())
            if (!r.passed && nodes.size() < 10 && n->output(0) && n->output(0)->name() == r.tensor)
                nodes.push_back(n.get());
    ordered_json j = ordered_json::array();
    if (nodes.empty()) return j;
    std::string text = "Error attribution (each divergent node re-run alone on " + b.name() +
                       " with " + a.name() + "'s inputs):";
    for (const Attribution& at : attribute_errors(a, b, m, nodes, feed, opts)) {
        const std::string verdict = !at.computed      ? "n/a (" + at.note + ")"
                                    : at.local_passed ? "inherited"
                                                      : "local";
        text += fmt::format("\n    {:<32} {:<16} local max abs {:>11} | local max rel {:>11} | {}",
                            at.node, at.op, py_g(at.local_max_abs, 5), py_g(at.local_max_rel, 5),
                            verdict);
        j.push_back({{"node", at.node},
                     {"op", at.op},
                     {"tensor", at.tensor},
                     {"computed", at.computed},
                     {"local_passed", at.local_passed},
                     {"local_max_abs", at.local_max_abs},
                     {"local_max_rel", at.local_max_rel},
                     {"verdict", verdict}});
    }
    logger().log(Severity::kInfo, text);
    return j;
}

// Compares one runner pair layer by layer; returns whether every tensor matched.
bool compare_pair(runners::Runner& a, runners::Runner& b, const ir::Model& m,
                  const layerwise::Options& lo, const std::vector<runners::NamedTensors>& feeds,
                  const compare::CompareOptions& opts, bool fail_fast, LayerwiseSaver* saver,
                  bool attribute, ordered_json& out) {
    log_info("Layer-wise Comparison | {} vs. {} | {} tensor(s)", a.name(), b.name(),
             lo.tensors.size());
    const emu::EmuRunner* emu_runner = emulator_of(a, b);
    TableSink sink(m, opts, fail_fast, lo.tensors.size(), saver, emu_runner);
    layerwise::Stats stats;
    std::map<std::string, Tensor> feed(feeds.at(0).begin(), feeds.at(0).end());
    try {
        stats = layerwise::compare_layerwise(a, b, feed, lo, sink);
    } catch (const StopEarly&) {
        log_info("Stopping at the first mismatch (--fail-fast)");
    }
    add_labels(emu_runner, m, sink.rows);
    logger().log(Severity::kInfo, table(sink.rows));
    const Row* bad = first_divergent(sink.rows);
    if (bad)
        log_error(
            "First divergent node: '{}' ({}) | output '{}' | max abs error {} | max rel error {}{}",
            bad->node.empty() ? bad->tensor : bad->node, bad->op, bad->tensor,
            py_g(bad->max_abs, 5), py_g(bad->max_rel, 5),
            bad->by_evidence.empty() ? "" : " | " + bad->by_evidence);
    ordered_json cause = bad ? report_root_cause(emu_runner, m, *bad) : ordered_json(nullptr);
    for (const auto& m2 : stats.missing)
        log_warning("Tensor '{}' was not produced by both runners", m2);
    ordered_json attribution =
        attribute ? report_attribution(a, b, m, sink.rows, feed, opts) : ordered_json(nullptr);
    const size_t passed = static_cast<size_t>(
        std::count_if(sink.rows.begin(), sink.rows.end(), [](const Row& r) { return r.passed; }));
    log_info("Layer-wise Summary | {} vs. {} | Passed: {}/{} tensors", a.name(), b.name(), passed,
             sink.rows.size());
    out.push_back({{"runner0", a.name()},
                   {"runner1", b.name()},
                   {"passed", bad == nullptr},
                   {"first_divergent", bad ? first_divergent_json(*bad) : ordered_json(nullptr)},
                   {"tensors", rows_json(sink.rows)},
                   {"attribution", attribution},
                   {"root_cause", cause}});
    return bad == nullptr && stats.missing.empty();
}

}  // namespace

LayerwiseOutcome run_layerwise(const ParsedArgs& a, const ir::Model& model,
                               std::vector<std::unique_ptr<runners::Runner>>& runners,
                               const std::vector<runners::NamedTensors>& feeds,
                               const compare::CompareOptions& opts) {
    if (runners.size() < 2)
        throw Error(ErrorKind::kUsage, "--onnx-outputs needs at least two runners to compare");
    if (feeds.size() > 1)
        log_warning("Layer-wise comparison uses the first of {} iterations", feeds.size());
    layerwise::Options lo;
    lo.tensors = layerwise::select_tensors(model, a.get_all("onnx_outputs"));
    lo.memory_budget = a.has("memory_budget") ? layerwise::parse_budget(a.get("memory_budget"))
                                              : layerwise::default_budget();
    LayerwiseOutcome out;
    out.json = ordered_json::array();
    std::unique_ptr<LayerwiseSaver> saver;
    if (a.has("save_outputs")) {
        if (runners.size() != 2)
            throw Error(ErrorKind::kUsage,
                        "--save-outputs with --onnx-outputs supports exactly two runners");
        saver = std::make_unique<LayerwiseSaver>(a.get("save_outputs"), runners[0]->name(),
                                                 runners[1]->name());
    }
    for (size_t i = 0; i + 1 < runners.size(); ++i)
        if (!compare_pair(*runners[i], *runners[i + 1], model, lo, feeds, opts, opts.fail_fast,
                          saver.get(), a.count("attribute_error") > 0, out.json)) {
            out.passed = false;
            if (opts.fail_fast) break;
        }
    if (saver) {
        log_info("Saving inference results to {}", a.get("save_outputs"));
        saver->finish();
    }
    return out;
}

}  // namespace pg::cli
