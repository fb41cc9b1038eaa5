// ONNX Runtime as a runner (--onnxrt). libonnxruntime.so.1 is loaded at run time with dlopen,
// never linked: a machine without it builds and runs everything else, and --onnxrt then fails
// with a kUnsupported error that says how to install it. The C API we call is declared in
// ort_api.h. To support another option, add a field to OnnxRtOptions and apply it in
// make_session_options() (onnxrt_runner.cc).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/model.h"
#include "runners/runner.h"

namespace pg::runners {

enum class OrtOptLevel { kDisable, kBasic, kExtended, kAll };

struct OnnxRtOptions {
    // Library to load; "" = $POLYGRAPH_ONNXRT_LIB, then the copy `make setup` installs, then
    // libonnxruntime.so.1 through the standard dlopen search.
    std::string library;
    int intra_op_threads = 0;  // 0 = every core
    OrtOptLevel optimization = OrtOptLevel::kAll;
    // Session config "session.intra_op.allow_spinning": false stops the intra-op workers from
    // spinning after a run (they otherwise slow whatever runs next); unset = ORT's default.
    std::optional<bool> intra_op_spinning;
    // Execution providers in order of preference ("CPUExecutionProvider" or "cpu").
    std::vector<std::string> providers = {"CPUExecutionProvider"};
    // When set, the session is created from these serialized model bytes (all tensors inline)
    // instead of the model path, which then only names the model in messages.
    std::string model_bytes;
    // The loaded model (optional): lets with_outputs() mark intermediate tensors as outputs.
    const ir::Model* model = nullptr;
    // Non-empty: ONNX Runtime's profiler records every node of every run into
    // "<profile_prefix>_<date>.json" (end_profiling() writes it and returns its path).
    std::string profile_prefix;
};

// Where the library was found and which ONNX Runtime version it is.
struct OnnxRtLibraryInfo {
    std::string path;
    std::string version;  // e.g. "1.30.0"
};

// Finds and loads ONNX Runtime (lookup order: see OnnxRtOptions::library). Throws kUnsupported
// naming every path tried when it is missing, or the version found when it is too old.
OnnxRtLibraryInfo load_onnxrt_library(const std::string& explicit_path = "");

// Parses "disable", "basic", "extended" or "all"; throws kUsage otherwise.
OrtOptLevel parse_ort_opt_level(const std::string& text);

class OnnxRtRunner : public Runner {
  public:
    // Loads the library and creates a session from the model file (ONNX Runtime reads external
    // data itself). Throws kUnsupported (library, provider, op) or kInvalidInput (model).
    OnnxRtRunner(const std::string& model_path, const OnnxRtOptions& options = {});
    ~OnnxRtRunner() override;
    OnnxRtRunner(const OnnxRtRunner&) = delete;
    OnnxRtRunner& operator=(const OnnxRtRunner&) = delete;

    const std::string& name() const override { return name_; }
    std::vector<TensorMeta> input_metadata() const override;
    NamedTensors infer(const std::map<std::string, Tensor>& feeds) override;
    double last_inference_time() const override { return last_time_; }
    // The library this runner uses.
    const OnnxRtLibraryInfo& library() const;
    // Ends ONNX Runtime's profiling (OnnxRtOptions::profile_prefix) and returns the JSON file it
    // wrote; kUsage when the runner was not created with profiling.
    std::string end_profiling();
    // A session on the same model whose outputs are `names` (needs OnnxRtOptions::model).
    std::unique_ptr<Runner> with_outputs(const std::vector<std::string>& names) const override;
    std::unique_ptr<Runner> for_model(const ir::Model& model) const override;

    struct Impl;  // the library, environment and session (onnxrt_runner.cc)

  private:
    std::string model_path_;
    OnnxRtOptions options_;
    std::unique_ptr<Impl> impl_;
    std::string name_;
    double last_time_ = 0;
};

}  // namespace pg::runners
