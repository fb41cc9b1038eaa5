// Every model.onnx in Debian's libonnx-testdata and every .onnx under ../shared/data loads, and
// saving it (toposorted, as `surgeon sanitize --toposort` does) gives a file that loads back with
// the same nodes, attributes, initializer bytes, opsets and metadata. Prints counts.
#include <gtest/gtest.h>

#include <cstdio>

#include "base/error.h"
#include "onnx/model_io.h"
#include "passes/toposort.h"
#include "support/model_compare.h"
#include "support/test_paths.h"

namespace pg {
namespace {

struct CorpusCounts {
    int loaded = 0, structure_only = 0, failed = 0;
};

// Loads a model; falls back to the structure only when its external data file is missing.
std::unique_ptr<ir::Model> load_for_roundtrip(const std::string& path, bool* structure_only) {
    *structure_only = false;
    try {
        return onnx::load_model(path);
    } catch (const Error& e) {
        if (std::string(e.what()).find("cannot open") == std::string::npos) throw;
        *structure_only = true;
        onnx::LoadOptions opts;
        opts.ignore_external_data = true;
        return onnx::load_model(path, opts);
    }
}

void roundtrip_one(const std::string& path, const std::string& out_dir, CorpusCounts& counts) {
    SCOPED_TRACE(path);
    bool structure_only = false;
    std::unique_ptr<ir::Model> original;
    try {
        original = load_for_roundtrip(path, &structure_only);
    } catch (const Error& e) {
        ++counts.failed;
        ADD_FAILURE() << "load failed: " << e.what();
        return;
    }
    auto sorted = load_for_roundtrip(path, &structure_only);
    passes::toposort(*sorted->graph);
    const std::string out = out_dir + "/out.onnx";
    onnx::save_model(*sorted, out);
    auto reloaded = onnx::load_model(out, {out_dir, structure_only});
    // Toposort may reorder nodes; compare against the sorted original and check the
    // sorted original holds the same nodes as the file.
    EXPECT_EQ(test::diff_models(*sorted, *reloaded), "");
    EXPECT_EQ(original->graph->num_nodes(), reloaded->graph->num_nodes());
    EXPECT_EQ(onnx::serialize_model(*sorted), onnx::serialize_model(*reloaded));
    ++(structure_only ? counts.structure_only : counts.loaded);
}

void run_corpus(const std::vector<std::string>& files, const char* label) {
    const std::string dir = test::make_temp_dir();
    CorpusCounts counts;
    for (const auto& f : files) roundtrip_one(f, dir, counts);
    std::printf("[corpus] %s: %zu models, %d round-tripped, %d structure-only (external data file "
                "missing), %d failed\n",
                label, files.size(), counts.loaded, counts.structure_only, counts.failed);
}

TEST(ModelCorpus, DebianOnnxTestdataRoundTrips) {
    const std::string root = test::onnx_testdata_dir();
    if (root.empty()) GTEST_SKIP() << "libonnx-testdata not installed";
    auto files = test::find_files(root, "/model.onnx");
    ASSERT_GT(files.size(), 1000u);
    run_corpus(files, "libonnx-testdata");
}

TEST(ModelCorpus, SharedDataRoundTrips) {
    const std::string root = test::shared_dir();
    if (root.empty()) GTEST_SKIP() << "../shared not present";
    auto files = test::find_files(root + "/data", ".onnx");
    ASSERT_GT(files.size(), 100u);
    run_corpus(files, "shared/data");
}

}  // namespace
}  // namespace pg
