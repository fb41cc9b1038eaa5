#include "emu/calibration.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "base/error.h"
#include "emu/precision.h"

namespace pg::emu {

namespace {

constexpr const char* kHeader = "polygraph-int8-calibration v1";

bool is_constant(const ir::Value* v) {
    return v && (v->is_initializer() || (v->producer() && v->producer()->op_type == "Constant"));
}

// Collects |x| of the activation inputs of INT8 nodes during a float32 run.
class CalibrationHook : public runtime::NodeHook {
  public:
    CalibrationHook(const std::set<const ir::Node*>& nodes, bool keep_values)
        : nodes_(nodes), keep_values_(keep_values) {}
    void on_node(const ir::Node& node, const std::vector<const ops::RtValue*>& inputs,
                 const std::vector<ops::RtValue>&) override {
        if (!nodes_.count(&node)) return;
        for (size_t i = 0; i < inputs.size() && i < node.inputs().size(); ++i) {
            const ir::Value* v = node.input(i);
            if (!int8_quantizes_input(node, i) || !v || is_constant(v)) continue;
            const ops::RtValue* rv = inputs[i];
            if (!rv || !rv->is_tensor() || rv->tensor().dtype() != DataType::kFloat32) continue;
            // A tensor read by several INT8 nodes is recorded once per run.
            if (!seen_.insert(v->name()).second) continue;
            const Tensor& t = rv->tensor();
            const float* d = t.data<float>();
            double& amax = amax_[v->name()];
            std::vector<float>* vals = keep_values_ ? &values_[v->name()] : nullptr;
            for (uint64_t k = 0; k < t.numel(); ++k) {
                const float a = std::fabs(d[k]);
                if (!std::isfinite(a)) continue;
                amax = std::max(amax, static_cast<double>(a));
                if (vals) vals->push_back(a);
            }
        }
    }
    void next_run() { seen_.clear(); }
    std::map<std::string, double> amax_;
    std::map<std::string, std::vector<float>> values_;

  private:
    const std::set<const ir::Node*>& nodes_;
    bool keep_values_;
    std::set<std::string> seen_;
};

// KL(P || Q) for the first `i` bins of `hist` with `outliers` (the count beyond them) folded
// into bin i-1 (P), and Q those bins merged into kEntropyLevels levels and spread back over the
// bins nonzero in P.
double clipped_kl(const std::vector<double>& hist, size_t i, double outliers) {
    std::vector<double> p(hist.begin(), hist.begin() + static_cast<std::ptrdiff_t>(i));
    p[i - 1] += outliers;
    std::vector<double> q(i, 0.0);
    for (size_t level = 0; level < kEntropyLevels; ++level) {
        const size_t b0 = level * i / kEntropyLevels, b1 = (level + 1) * i / kEntropyLevels;
        double sum = 0, nonzero = 0;
        for (size_t b = b0; b < b1; ++b) sum += hist[b], nonzero += p[b] != 0;
        for (size_t b = b0; b < b1; ++b) q[b] = p[b] != 0 ? sum / nonzero : 0;
    }
    double psum = 0, qsum = 0;
    for (size_t b = 0; b < i; ++b) psum += p[b], qsum += q[b];
    if (psum <= 0 || qsum <= 0) return std::numeric_limits<double>::infinity();
    // Bins where P has mass and Q none get a small share (epsilon smoothing), so one empty
    // level does not make the candidate infinitely bad.
    constexpr double kEps = 1e-4;
    double kl = 0;
    for (size_t b = 0; b < i; ++b) {
        if (p[b] == 0) continue;
        const double pb = p[b] / psum, qb = std::max(q[b] / qsum, kEps / static_cast<double>(i));
        kl += pb * std::log(pb / qb);
    }
    return kl;
}

double percentile_of(std::vector<float>& v, double pct) {
    if (v.empty()) return 0;
    const double pos = std::ceil(pct / 100.0 * static_cast<double>(v.size()));
    const size_t idx = static_cast<size_t>(std::clamp(pos, 1.0, static_cast<double>(v.size()))) - 1;
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(idx), v.end());
    return v[idx];
}

std::string trim(const std::string& s) {
    const size_t b = s.find_first_not_of(" \t\r");
    if (b == std::string::npos) return "";
    const size_t e = s.find_last_not_of(" \t\r");
    return s.substr(b, e - b + 1);
}

}  // namespace

CalibrationMethod parse_calibration_method(const std::string& s) {
    if (s == "minmax" || s == "min-max") return CalibrationMethod::kMinMax;
    if (s == "percentile") return CalibrationMethod::kPercentile;
    if (s == "entropy") return CalibrationMethod::kEntropy;
    throw Error(ErrorKind::kUsage,
                "--calibration-method: expected minmax, percentile or entropy, got '" + s + "'");
}

const char* calibration_method_name(CalibrationMethod m) {
    return m == CalibrationMethod::kMinMax       ? "minmax"
           : m == CalibrationMethod::kPercentile ? "percentile"
                                                 : "entropy";
}

double entropy_threshold(const std::vector<double>& hist, double bin_width) {
    const size_t n = hist.size();
    double total = 0;
    for (double h : hist) total += h;
    if (n < kEntropyLevels || total <= 0) return static_cast<double>(n) * bin_width;
    std::vector<double> suffix(n + 1, 0.0);  // suffix[i] = sum of hist[i..n)
    for (size_t i = n; i-- > 0;) suffix[i] = suffix[i + 1] + hist[i];
    size_t best = n;
    double best_kl = std::numeric_limits<double>::infinity();
    for (size_t i = kEntropyLevels; i <= n; ++i) {
        const double kl = clipped_kl(hist, i, suffix[i]);
        if (kl < best_kl) best_kl = kl, best = i;
    }
    return std::min((static_cast<double>(best) + 0.5) * bin_width,
                    static_cast<double>(n) * bin_width);
}

double entropy_amax(const std::vector<float>& abs_values) {
    float amax = 0;
    for (float v : abs_values) amax = std::max(amax, v);
    if (!(amax > 0)) return 0;
    const double width = static_cast<double>(amax) / static_cast<double>(kEntropyBins);
    std::vector<double> hist(kEntropyBins, 0.0);
    for (float v : abs_values) {
        const auto b = static_cast<size_t>(static_cast<double>(v) / width);
        hist[std::min(b, kEntropyBins - 1)] += 1;
    }
    return entropy_threshold(hist, width);
}

bool int8_quantizes_input(const ir::Node&, size_t slot) {
    return slot < 2;
}

std::vector<std::string> int8_activation_inputs(const ir::Node& node) {
    std::vector<std::string> out;
    for (size_t i = 0; i < node.inputs().size(); ++i) {
        const ir::Value* v = node.input(i);
        if (int8_quantizes_input(node, i) && v && !is_constant(v)) out.push_back(v->name());
    }
    return out;
}

int int8_weight_axis(const ir::Node& node, size_t slot, size_t rank) {
    if (slot != 1 || rank < 2) return -1;
    if (node.op_type == "Conv") return 0;
    if (node.op_type == "ConvTranspose") return 1;
    if (node.op_type == "Gemm") {
        const ir::Attribute* a = node.find_attribute("transB");
        return a && a->i ? 0 : 1;
    }
    if (node.op_type == "MatMul") return static_cast<int>(rank) - 1;
    return -1;
}

ScaleTable calibrate(const ir::Model& model, const std::vector<const ir::Node*>& int8_nodes,
                     const std::vector<runtime::Feeds>& feeds, const CalibrationOptions& o) {
    if (o.method == CalibrationMethod::kPercentile && !(o.percentile > 0 && o.percentile <= 100))
        throw Error(
            ErrorKind::kUsage,
            fmt::format("--calibration-percentile must be in (0, 100], got {}", o.percentile));
    const std::set<const ir::Node*> nodes(int8_nodes.begin(), int8_nodes.end());
    runtime::SessionOptions so;
    so.threads = o.threads;
    runtime::Session session(model, so);
    CalibrationHook hook(nodes, o.method != CalibrationMethod::kMinMax);
    for (const auto& f : feeds) {
        hook.next_run();
        session.run(f, &hook);
    }
    ScaleTable out;
    for (auto& [name, amax] : hook.amax_) {
        double a = amax;
        if (o.method == CalibrationMethod::kPercentile)
            a = percentile_of(hook.values_[name], o.percentile);
        else if (o.method == CalibrationMethod::kEntropy)
            a = entropy_amax(hook.values_[name]);
        out[name] = int8_scale(a);
    }
    return out;
}

std::string format_calibration_cache(const ScaleTable& scales, const std::string& method) {
    std::string s = std::string(kHeader) + " method=" + method + "\n";
    for (const auto& [name, scale] : scales) s += fmt::format("{}: {:.9g}\n", name, scale);
    return s;
}

ScaleTable parse_calibration_cache(const std::string& text, const std::string& path) {
    std::istringstream in(text);
    std::string line;
    int lineno = 0;
    ScaleTable out;
    auto bad = [&](const std::string& why) {
        return Error(ErrorKind::kInvalidInput,
                     fmt::format("calibration cache {}: line {}: {}", path, lineno, why));
    };
    bool header = false;
    while (std::getline(in, line)) {
        ++lineno;
        if (trim(line).empty()) continue;
        if (!header) {
            if (line.rfind(kHeader, 0) != 0)
                throw bad(std::string("expected the header '") + kHeader +
                          " ...' (this is not a polygraph INT8 calibration cache)");
            header = true;
            continue;
        }
        const size_t sep = line.rfind(": ");
        if (sep == std::string::npos || sep == 0) throw bad("expected 'tensor_name: scale'");
        const std::string name = line.substr(0, sep), num = trim(line.substr(sep + 2));
        float scale = 0;
        try {
            size_t used = 0;
            scale = std::stof(num, &used);
            if (used != num.size()) throw std::invalid_argument(num);
        } catch (const std::exception&) {
            throw bad("scale '" + num + "' is not a number");
        }
        if (!std::isfinite(scale) || scale < 0)
            throw bad("scale '" + num + "' must be finite and non-negative");
        out[name] = scale;
    }
    if (!header) throw bad("empty file: expected the header '" + std::string(kHeader) + " ...'");
    return out;
}

}  // namespace pg::emu
