#include "cli/common.h"

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "base/error.h"
#include "base/log.h"
#include "onnx/model_io.h"

namespace pg::cli {

void add_logger_args(ArgParser& p) {
    p.group("Logging");
    p.add({{"-v", "--verbose"}, "verbose", Nargs::kCount, "Increase logging verbosity. Repeat for more.", "", {}, ""});
    p.add({{"-q", "--quiet"}, "quiet", Nargs::kCount, "Decrease logging verbosity. Repeat for less.", "", {}, ""});
    p.flag({"--silent"}, "silent", "Disable all output except errors.");
    p.value({"--log-file"}, "log_file", "LOG_FILE", "Also write every log message to this file.");
}

void apply_logger_args(const ParsedArgs& a) {
    logger().set_verbosity(a.count("verbose") - a.count("quiet"));
    if (a.count("silent")) logger().set_threshold(Severity::kCritical);
    if (a.has("log_file")) {
        std::filesystem::path p(a.get("log_file"));
        if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path());
        logger().set_log_file(a.get("log_file"));
    }
}

void add_model_load_args(ArgParser& p) {
    p.group("ONNX Model Loading");
    p.value({"--external-data-dir", "--load-external-data", "--ext"}, "external_data_dir", "DIR",
            "Folder containing the model's external data (default: the model's folder). External "
            "data locations must stay inside it.");
    p.flag({"--ignore-external-data"}, "ignore_external_data",
           "Load the model structure without reading external data; such tensors have no values.");
}

void add_model_type_arg(ArgParser& p) {
    p.value({"--model-type"}, "model_type", "TYPE",
            "The model's type: onnx (the only one read here). A TensorRT engine (engine, or a "
            ".engine / .plan file) or a TensorFlow, Keras, UFF or Caffe model is refused with what "
            "to use instead.",
            {"onnx", "engine", "frozen", "keras", "ckpt", "uff", "trt-network-script", "caffe"});
}

namespace {

bool ends_with(const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// kUnsupported for a model that is not ONNX, by --model-type or a TensorRT engine's extension.
void require_onnx_model(const ParsedArgs& a, const std::string& path) {
    const std::string type = a.get("model_type", "onnx");
    if (type == "engine" || (!a.has("model_type") && (ends_with(path, ".engine") ||
                                                      ends_with(path, ".plan"))))
        throw Error(ErrorKind::kUnsupported,
                    "'" + path +
                        "' is a TensorRT engine: engines are opaque without TensorRT. Inspect or "
                        "run the ONNX model it was built from (`polygraph run model.onnx --emu "
                        "--fp16` emulates its reduced precisions).");
    if (type == "trt-network-script")
        throw Error(ErrorKind::kUnsupported,
                    "--model-type trt-network-script: TensorRT network scripts need TensorRT's "
                    "Python API; give the ONNX model instead.");
    if (type != "onnx")
        throw Error(ErrorKind::kUnsupported, "--model-type " + type +
                                                 ": only ONNX models are read; convert it to "
                                                 "ONNX first (e.g. with tf2onnx).");
}

}  // namespace

std::unique_ptr<ir::Model> load_model_from_args(const ParsedArgs& a) {
    const std::string path = a.get("model_file");
    require_onnx_model(a, path);
    log_info("Loading model: {}", absolute_path(path));
    onnx::LoadOptions opts;
    opts.external_data_dir = a.get("external_data_dir");
    opts.ignore_external_data = a.count("ignore_external_data") > 0;
    return onnx::load_model(path, opts);
}

void add_model_save_args(ArgParser& p, bool with_output) {
    p.group("ONNX Model Saving");
    if (with_output) p.value({"-o", "--output"}, "output", "OUTPUT", "Path to save the ONNX model to.");
    p.add({{"--save-external-data", "--external-data-path"}, "external_data_path", Nargs::kOptionalOne,
           "Save tensors as external data in this file, relative to the model's folder. Without a "
           "value: '<model file name>.data'. Models whose tensors exceed 2 GiB are always saved this way.",
           "EXTERNAL_DATA_PATH", {}, ""});
    p.value({"--external-data-size-threshold"}, "external_data_size_threshold", "BYTES",
            "With external data: tensors smaller than this stay in the model file. Accepts K, M, G "
            "suffixes. Default: 1024.");
}

void save_model_from_args(const ir::Model& m, const ParsedArgs& a, const std::string& path) {
    onnx::SaveOptions opts;
    if (a.has("external_data_path")) {
        std::string loc = a.get("external_data_path");
        opts.external_data_path = loc.empty() ? std::filesystem::path(path).filename().string() + ".data" : loc;
    }
    if (a.has("external_data_size_threshold")) {
        if (!opts.external_data_path)
            log_warning("--external-data-size-threshold has no effect without --external-data-path");
        opts.external_data_size_threshold = parse_num_bytes(a.get("external_data_size_threshold"));
    }
    log_info("Saving ONNX model to: {}", path);
    onnx::save_model(m, path, opts);
}

uint64_t parse_num_bytes(const std::string& text) {
    if (text.empty()) throw Error(ErrorKind::kUsage, "empty byte count");
    double mult = 1;
    std::string num = text;
    const char last = static_cast<char>(std::toupper(static_cast<unsigned char>(text.back())));
    if (last == 'K' || last == 'M' || last == 'G') {
        mult = last == 'K' ? 1024.0 : last == 'M' ? 1024.0 * 1024 : 1024.0 * 1024 * 1024;
        num = text.substr(0, text.size() - 1);
    }
    size_t used = 0;
    double v = 0;
    try {
        v = std::stod(num, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != num.size() || !(v >= 0) || v * mult > 9.0e18)
        throw Error(ErrorKind::kUsage, "invalid byte count '" + text + "' (examples: 1024, 1e6, 256M, 2G)");
    return static_cast<uint64_t>(v * mult);
}

std::vector<std::string> parse_list(const std::string& text) {
    if (text.size() < 2 || text.front() != '[' || text.back() != ']')
        throw Error(ErrorKind::kUsage, "expected a bracketed list like [1,3,224,224], got '" + text + "'");
    std::vector<std::string> out;
    std::string inner = text.substr(1, text.size() - 2);
    size_t start = 0;
    while (start <= inner.size()) {
        size_t comma = inner.find(',', start);
        std::string item = inner.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        while (!item.empty() && item.front() == ' ') item.erase(item.begin());
        while (!item.empty() && item.back() == ' ') item.pop_back();
        if (item.size() >= 2 && (item.front() == '\'' || item.front() == '"') && item.back() == item.front())
            item = item.substr(1, item.size() - 2);
        if (!item.empty()) out.push_back(item);
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return out;
}

std::string absolute_path(const std::string& path) {
    std::error_code ec;
    auto p = std::filesystem::absolute(path, ec);
    return ec ? path : p.lexically_normal().string();
}

namespace {

double seconds_now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

}  // namespace

Banner::Banner(const std::string& prog, const std::vector<std::string>& argv,
               const ParsedArgs& a)
    : command_(prog), start_(seconds_now()) {
    if (a.count("json")) logger().set_all_to_stderr(true);
    for (const std::string& t : argv) command_ += " " + t;
    log_info("RUNNING | Command: {}", command_);
}

int Banner::finish(int status) const {
    const double s = seconds_now() - start_;
    if (status == 0)
        log_info("PASSED | Runtime: {:.3f}s | Command: {}", s, command_);
    else
        log_error("FAILED | Runtime: {:.3f}s | Command: {}", s, command_);
    return status;
}

void print_help(const ArgParser& p) {
    std::string h = p.help();
    std::fwrite(h.data(), 1, h.size(), stdout);
}

}  // namespace pg::cli
