// Runs ONNX's backend node tests (model.onnx + test_data_set_N) on the reference interpreter and
// prints pass / fail / unsupported / skip counts per source. A test fails the suite when it runs
// and gives a wrong result or an error, unless manifest.txt lists it (with a reason).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>

#include "base/error.h"
#include "base/log.h"
#include "onnx/model_io.h"
#include "onnx/tensor_file.h"
#include "runtime/session.h"
#include "support/node_test_data.h"
#include "support/test_paths.h"

namespace pg {
namespace {

namespace fs = std::filesystem;

struct ManifestEntry {
    std::regex pattern;
    std::string status, reason;
    std::string source;  // "" = every source; else a source label prefix ("libonnx-testdata", ...)
};

std::vector<ManifestEntry> read_manifest() {
    std::vector<ManifestEntry> out;
    std::ifstream f(PG_CONFORMANCE_MANIFEST);
    std::string line;
    while (std::getline(f, line)) {
        if (line.empty() || line[0] == '#') continue;
        const size_t sp = line.find_first_of(" \t");
        const size_t st = line.find_first_not_of(" \t", sp);
        if (sp == std::string::npos || st == std::string::npos) continue;
        const size_t colon = line.find(':', st);
        std::string pattern = line.substr(0, sp), source;
        if (const size_t at = pattern.find('@'); at != std::string::npos) {  // "source@regex"
            source = pattern.substr(0, at);
            pattern = pattern.substr(at + 1);
        }
        out.push_back({std::regex(pattern), line.substr(st, colon - st),
                       colon == std::string::npos ? "" : line.substr(colon + 1), source});
    }
    return out;
}

const ManifestEntry* match(const std::vector<ManifestEntry>& m, const std::string& name,
                           const std::string& source) {
    for (const auto& e : m)
        if ((e.source.empty() || source.rfind(e.source, 0) == 0) &&
            std::regex_match(name, e.pattern))
            return &e;
    return nullptr;
}

std::string fmt_g(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.9g", v);
    return b;
}

// "" when `actual` matches `expected` within ONNX's tolerances (rtol 1e-3, atol 1e-7).
std::string compare(const Tensor& expected, const Tensor& actual) {
    if (expected.dtype() != actual.dtype())
        return "dtype " + dtype_name(actual.dtype()) + ", expected " + dtype_name(expected.dtype());
    if (expected.dims() != actual.dims()) return "shape differs";
    if (expected.is_string()) return expected.strings() == actual.strings() ? "" : "strings differ";
    const bool is_float =
        dtype_is_float(expected.dtype()) || expected.dtype() == DataType::kComplex64;
    if (!is_float || dtype_bits(expected.dtype()) < 16 ||
        expected.dtype() == DataType::kComplex64) {
        if (expected.same_contents(actual)) return "";
        for (uint64_t i = 0; i < expected.numel() && !expected.is_string(); ++i)
            if (expected.element_as_double(i) != actual.element_as_double(i))
                return "element " + std::to_string(i) + ": got " +
                       fmt_g(actual.element_as_double(i)) + ", expected " +
                       fmt_g(expected.element_as_double(i)) + " (exact comparison)";
        return "values differ (exact comparison)";
    }
    for (uint64_t i = 0; i < expected.numel(); ++i) {
        const double e = expected.element_as_double(i), a = actual.element_as_double(i);
        if (std::isnan(e) && std::isnan(a)) continue;
        if (e == a) continue;
        if (!(std::fabs(a - e) <= 1e-7 + 1e-3 * std::fabs(e)))
            return "element " + std::to_string(i) + ": got " + fmt_g(a) + ", expected " + fmt_g(e) +
                   " (diff " + std::to_string(a - e) + ", " +
                   std::to_string(std::fabs(a - e) / std::max(1e-30, std::fabs(e))) + " relative)";
    }
    return "";
}

std::string compare_value(const onnx::StoredValue& e, const ops::RtValue& a) {
    if (e.kind == onnx::StoredKind::kNone) return a.is_none() ? "" : "expected an empty optional";
    if (e.kind == onnx::StoredKind::kSequence) {
        if (!a.is_sequence() || a.sequence().size() != e.sequence.size())
            return "sequence length differs";
        for (size_t k = 0; k < e.sequence.size(); ++k)
            if (auto d = compare(e.sequence[k], a.sequence()[k]); !d.empty())
                return "item " + std::to_string(k) + ": " + d;
        return "";
    }
    if (!a.is_tensor()) return "expected a tensor";
    return compare(e.tensor, a.tensor());
}

// Runs every data set of one test. Returns "" on success, "unsupported: ..." or the failure.
std::string run_case(const fs::path& dir) {
    auto model = onnx::load_model((dir / "model.onnx").string());
    runtime::SessionOptions opts;
    opts.threads = 1;
    std::unique_ptr<runtime::Session> session;
    try {
        session = std::make_unique<runtime::Session>(*model, opts);
    } catch (const Error& e) {
        if (e.kind() == ErrorKind::kUnsupported) return std::string("unsupported: ") + e.message();
        throw;
    }
    const ir::Graph& g = *model->graph;
    std::vector<const ir::Value*> real_inputs;
    for (const ir::Value* v : g.inputs())
        if (!v->is_initializer()) real_inputs.push_back(v);
    for (int set = 0; fs::exists(dir / ("test_data_set_" + std::to_string(set))); ++set) {
        const fs::path data = dir / ("test_data_set_" + std::to_string(set));
        runtime::Feeds feeds;
        for (size_t k = 0; fs::exists(data / ("input_" + std::to_string(k) + ".pb")); ++k) {
            const ir::Value* in = k < real_inputs.size() ? real_inputs[k] : nullptr;
            const fs::path f = data / ("input_" + std::to_string(k) + ".pb");
            ops::RtValue v = test::read_node_test_input(f.string(), in);
            if (in) feeds[in->name()] = std::move(v);
        }
        auto results = session->run(feeds);
        for (size_t k = 0; k < results.size(); ++k) {
            const fs::path f = data / ("output_" + std::to_string(k) + ".pb");
            if (!fs::exists(f)) continue;
            auto e = onnx::read_value_pb(f.string(), test::pb_hint_for(g.outputs()[k]));
            if (auto d = compare_value(e, results[k].second); !d.empty())
                return "output '" + results[k].first + "': " + d;
        }
    }
    return "";
}

struct Tally {
    int pass = 0, fail = 0, unsupported = 0, skip = 0, xfail = 0, xpass = 0;
    std::vector<std::string> failures, unexpected_passes;
};

void run_suite(const std::string& root, const char* label) {
    logger().set_threshold(Severity::kError);
    const auto manifest = read_manifest();
    Tally t;
    std::vector<fs::path> dirs;
    for (const auto& e : fs::directory_iterator(root))
        if (e.is_directory() && fs::exists(e.path() / "model.onnx")) dirs.push_back(e.path());
    std::sort(dirs.begin(), dirs.end());
    const char* filter = std::getenv("PG_CONFORMANCE_FILTER");  // regex; prints each result
    for (const auto& dir : dirs) {
        const std::string name = dir.filename().string();
        if (filter && !std::regex_search(name, std::regex(filter))) continue;
        const ManifestEntry* m = match(manifest, name, label);
        if (m && m->status == "skip") {
            ++t.skip;
            continue;
        }
        std::string result;
        try {
            result = run_case(dir);
        } catch (const Error& e) {
            result = std::string(error_kind_name(e.kind())) + ": " + e.what();
        }
        const bool expected_fail = m && m->status == "xfail";
        if (result.rfind("unsupported", 0) == 0)
            ++t.unsupported;
        else if (result.empty())
            ++(expected_fail ? t.xpass : t.pass);
        else if (expected_fail)
            ++t.xfail;
        else {
            ++t.fail;
            t.failures.push_back(name + ": " + result);
        }
        if (result.empty() && expected_fail) t.unexpected_passes.push_back(name);
        if (filter)
            std::printf("  %s: %s\n", name.c_str(), result.empty() ? "pass" : result.c_str());
    }
    const int total = static_cast<int>(dirs.size());
    const int run = total - t.skip;
    std::printf(
        "[conformance] %s: %d tests: %d pass, %d fail, %d xfail, %d unsupported (no kernel), %d "
        "skip; "
        "pass rate %.1f%% of %d non-skipped\n",
        label, total, t.pass + t.xpass, t.fail, t.xfail, t.unsupported, t.skip,
        run ? 100.0 * (t.pass + t.xpass) / run : 0.0, run);
    for (const auto& p : t.unexpected_passes)
        std::printf("[conformance] now passes, remove from manifest: %s\n", p.c_str());
    for (const auto& f : t.failures) ADD_FAILURE() << f;
}

TEST(Conformance, DebianNodeTests) {
    const std::string root = test::onnx_testdata_dir();
    if (root.empty()) GTEST_SKIP() << "libonnx-testdata not installed";
    run_suite(root + "/node", "libonnx-testdata/node");
}

TEST(Conformance, Onnx122NodeTests) {
    const std::string root = test::shared_dir();
    if (root.empty() || !fs::is_directory(root + "/data/onnx-node-tests-1.22"))
        GTEST_SKIP() << "../shared not present";
    run_suite(root + "/data/onnx-node-tests-1.22", "onnx-node-tests-1.22");
}

TEST(Conformance, DebianOtherSuites) {
    const std::string root = test::onnx_testdata_dir();
    if (root.empty()) GTEST_SKIP() << "libonnx-testdata not installed";
    for (const char* s : {"pytorch-converted", "pytorch-operator", "simple"})
        if (fs::is_directory(root + "/" + s)) run_suite(root + "/" + s, s);
}

}  // namespace
}  // namespace pg
