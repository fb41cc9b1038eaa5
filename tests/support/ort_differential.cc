#include "support/ort_differential.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

#include <sys/resource.h>
#include <unistd.h>

#include "base/dtype.h"
#include "base/error.h"
#include "ir/builder.h"
#include "onnx/model_io.h"
#include "runners/onnxrt_runner.h"
#include "runners/ref_runner.h"

namespace pg::test {

namespace {

constexpr rlim_t kAddressSpace = rlim_t{8} << 30;  // what ONNX Runtime's runs may map
constexpr unsigned kOrtSeconds = 20;  // one ONNX Runtime session and run, at most (SIGALRM)

// What ONNX Runtime said: whether it ran, and then the difference from the reference's outputs
// ("" for none) or its error.
struct OrtAnswer {
    bool ran = false;
    std::string text;
};

OrtAnswer run_ort(const std::string& bytes, const std::map<std::string, Tensor>& feeds,
                  const runners::NamedTensors* ref) {
    try {
        runners::OnnxRtOptions opts;
        opts.intra_op_threads = 1;
        opts.optimization = runners::OrtOptLevel::kDisable;
        opts.model_bytes = bytes;
        runners::OnnxRtRunner ort("model.onnx", opts);
        const runners::NamedTensors got = ort.infer(feeds);
        return {true, ref ? results_differ(*ref, got) : std::string()};
    } catch (const std::exception& e) {
        return {false, e.what()};
    }
}

std::string dims_text(const Tensor& t) {
    std::string s = "[";
    for (const int64_t d : t.dims()) s += (s.size() > 1 ? "," : "") + std::to_string(d);
    return s + "]";
}

// Within rtol 1e-3 and an atol of 1e-5 times the reference's largest finite magnitude (at least
// 1): a DFT's or a long sum's rounding error scales with its largest values, not each value's.
std::string numbers_differ(const Tensor& ref, const Tensor& ort) {
    double scale = 1;
    for (uint64_t i = 0; i < ref.numel(); ++i)
        if (const double v = std::fabs(ref.element_as_double(i)); std::isfinite(v))
            scale = std::max(scale, v);
    for (uint64_t i = 0; i < ref.numel(); ++i) {
        const double e = ref.element_as_double(i), a = ort.element_as_double(i);
        if ((std::isnan(e) && std::isnan(a)) || e == a) continue;
        if (!(std::fabs(a - e) <= 1e-5 * scale + 1e-3 * std::fabs(e)))
            return "element " + std::to_string(i) + ": " + std::to_string(a) + ", reference " +
                   std::to_string(e);
    }
    return "";
}

std::string tensor_differ(const Tensor& ref, const Tensor& ort) {
    if (ref.dtype() != ort.dtype())
        return std::string("type ") + dtype_name(ort.dtype()) + ", reference " +
               dtype_name(ref.dtype());
    if (ref.dims() != ort.dims()) return "shape " + dims_text(ort) + ", reference " + dims_text(ref);
    if (ref.is_string()) {
        for (size_t i = 0; i < ref.strings().size(); ++i)
            if (ref.strings()[i] != ort.strings()[i])
                return "element " + std::to_string(i) + ": \"" + ort.strings()[i] +
                       "\", reference \"" + ref.strings()[i] + "\"";
        return "";
    }
    return numbers_differ(ref, ort);
}

SweepOutcome outcome(bool bug, std::string what, const char* kind) {
    return {bug, std::move(what), kind};
}

// The reference's outputs, and the attributes its session ignored (runtime::IgnoredAttribute).
struct RefAnswer {
    runners::NamedTensors outputs;
    std::vector<std::string> ignored;
};

RefAnswer run_ref(const ir::Model& model, const std::map<std::string, Tensor>& feeds) {
    runners::RefRunnerOptions opts;
    opts.session.threads = 1;
    runners::RefRunner ref(model, opts);
    RefAnswer a;
    for (const auto& i : ref.session().ignored_attributes()) a.ignored.push_back(i.name);
    a.outputs = ref.infer(feeds);
    return a;
}

// The attribute ONNX Runtime's schema check names in "Unrecognized attribute: NAME for operator
// OP", or "".
std::string unrecognized_attribute(const std::string& ort_error) {
    const std::string key = "Unrecognized attribute: ";
    const size_t at = ort_error.find(key);
    if (at == std::string::npos) return "";
    const size_t from = at + key.size();
    return ort_error.substr(from, ort_error.find(' ', from) - from);
}

// Where the reference ran: an attribute it ignored that ONNX Runtime accepted (ONNX defines it,
// so a kernel that does not look at it computes something else), or one ONNX Runtime does not
// know that the reference read. "" when neither.
std::string attribute_mismatch(const RefAnswer& ref, bool ort_ran, const std::string& ort_error) {
    if (ort_ran && !ref.ignored.empty())
        return "the reference ignores attribute '" + ref.ignored[0] + "', which ONNX Runtime accepts";
    const std::string unknown = ort_ran ? "" : unrecognized_attribute(ort_error);
    if (!unknown.empty() &&
        std::find(ref.ignored.begin(), ref.ignored.end(), unknown) == ref.ignored.end())
        return "the reference reads attribute '" + unknown + "', which ONNX does not define: " +
               ort_error;
    return "";
}

}  // namespace

namespace {

void warm_up_ort() {
    auto m = ir::new_model(17);
    ir::GraphBuilder b(*m->graph);
    ir::Value* x = b.input("x", DataType::kFloat32, std::vector<int64_t>{1});
    b.output(b.op("Relu", {x}), DataType::kFloat32, std::vector<int64_t>{1});
    runners::OnnxRtOptions opts;
    opts.intra_op_threads = 1;
    opts.model_bytes = onnx::serialize_model(*m);
    runners::OnnxRtRunner ort("warm-up.onnx", opts);
    ort.infer({{"x", Tensor::from_values(DataType::kFloat32, {1}, std::vector<float>{1.0f})}});
}

}  // namespace

void prepare_ort_child() {
#if !defined(__SANITIZE_ADDRESS__)
    const rlimit limit{kAddressSpace, kAddressSpace};
    ::setrlimit(RLIMIT_AS, &limit);  // a model that makes ONNX Runtime ask for 1e12 bytes fails
#endif
    warm_up_ort();
}

std::string results_differ(const runners::NamedTensors& ref, const runners::NamedTensors& ort) {
    if (ref.size() != ort.size())
        return std::to_string(ort.size()) + " outputs, reference " + std::to_string(ref.size());
    for (size_t i = 0; i < ref.size(); ++i) {
        if (ref[i].first != ort[i].first)
            return "output " + std::to_string(i) + " is '" + ort[i].first + "', reference '" +
                   ref[i].first + "'";
        if (const std::string d = tensor_differ(ref[i].second, ort[i].second); !d.empty())
            return "output '" + ref[i].first + "': " + d;
    }
    return "";
}

SweepOutcome differential_case(const ir::Model& model, const std::map<std::string, Tensor>& feeds,
                               FILE* out) {
    std::optional<RefAnswer> ref;
    std::string ref_error;
    try {
        ref = run_ref(model, feeds);
    } catch (const Error& e) {
        if (e.kind() == ErrorKind::kInternal) return outcome(true, e.what(), "bug");
        ref_error = std::string(error_kind_name(e.kind())) + ": " + e.what();
    } catch (const std::exception& e) {
        return outcome(true, std::string("exception: ") + e.what(), "bug");
    }
    std::string bytes;
    try {
        bytes = onnx::serialize_model(model);
    } catch (const Error& e) {
        return outcome(e.kind() == ErrorKind::kInternal, e.what(), ref ? "unsaved" : "both-refused");
    }
    sweep_phase(out, "ort");
    const unsigned test_alarm = ::alarm(kOrtSeconds);  // the sweep's alarm, paused
    const OrtAnswer ort = run_ort(bytes, feeds, ref ? &ref->outputs : nullptr);
    ::alarm(test_alarm ? test_alarm : 1);
    if (ref)
        if (std::string m = attribute_mismatch(*ref, ort.ran, ort.text); !m.empty())
            return outcome(true, std::move(m), "attribute");
    if (!ort.ran)
        return outcome(false, ort.text, ref ? "ort-refused" : "both-refused");
    if (!ref) return outcome(false, ref_error, "ref-refused");
    if (!ort.text.empty()) return outcome(true, ort.text, "differ");
    return outcome(false, "agree", "agree");
}

}  // namespace pg::test
