// libFuzzer target: arbitrary bytes read as a data file, as `polygraph run --load-inputs`,
// `--load-outputs` and `inspect data` read one: Polygraphy JSON (base64 .npy arrays inside),
// .npz, .npy, and ONNX test-data .pb files (a TensorProto, SequenceProto or OptionalProto).
// A pg::Error other than kInternal is the expected answer to a broken file; kInternal, any other
// exception, a crash, a sanitizer report, a hang or a large allocation is a bug. What loads must
// also save and load again (JSON and, for one feed dict, .npz). Files are written to a private
// temporary folder because the loaders take paths, as users give them.
// Build and run: `make fuzz FUZZ_TARGET=load_data_fuzz` (tools/fuzz.sh).
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "base/error.h"
#include "base/log.h"
#include "data/data_files.h"
#include "data/polygraphy_json.h"
#include "onnx/tensor_file.h"

namespace {

namespace fs = std::filesystem;

// A folder of this process's, removed when the process exits normally.
struct TempDir {
    fs::path path;
    TempDir() {
        const char* tmp = std::getenv("TMPDIR");
        path = fs::path(tmp ? tmp : "/tmp") / ("pg-load-data-fuzz-" + std::to_string(getpid()));
        fs::create_directories(path);
    }
    ~TempDir() {
        std::error_code ignored;
        fs::remove_all(path, ignored);
    }
};

// This process's folder for the input and the round trip's files.
const fs::path& work_dir() {
    static const TempDir dir;
    return dir.path;
}

void write_file(const fs::path& path, const uint8_t* data, size_t size) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
}

[[noreturn]] void bug(const char* what, const std::string& message) {
    std::fprintf(stderr, "%s: %s\n", what, message.c_str());
    std::abort();
}

// Runs f; a pg::Error is an answer unless it is kInternal.
template <class F>
bool answered(const char* what, F&& f) {
    try {
        f();
        return true;
    } catch (const pg::Error& e) {
        if (e.kind() == pg::ErrorKind::kInternal) bug(what, e.what());
        return false;
    }
}

// What loaded is saved (kUnsupported is an answer: e.g. a dtype numpy has no name for) and must
// load again.
void round_trip(const pg::data::PolygraphyJson& j) {
    const fs::path json = work_dir() / "again.json", npz = work_dir() / "again.npz";
    const bool inputs = j.content == pg::data::JsonContent::kInputs;
    if (answered("saving JSON", [&] {
            inputs ? pg::data::save_inputs(json.string(), j.inputs)
                   : pg::data::save_outputs(json.string(), j.run_results);
        })) {
        try {
            pg::data::load_data_file(json.string());
        } catch (const pg::Error& e) {
            bug("a saved JSON file did not load", e.what());
        }
    }
    if (!inputs || j.inputs.size() != 1) return;
    if (answered("saving .npz", [&] { pg::data::save_inputs(npz.string(), j.inputs); })) {
        try {
            pg::data::load_inputs(npz.string());
        } catch (const pg::Error& e) {
            bug("a saved .npz file did not load", e.what());
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    pg::logger().set_threshold(pg::Severity::kCritical);  // warnings about odd files are noise
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const fs::path path = work_dir() / "input";
    write_file(path, data, size);
    const pg::data::ModelNames names{{"x", "y"}, {"out"}};
    pg::data::PolygraphyJson loaded;
    if (answered("loading", [&] { loaded = pg::data::load_data_file(path.string(), names); }))
        round_trip(loaded);
    answered("loading outputs", [&] { pg::data::load_outputs(path.string(), names); });
    for (const char* hint : {"tensor", "sequence", "optional"})
        answered("reading .pb", [&] { pg::onnx::read_value_pb(path.string(), hint); });
    return 0;
}
