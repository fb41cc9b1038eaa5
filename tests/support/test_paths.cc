#include "support/test_paths.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <mutex>

#include "base/error.h"
#include "runners/onnxrt_runner.h"

namespace pg::test {

std::string onnxrt_missing() {
    try {
        runners::load_onnxrt_library();
    } catch (const Error& e) {
        return std::string("ONNX Runtime not available (run `make setup`): ") + e.what();
    }
    return "";
}


namespace fs = std::filesystem;

namespace {

std::string existing_dir(const char* env, const char* fallback) {
    const char* e = std::getenv(env);
    std::string p = e && *e ? e : fallback;
    std::error_code ec;
    return fs::is_directory(p, ec) ? fs::weakly_canonical(p, ec).string() : std::string();
}

struct TempRoot {
    std::string path;
    ~TempRoot() {
        std::error_code ec;
        if (!path.empty() && !std::getenv("PG_KEEP_TEST_FILES")) fs::remove_all(path, ec);
    }
};

}  // namespace

std::string shared_dir() { return existing_dir("PG_SHARED_DIR", PG_SHARED_DIR); }
std::string shared_file(const std::string& relative) {
    const std::string root = shared_dir();
    const std::string path = root + "/" + relative;
    std::error_code ec;
    return !root.empty() && fs::exists(path, ec) ? path : "";
}
std::string onnx_testdata_dir() { return existing_dir("PG_ONNX_TESTDATA_DIR", PG_ONNX_TESTDATA_DIR); }
std::string polygraph_binary() { return PG_BINARY; }

std::string make_temp_dir() {
    static TempRoot root;
    static std::mutex mu;
    static int counter = 0;
    std::lock_guard<std::mutex> lock(mu);
    if (root.path.empty()) {
        std::string tmpl = (fs::temp_directory_path() / "pgtest_XXXXXX").string();
        root.path = ::mkdtemp(tmpl.data()) ? tmpl : std::string("/tmp/pgtest_fallback");
        fs::create_directories(root.path);
    }
    fs::path dir = fs::path(root.path) / ("t" + std::to_string(counter++));
    fs::create_directories(dir);
    return dir.string();
}

std::vector<std::string> find_files(const std::string& root, const std::string& suffix) {
    std::vector<std::string> out;
    std::error_code ec;
    if (root.empty() || !fs::is_directory(root, ec)) return out;
    for (auto it = fs::recursive_directory_iterator(root, ec); it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (ec) break;
        const std::string p = it->path().string();
        if (it->is_regular_file(ec) && p.size() >= suffix.size() &&
            p.compare(p.size() - suffix.size(), suffix.size(), suffix) == 0)
            out.push_back(p);
    }
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace pg::test
