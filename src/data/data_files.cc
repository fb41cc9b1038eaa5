// Data files of every supported format: see data_files.h.
#include "data/data_files.h"

#include <algorithm>
#include <filesystem>
#include <regex>

#include "base/error.h"
#include "base/fs.h"
#include "data/npy.h"
#include "data/npz.h"
#include "onnx/tensor_file.h"

namespace pg::data {

namespace {

namespace fsys = std::filesystem;

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() &&
           s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The files `<prefix>_<K>.pb` of a folder, ordered by K.
std::vector<std::string> numbered_files(const std::string& dir, const std::string& prefix) {
    std::vector<std::pair<int, std::string>> found;
    const std::regex re(prefix + "_([0-9]{1,6})\\.pb");
    for (const auto& e : fsys::directory_iterator(dir)) {
        std::smatch m;
        const std::string name = e.path().filename().string();
        if (std::regex_match(name, m, re)) found.emplace_back(std::stoi(m[1]), e.path().string());
    }
    std::sort(found.begin(), found.end());
    std::vector<std::string> out;
    for (auto& f : found) out.push_back(std::move(f.second));
    return out;
}

// test_data_set_N folders in N order, or the folder itself when it holds .pb files directly.
std::vector<std::string> data_sets(const std::string& dir) {
    std::vector<std::pair<int, std::string>> sets;
    const std::regex re("test_data_set_([0-9]{1,6})");
    for (const auto& e : fsys::directory_iterator(dir)) {
        std::smatch m;
        const std::string name = e.path().filename().string();
        if (e.is_directory() && std::regex_match(name, m, re))
            sets.emplace_back(std::stoi(m[1]), e.path().string());
    }
    std::sort(sets.begin(), sets.end());
    std::vector<std::string> out;
    for (auto& s : sets) out.push_back(std::move(s.second));
    if (out.empty()) out.push_back(dir);
    return out;
}

runners::NamedTensors read_pb_set(const std::string& dir, const std::string& prefix,
                                  const std::vector<std::string>& names) {
    runners::NamedTensors feed;
    const auto files = numbered_files(dir, prefix);
    for (size_t k = 0; k < files.size(); ++k) {
        onnx::StoredValue v = onnx::read_value_pb(files[k], "tensor");
        if (v.kind != onnx::StoredKind::kTensor) {
            throw Error(ErrorKind::kUnsupported, "'" + files[k] + "' holds a sequence or optional");
        }
        std::string name = k < names.size() ? names[k] : v.name;
        if (name.empty()) name = prefix + "_" + std::to_string(k);
        feed.emplace_back(std::move(name), std::move(v.tensor));
    }
    return feed;
}

FeedList read_test_data(const std::string& dir, const std::string& prefix,
                        const std::vector<std::string>& names) {
    FeedList out;
    for (const auto& set : data_sets(dir)) out.push_back(read_pb_set(set, prefix, names));
    if (out.size() == 1 && out[0].empty()) {
        throw Error(ErrorKind::kInvalidInput,
                    "'" + dir + "' holds no " + prefix + "_K.pb files or test_data_set_N folders");
    }
    return out;
}

enum class Format { kJson, kNpz, kNpy, kTestData };

Format detect(const std::string& path) {
    if (is_directory(path)) return Format::kTestData;
    auto f = MappedFile::open(path);
    if (is_npz(f->data(), f->size())) return Format::kNpz;
    if (is_npy(f->data(), f->size())) return Format::kNpy;
    return Format::kJson;
}

// The one array of a .npy file, named after the model's single input, else the file's stem.
runners::NamedTensors read_npy_feed(const std::string& path,
                                    const std::vector<std::string>& names) {
    std::string name = fsys::path(path).stem().string();
    if (names.size() == 1) name = names[0];
    return {{name, load_npy(path)}};
}

FeedList load_inputs_impl(const std::string& path, const ModelNames& names) {
    switch (detect(path)) {
        case Format::kTestData:
            return read_test_data(path, "input", names.inputs);
        case Format::kNpz:
            return {load_npz(path)};
        case Format::kNpy:
            return {read_npy_feed(path, names.inputs)};
        case Format::kJson:
            break;
    }
    PolygraphyJson j = load_polygraphy_json(path);
    if (j.content == JsonContent::kRunResults) {
        throw Error(ErrorKind::kInvalidInput,
                    "'" + path +
                        "' holds RunResults, not input data (a list of feed dicts); "
                        "use it with --load-outputs, or convert it with `data to-input`");
    }
    return std::move(j.inputs);
}

RunResults one_runner(const std::string& name, FeedList iterations) {
    RunnerResults r{name, {}};
    for (auto& outputs : iterations)
        r.iterations.push_back(IterationResult{std::move(outputs), std::nullopt, name});
    return RunResults{{std::move(r)}};
}

RunResults load_outputs_impl(const std::string& path, const ModelNames& names) {
    const std::string runner = base_name(path);
    switch (detect(path)) {
        case Format::kTestData:
            return one_runner(runner, read_test_data(path, "output", names.outputs));
        case Format::kNpz:
            return one_runner(runner, {load_npz(path)});
        case Format::kNpy:
            return one_runner(runner, {read_npy_feed(path, names.outputs)});
        case Format::kJson:
            break;
    }
    PolygraphyJson j = load_polygraphy_json(path);
    if (j.content != JsonContent::kRunResults) {
        throw Error(ErrorKind::kInvalidInput,
                    "'" + path +
                        "': Provided JSON cannot be decoded into a RunResults (it holds "
                        "input data; use it with --load-inputs)");
    }
    return std::move(j.run_results);
}

}  // namespace

FeedList load_inputs(const std::string& path, const ModelNames& names) {
    return with_context("while loading input data from '" + path + "'",
                        [&] { return load_inputs_impl(path, names); });
}

RunResults load_outputs(const std::string& path, const ModelNames& names) {
    return with_context("while loading outputs from '" + path + "'",
                        [&] { return load_outputs_impl(path, names); });
}

PolygraphyJson load_data_file(const std::string& path, const ModelNames& names) {
    return with_context("while loading data from '" + path + "'", [&] {
        if (detect(path) == Format::kJson) return load_polygraphy_json(path);
        PolygraphyJson j;
        j.inputs = load_inputs_impl(path, names);
        return j;
    });
}

void save_inputs(const std::string& path, const FeedList& feeds) {
    if (!ends_with(path, ".npz")) return save_inputs_json(path, feeds);
    if (feeds.size() != 1) {
        throw Error(ErrorKind::kUnsupported, "'" + path +
                                                 "': a .npz file holds one feed dict, but "
                                                 "there are " +
                                                 std::to_string(feeds.size()) +
                                                 " iterations; save to .json instead");
    }
    save_npz(path, feeds[0]);
}

void save_outputs(const std::string& path, const RunResults& results) {
    if (!ends_with(path, ".npz")) return save_run_results_json(path, results);
    if (results.runners.size() != 1 || results.runners[0].iterations.size() != 1) {
        throw Error(ErrorKind::kUnsupported, "'" + path +
                                                 "': a .npz file holds one runner's single "
                                                 "iteration; save to .json instead");
    }
    save_npz(path, results.runners[0].iterations[0].outputs);
}

}  // namespace pg::data
