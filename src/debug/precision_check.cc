#include "debug/precision_check.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "base/error.h"
#include "base/log.h"
#include "compare/simple_compare.h"
#include "runners/ref_runner.h"

namespace pg::debug {

namespace {

std::string regex_escape(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (std::string("\\^$.|?*+()[]{}").find(c) != std::string::npos) out += '\\';
        out += c;
    }
    return out;
}

std::map<std::string, Tensor> feed_map(const runners::NamedTensors& feed) {
    return std::map<std::string, Tensor>(feed.begin(), feed.end());
}

// Collects every streamed tensor by name.
class CollectSink : public runners::TensorSink {
  public:
    std::map<std::string, Tensor> tensors;
    void on_tensor(const std::string&, const std::string& name, const Tensor& t) override {
        tensors.insert_or_assign(name, t);
    }
};

// Records every streamed tensor's dtype by name.
class DtypeSink : public runners::TensorSink {
  public:
    explicit DtypeSink(std::map<std::string, DataType>& out) : out_(out) {}
    void on_tensor(const std::string&, const std::string& name, const Tensor& t) override {
        out_[name] = t.dtype();
    }

  private:
    std::map<std::string, DataType>& out_;
};

bool is_float(const Tensor& t) {
    const DataType d = t.dtype();
    return d == DataType::kFloat32 || d == DataType::kFloat16 || d == DataType::kBFloat16 ||
           d == DataType::kFloat64;
}

// mean |a - b| / mean |b| over finite pairs; non-finite mismatches count as error 1 each.
double relative_error(const Tensor& a, const Tensor& b) {
    if (!is_float(a) || !is_float(b) || a.numel() != b.numel() || a.numel() == 0) return 0;
    double diff = 0, mag = 0;
    for (uint64_t i = 0; i < a.numel(); ++i) {
        const double x = a.element_as_double(i), y = b.element_as_double(i);
        if (std::isfinite(x) && std::isfinite(y)) {
            diff += std::fabs(x - y);
            mag += std::fabs(y);
        } else if (!(std::isnan(x) && std::isnan(y)) && x != y) {
            diff += 1e30;
        }
    }
    return diff / std::max(mag, 1e-30);
}

double tensor_error(const std::map<std::string, Tensor>& emu,
                    const std::map<std::string, Tensor>& ref, const ir::Value* v) {
    if (!v) return 0;
    auto a = emu.find(v->name()), b = ref.find(v->name());
    if (a == emu.end() || b == ref.end()) return 0;
    return relative_error(a->second, b->second);
}

struct Score {
    bool notable = false;
    double growth = 0;
};

}  // namespace

emu::LayerPrecision exact_node_precision(const std::string& name, emu::Precision p) {
    emu::LayerPrecision lp;
    lp.selector = regex_escape(name);
    lp.pattern = std::regex(lp.selector);
    lp.precision = p;
    return lp;
}

std::string layer_precisions_string(const std::vector<std::string>& nodes) {
    std::string s;
    for (const auto& n : nodes) s += (s.empty() ? "" : " ") + regex_escape(n) + ":float32";
    return s;
}

std::string trtexec_string(const std::vector<std::string>& nodes) {
    std::string s;
    for (const auto& n : nodes) s += (s.empty() ? "" : ",") + n + ":fp32";
    return "--layerPrecisions=" + s;
}

PrecisionCheck::PrecisionCheck(const ir::Model& model, data::FeedList feeds,
                               emu::EmuRunnerOptions base, compare::CompareOptions compare,
                               const emu::CalibrationOptions& calibration)
    : model_(model),
      feeds_(std::move(feeds)),
      base_(std::move(base)),
      compare_(std::move(compare)) {
    runners::RefRunnerOptions ro;
    ro.session = base_.session;
    runners::RefRunner ref(model_, ro);
    for (size_t i = 0; i < feeds_.size(); ++i) {
        if (i > 0) {
            golden_.push_back(ref.infer(feed_map(feeds_[i])));
            continue;
        }
        DtypeSink sink(dtypes_);
        for (const auto& [name, t] : feeds_[i]) dtypes_[name] = t.dtype();
        golden_.push_back(ref.infer_streaming(feed_map(feeds_[i]), sink));
    }
    if (!base_.emulation.int8_scales)
        base_.emulation.int8_scales = std::make_shared<emu::ScaleTable>();
    emu::EmuRunner emu(model_, base_);
    if (!emu.int8_nodes().empty()) {
        if (base_.emulation.int8_scales->empty()) {
            if (feeds_.empty())
                throw Error(ErrorKind::kUsage, "--int8: calibration needs at least one input");
            emu.calibrate(feeds_, calibration);
            calibrated_ = true;
            log_info(
                "INT8 calibration | {} over {} input(s): {} activation scale(s) for {} INT8 "
                "node(s)",
                emu::calibration_method_name(calibration.method), feeds_.size(),
                emu.int8_scales().size(), emu.int8_nodes().size());
        } else {
            emu.set_int8_scales(*base_.emulation.int8_scales);  // checks every input has one
        }
    }
    for (const auto& [node, p] : emu.resolved_precisions()) {
        if (p == emu::Precision::kFP32) continue;
        if (node->name.empty()) {
            log_warning("debug precision: skipping an unnamed {} node (cannot be selected)",
                        node->op_type);
            continue;
        }
        candidates_.push_back(node->name);
    }
}

emu::EmuRunnerOptions PrecisionCheck::options_for(const NodeSet& fp32_nodes) const {
    emu::EmuRunnerOptions o = base_;
    for (const auto& n : fp32_nodes)
        o.policy.layers.push_back(exact_node_precision(n, emu::Precision::kFP32));
    return o;
}

bool PrecisionCheck::operator()(const NodeSet& fp32_nodes) {
    emu::EmuRunner emu(model_, options_for(fp32_nodes));
    bool ok = true;
    for (size_t i = 0; i < feeds_.size() && ok; ++i) {
        const auto outs = emu.infer(feed_map(feeds_[i]));
        for (const auto& [name, t] : outs) {
            for (const auto& [gname, g] : golden_[i]) {
                if (gname != name) continue;
                ok = ok && compare::compare_simple(name, t, gname, g,
                                                   compare::resolve_simple(compare_, name))
                               .passed;
            }
        }
    }
    log_info("Check with {} node(s) in float32: {}", fp32_nodes.size(), ok ? "PASSED" : "FAILED");
    return ok;
}

std::vector<std::string> PrecisionCheck::ranked_candidates() {
    if (feeds_.empty()) return candidates_;
    CollectSink ref_t, emu_t;
    runners::RefRunnerOptions ro;
    ro.session = base_.session;
    runners::RefRunner(model_, ro).infer_streaming(feed_map(feeds_[0]), ref_t);
    emu::EmuRunner emu(model_, base_);
    emu.infer_streaming(feed_map(feeds_[0]), emu_t);
    std::map<std::string, Score> score;
    for (const auto& n : model_.graph->nodes()) {
        double in = 0, out = 0;
        for (const auto* v : n->inputs())
            in = std::max(in, tensor_error(emu_t.tensors, ref_t.tensors, v));
        for (const auto* v : n->outputs())
            out = std::max(out, tensor_error(emu_t.tensors, ref_t.tensors, v));
        const auto* ev = emu.evidence().find(n->name);
        score[n->name] = {
            ev && (ev->outputs.overflow || ev->outputs.nonfinite || ev->nonfinite_produced),
            std::max(0.0, out - in)};
    }
    std::vector<std::string> ranked = candidates_;
    std::stable_sort(ranked.begin(), ranked.end(), [&](const auto& a, const auto& b) {
        const Score &x = score[a], &y = score[b];
        if (x.notable != y.notable) return x.notable;
        return x.growth > y.growth;
    });
    return ranked;
}

}  // namespace pg::debug
