#include "runners/onnxrt_runner.h"

#include "ir/clone.h"
#include "onnx/model_io.h"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>

#include "base/error.h"
#include "base/thread_pool.h"
#include "runners/ort_api.h"

#ifndef PG_DEFAULT_ONNXRT_LIB
#define PG_DEFAULT_ONNXRT_LIB ""
#endif

namespace pg::runners {
namespace {

constexpr const char* kLibraryName = "libonnxruntime.so.1";
constexpr const char* kLibraryEnvVar = "POLYGRAPH_ONNXRT_LIB";
constexpr const char* kInstallHint =
    "To fix: run `make setup` (installs onnxruntime-node 1.30.0 into .deps/onnxruntime), or "
    "pass --onnxrt-lib PATH / set POLYGRAPH_ONNXRT_LIB to a libonnxruntime.so.1 "
    "(ONNX Runtime 1.16 or newer).";

// Owning pointer to an ONNX Runtime object, released with the matching Api::Release* member.
template <typename T>
using OrtPtr = std::unique_ptr<T, void (*)(T*) noexcept>;

// A loaded library. Never unloaded: ONNX Runtime keeps thread-local and static state.
struct Library {
    OnnxRtLibraryInfo info;
    const ort::Api* api = nullptr;
};

// ---- errors ----------------------------------------------------------------------------------

// ONNX Runtime's generic failures (FAIL, an exception in a kernel or while initializing) come
// from the model and its inputs (an invalid graph it reports as FAIL, a MatMul whose dimensions
// differ at run time): invalid input (exit 3), not an internal error of ours (exit 5).
ErrorKind error_kind_for(ort::ErrorCode code) {
    switch (code) {
        case ort::ErrorCode::kFail:
        case ort::ErrorCode::kRuntimeException:
        case ort::ErrorCode::kEngineError:
        case ort::ErrorCode::kInvalidArgument:
        case ort::ErrorCode::kInvalidGraph:
        case ort::ErrorCode::kNoSuchFile:
        case ort::ErrorCode::kInvalidProtobuf:
        case ort::ErrorCode::kNoModel:
            return ErrorKind::kInvalidInput;
        case ort::ErrorCode::kNotImplemented:
            return ErrorKind::kUnsupported;
        default:
            return ErrorKind::kInternal;
    }
}

// Throws pg::Error carrying ONNX Runtime's message (after `context`, e.g. that the model could
// not be loaded) when `status` is an error; frees it.
void check(const ort::Api* api, ort::Status* status, const char* context = "") {
    if (status == nullptr) return;
    const ErrorKind kind = error_kind_for(api->GetErrorCode(status));
    std::string message = std::string("ONNX Runtime: ") + context + api->GetErrorMessage(status);
    api->ReleaseStatus(status);
    throw Error(kind, std::move(message));
}

constexpr const char* kLoadFailed = "cannot load the model: ";

// ---- finding and loading the library ---------------------------------------------------------

std::vector<std::string> candidate_paths(const std::string& explicit_path) {
    if (!explicit_path.empty()) return {explicit_path};
    if (const char* env = std::getenv(kLibraryEnvVar); env != nullptr && *env != '\0') return {env};
    std::vector<std::string> paths;
    if (*PG_DEFAULT_ONNXRT_LIB != '\0') paths.emplace_back(PG_DEFAULT_ONNXRT_LIB);
    paths.emplace_back(kLibraryName);
    return paths;
}

// The file dlopen actually loaded (resolves a bare soname found through the search path).
std::string loaded_file(void* symbol, const std::string& fallback) {
    Dl_info info{};
    if (dladdr(symbol, &info) != 0 && info.dli_fname != nullptr) return info.dli_fname;
    return fallback;
}

Library make_library(void* handle, const std::string& path) {
    void* symbol = dlsym(handle, ort::kGetApiBaseSymbol);
    if (symbol == nullptr)
        throw Error(ErrorKind::kUnsupported,
                    "'" + path + "' is not an ONNX Runtime library (no symbol OrtGetApiBase). " +
                        kInstallHint);
    const ort::ApiBase* base = reinterpret_cast<ort::GetApiBaseFn>(symbol)();
    Library lib;
    lib.info.path = loaded_file(symbol, path);
    lib.info.version = base->GetVersionString();
    lib.api = base->GetApi(ort::kApiVersion);
    if (lib.api == nullptr)
        throw Error(ErrorKind::kUnsupported,
                    "ONNX Runtime " + lib.info.version + " at '" + lib.info.path +
                        "' is too old: Polygraph needs C API version " +
                        std::to_string(ort::kApiVersion) + ". " + kInstallHint);
    return lib;
}

const Library& open_library(const std::string& explicit_path) {
    static std::mutex mutex;
    static auto* cache = new std::map<std::string, Library>();  // lives as long as the process
    std::lock_guard lock(mutex);
    std::string tried;
    for (const std::string& path : candidate_paths(explicit_path)) {
        if (auto it = cache->find(path); it != cache->end()) return it->second;
        void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (handle == nullptr) {
            const char* why = dlerror();  // names the file
            tried += "\n  " + (why != nullptr ? std::string(why) : path + ": cannot be loaded");
            continue;
        }
        return cache->emplace(path, make_library(handle, path)).first->second;
    }
    throw Error(ErrorKind::kUnsupported, std::string("ONNX Runtime (") + kLibraryName +
                                             ") not found; tried:" + tried + "\n" + kInstallHint);
}

// One environment per library, shared by the runners alive at a time. ONNX Runtime logs only
// fatal messages: its errors reach the user as pg::Error instead.
std::shared_ptr<ort::Env> acquire_env(const Library& lib) {
    static std::mutex mutex;
    static std::map<const Library*, std::weak_ptr<ort::Env>> envs;
    std::lock_guard lock(mutex);
    if (auto env = envs[&lib].lock()) return env;
    ort::Env* raw = nullptr;
    check(lib.api, lib.api->CreateEnv(ort::LoggingLevel::kFatal, "polygraph", &raw));
    std::shared_ptr<ort::Env> env(raw, lib.api->ReleaseEnv);
    envs[&lib] = env;
    return env;
}

// ---- data types ------------------------------------------------------------------------------

struct DtypePair {
    DataType ours;
    ort::ElementType theirs;
};

// Complex types are absent: ONNX Runtime has no tensors of them.
constexpr DtypePair kDtypes[] = {
    {DataType::kFloat32, ort::ElementType::kFloat},
    {DataType::kUInt8, ort::ElementType::kUInt8},
    {DataType::kInt8, ort::ElementType::kInt8},
    {DataType::kUInt16, ort::ElementType::kUInt16},
    {DataType::kInt16, ort::ElementType::kInt16},
    {DataType::kInt32, ort::ElementType::kInt32},
    {DataType::kInt64, ort::ElementType::kInt64},
    {DataType::kString, ort::ElementType::kString},
    {DataType::kBool, ort::ElementType::kBool},
    {DataType::kFloat16, ort::ElementType::kFloat16},
    {DataType::kFloat64, ort::ElementType::kDouble},
    {DataType::kUInt32, ort::ElementType::kUInt32},
    {DataType::kUInt64, ort::ElementType::kUInt64},
    {DataType::kBFloat16, ort::ElementType::kBFloat16},
    {DataType::kFloat8E4M3FN, ort::ElementType::kFloat8E4M3FN},
    {DataType::kFloat8E4M3FNUZ, ort::ElementType::kFloat8E4M3FNUZ},
    {DataType::kFloat8E5M2, ort::ElementType::kFloat8E5M2},
    {DataType::kFloat8E5M2FNUZ, ort::ElementType::kFloat8E5M2FNUZ},
    {DataType::kUInt4, ort::ElementType::kUInt4},
    {DataType::kInt4, ort::ElementType::kInt4},
    {DataType::kFloat4E2M1, ort::ElementType::kFloat4E2M1},
    {DataType::kUInt2, ort::ElementType::kUInt2},
    {DataType::kInt2, ort::ElementType::kInt2},
    {DataType::kFloat8E8M0, ort::ElementType::kFloat8E8M0},
};

ort::ElementType to_ort(DataType t, const std::string& name) {
    for (const DtypePair& p : kDtypes)
        if (p.ours == t) return p.theirs;
    throw Error(ErrorKind::kUnsupported,
                "input '" + name + "' has dtype " + dtype_name(t) + ", which ONNX Runtime lacks");
}

std::optional<DataType> from_ort(ort::ElementType t) {
    for (const DtypePair& p : kDtypes)
        if (p.theirs == t) return p.ours;
    return std::nullopt;
}

const char* onnx_type_name(ort::OnnxType t) {
    switch (t) {
        case ort::OnnxType::kTensor:
            return "tensor";
        case ort::OnnxType::kSequence:
            return "sequence";
        case ort::OnnxType::kMap:
            return "map";
        case ort::OnnxType::kOpaque:
            return "opaque value";
        case ort::OnnxType::kSparseTensor:
            return "sparse tensor";
        case ort::OnnxType::kOptional:
            return "optional";
        default:
            return "value of unknown kind";
    }
}

// ---- shapes and names ------------------------------------------------------------------------

std::vector<int64_t> read_dims(const ort::Api* api, const ort::TensorTypeAndShapeInfo* info) {
    size_t rank = 0;
    check(api, api->GetDimensionsCount(info, &rank));
    std::vector<int64_t> dims(rank);
    check(api, api->GetDimensions(info, dims.data(), rank));
    return dims;
}

// Dims -1 become symbolic (when ONNX Runtime knows the name) or unknown.
ir::Shape read_shape(const ort::Api* api, const ort::TensorTypeAndShapeInfo* info) {
    const std::vector<int64_t> dims = read_dims(api, info);
    std::vector<const char*> names(dims.size(), nullptr);
    check(api, api->GetSymbolicDimensions(info, names.data(), names.size()));
    ir::Shape shape;
    for (size_t i = 0; i < dims.size(); ++i) {
        if (dims[i] >= 0)
            shape.push_back(ir::Dim::known(dims[i]));
        else if (names[i] != nullptr && *names[i] != '\0')
            shape.push_back(ir::Dim::symbolic(names[i]));
        else
            shape.push_back(ir::Dim::unknown());
    }
    return shape;
}

using NameGetter = ort::Status* (*)(const ort::Session*, size_t, ort::Allocator*, char**) noexcept;

std::vector<std::string> read_names(const ort::Api* api, const ort::Session* session, size_t count,
                                    NameGetter getter) {
    ort::Allocator* allocator = nullptr;
    check(api, api->GetAllocatorWithDefaultOptions(&allocator));
    std::vector<std::string> names;
    for (size_t i = 0; i < count; ++i) {
        char* name = nullptr;
        check(api, getter(session, i, allocator, &name));
        names.emplace_back(name);
        check(api, api->AllocatorFree(allocator, name));
    }
    return names;
}

// ---- options ---------------------------------------------------------------------------------

bool is_cpu_provider(std::string p) {
    std::transform(p.begin(), p.end(), p.begin(), [](unsigned char c) { return std::tolower(c); });
    return p == "cpu" || p == "cpuexecutionprovider";
}

void check_providers(const std::vector<std::string>& providers) {
    for (const std::string& p : providers) {
        if (is_cpu_provider(p)) continue;
        throw Error(ErrorKind::kUnsupported,
                    "execution provider '" + p +
                        "' is not supported: the --onnxrt runner uses ONNX Runtime's "
                        "CPUExecutionProvider only (--providers cpu)");
    }
}

ort::GraphOptimizationLevel to_ort(OrtOptLevel level) {
    switch (level) {
        case OrtOptLevel::kDisable:
            return ort::GraphOptimizationLevel::kDisableAll;
        case OrtOptLevel::kBasic:
            return ort::GraphOptimizationLevel::kEnableBasic;
        case OrtOptLevel::kExtended:
            return ort::GraphOptimizationLevel::kEnableExtended;
        default:
            return ort::GraphOptimizationLevel::kEnableAll;
    }
}

OrtPtr<ort::SessionOptions> make_session_options(const ort::Api* api, const OnnxRtOptions& o) {
    ort::SessionOptions* raw = nullptr;
    check(api, api->CreateSessionOptions(&raw));
    OrtPtr<ort::SessionOptions> options(raw, api->ReleaseSessionOptions);
    const int threads = o.intra_op_threads > 0 ? o.intra_op_threads : hardware_threads();
    check(api, api->SetIntraOpNumThreads(raw, threads));
    check(api, api->SetSessionGraphOptimizationLevel(raw, to_ort(o.optimization)));
    if (o.intra_op_spinning)
        check(api, api->AddSessionConfigEntry(raw, "session.intra_op.allow_spinning",
                                              *o.intra_op_spinning ? "1" : "0"));
    if (!o.profile_prefix.empty()) check(api, api->EnableProfiling(raw, o.profile_prefix.c_str()));
    return options;
}

}  // namespace

// ---- the runner ------------------------------------------------------------------------------

struct OnnxRtRunner::Impl {
    const Library& lib;
    const ort::Api* api;
    std::shared_ptr<ort::Env> env;  // declared before the session: released after it
    OrtPtr<ort::Session> session{nullptr, nullptr};
    OrtPtr<ort::MemoryInfo> cpu_memory{nullptr, nullptr};
    std::vector<TensorMeta> inputs;
    std::vector<std::string> output_names;

    // Input values for Run, borrowing the fed tensors' bytes.
    struct Feeds {
        std::vector<OrtPtr<ort::Value>> owned;
        std::vector<const char*> names;
        std::vector<const ort::Value*> values;
    };

    Impl(const std::string& model_path, const OnnxRtOptions& options);
    Feeds make_feeds(const std::map<std::string, Tensor>& feeds) const;
    std::vector<OrtPtr<ort::Value>> run(const Feeds& feeds) const;
    TensorMeta read_input(size_t index, const std::string& name) const;
    OrtPtr<ort::Value> make_value(const std::string& name, const Tensor& t) const;
    OrtPtr<ort::Value> make_string_value(const Tensor& t) const;
    Tensor to_tensor(ort::Value* value, const std::string& name) const;
    std::vector<std::string> read_strings(const ort::Value* value, uint64_t count) const;
};

OnnxRtRunner::Impl::Impl(const std::string& model_path, const OnnxRtOptions& options)
    : lib(open_library(options.library)), api(lib.api), env(acquire_env(lib)) {
    check_providers(options.providers);
    OrtPtr<ort::SessionOptions> session_options = make_session_options(api, options);
    ort::Session* raw = nullptr;
    if (options.model_bytes.empty())
        check(api, api->CreateSession(env.get(), model_path.c_str(), session_options.get(), &raw),
              kLoadFailed);
    else
        check(api,
              api->CreateSessionFromArray(env.get(), options.model_bytes.data(),
                                          options.model_bytes.size(), session_options.get(), &raw),
              kLoadFailed);
    session = OrtPtr<ort::Session>(raw, api->ReleaseSession);
    ort::MemoryInfo* mem = nullptr;
    check(api, api->CreateCpuMemoryInfo(ort::AllocatorType::kDevice, ort::MemType::kDefault, &mem));
    cpu_memory = OrtPtr<ort::MemoryInfo>(mem, api->ReleaseMemoryInfo);
    size_t input_count = 0, output_count = 0;
    check(api, api->SessionGetInputCount(raw, &input_count));
    check(api, api->SessionGetOutputCount(raw, &output_count));
    const auto input_names = read_names(api, raw, input_count, api->SessionGetInputName);
    for (size_t i = 0; i < input_count; ++i) inputs.push_back(read_input(i, input_names[i]));
    output_names = read_names(api, raw, output_count, api->SessionGetOutputName);
}

// ONNX Runtime reports an input of unknown rank as rank 0, so such inputs read as scalars.
TensorMeta OnnxRtRunner::Impl::read_input(size_t index, const std::string& name) const {
    ort::TypeInfo* raw = nullptr;
    check(api, api->SessionGetInputTypeInfo(session.get(), index, &raw));
    OrtPtr<ort::TypeInfo> type_info(raw, api->ReleaseTypeInfo);
    TensorMeta meta;
    meta.name = name;
    ort::OnnxType kind = ort::OnnxType::kUnknown;
    check(api, api->GetOnnxTypeFromTypeInfo(raw, &kind));
    if (kind != ort::OnnxType::kTensor) return meta;
    const ort::TensorTypeAndShapeInfo* info = nullptr;
    check(api, api->CastTypeInfoToTensorInfo(raw, &info));
    ort::ElementType et = ort::ElementType::kUndefined;
    check(api, api->GetTensorElementType(info, &et));
    meta.dtype = from_ort(et).value_or(DataType::kUndefined);
    meta.shape = read_shape(api, info);
    return meta;
}

OrtPtr<ort::Value> OnnxRtRunner::Impl::make_value(const std::string& name, const Tensor& t) const {
    if (!t.has_data())
        throw Error(ErrorKind::kInvalidInput, "input '" + name + "' has no values (placeholder)");
    const ort::ElementType et = to_ort(t.dtype(), name);
    if (t.is_string()) return make_string_value(t);
    static uint8_t empty_buffer = 0;  // ONNX Runtime wants a non-null pointer for 0 elements
    void* data = t.nbytes() > 0 ? const_cast<uint8_t*>(t.bytes()) : &empty_buffer;  // not written
    ort::Value* raw = nullptr;
    check(api, api->CreateTensorWithDataAsOrtValue(cpu_memory.get(), data, t.nbytes(),
                                                   t.dims().data(), t.dims().size(), et, &raw));
    return OrtPtr<ort::Value>(raw, api->ReleaseValue);
}

// Strings are copied into ONNX Runtime's own buffer; an embedded NUL ends a string.
OrtPtr<ort::Value> OnnxRtRunner::Impl::make_string_value(const Tensor& t) const {
    ort::Allocator* allocator = nullptr;
    check(api, api->GetAllocatorWithDefaultOptions(&allocator));
    ort::Value* raw = nullptr;
    check(api, api->CreateTensorAsOrtValue(allocator, t.dims().data(), t.dims().size(),
                                           ort::ElementType::kString, &raw));
    OrtPtr<ort::Value> value(raw, api->ReleaseValue);
    std::vector<const char*> strings;
    for (const std::string& s : t.strings()) strings.push_back(s.c_str());
    if (!strings.empty()) check(api, api->FillStringTensor(raw, strings.data(), strings.size()));
    return value;
}

std::vector<std::string> OnnxRtRunner::Impl::read_strings(const ort::Value* value,
                                                          uint64_t count) const {
    if (count == 0) return {};
    size_t size = 0;
    check(api, api->GetStringTensorDataLength(value, &size));
    std::string bytes(size, '\0');
    std::vector<size_t> offsets(count);
    check(api, api->GetStringTensorContent(value, bytes.data(), size, offsets.data(), count));
    std::vector<std::string> out;
    for (uint64_t i = 0; i < count; ++i) {
        const size_t end = i + 1 < count ? offsets[i + 1] : size;
        out.push_back(bytes.substr(offsets[i], end - offsets[i]));
    }
    return out;
}

Tensor OnnxRtRunner::Impl::to_tensor(ort::Value* value, const std::string& name) const {
    ort::OnnxType kind = ort::OnnxType::kUnknown;
    check(api, api->GetValueType(value, &kind));
    if (kind != ort::OnnxType::kTensor)
        throw Error(ErrorKind::kUnsupported, "output '" + name + "' is a " + onnx_type_name(kind) +
                                                 "; only tensor outputs can be compared");
    ort::TensorTypeAndShapeInfo* raw = nullptr;
    check(api, api->GetTensorTypeAndShape(value, &raw));
    OrtPtr<ort::TensorTypeAndShapeInfo> info(raw, api->ReleaseTensorTypeAndShapeInfo);
    ort::ElementType et = ort::ElementType::kUndefined;
    check(api, api->GetTensorElementType(raw, &et));
    const std::optional<DataType> dtype = from_ort(et);
    if (!dtype)
        throw Error(ErrorKind::kUnsupported,
                    "output '" + name + "' has ONNX Runtime element type " +
                        std::to_string(static_cast<int>(et)) + ", which Polygraph does not know");
    std::vector<int64_t> dims = read_dims(api, raw);
    const uint64_t count = checked_numel(dims).value_or(0);
    if (*dtype == DataType::kString) return Tensor::from_strings(dims, read_strings(value, count));
    const uint64_t size = dtype_storage_bytes(*dtype, count).value_or(0);
    void* data = nullptr;
    check(api, api->GetTensorMutableData(value, &data));
    std::string bytes(size, '\0');
    if (size > 0) std::copy_n(static_cast<const char*>(data), size, bytes.data());
    return Tensor::from_bytes(*dtype, std::move(dims), std::move(bytes));
}

OnnxRtRunner::Impl::Feeds OnnxRtRunner::Impl::make_feeds(
    const std::map<std::string, Tensor>& feeds) const {
    for (const TensorMeta& input : inputs)
        if (feeds.count(input.name) == 0)
            throw Error(ErrorKind::kInvalidInput,
                        "no value fed for model input '" + input.name + "'");
    Feeds out;
    for (const auto& [name, tensor] : feeds) {
        out.owned.push_back(make_value(name, tensor));
        out.names.push_back(name.c_str());
        out.values.push_back(out.owned.back().get());
    }
    return out;
}

// Runs the session, requesting every output in graph order.
std::vector<OrtPtr<ort::Value>> OnnxRtRunner::Impl::run(const Feeds& feeds) const {
    std::vector<const char*> names;
    for (const std::string& name : output_names) names.push_back(name.c_str());
    std::vector<ort::Value*> outputs(names.size(), nullptr);
    ort::Status* status = api->Run(session.get(), nullptr, feeds.names.data(), feeds.values.data(),
                                   feeds.values.size(), names.data(), names.size(), outputs.data());
    std::vector<OrtPtr<ort::Value>> results;
    for (ort::Value* v : outputs) results.emplace_back(v, api->ReleaseValue);
    check(api, status);
    return results;
}

// ---- public API ------------------------------------------------------------------------------

OnnxRtLibraryInfo load_onnxrt_library(const std::string& explicit_path) {
    return open_library(explicit_path).info;
}

OrtOptLevel parse_ort_opt_level(const std::string& text) {
    if (text == "disable") return OrtOptLevel::kDisable;
    if (text == "basic") return OrtOptLevel::kBasic;
    if (text == "extended") return OrtOptLevel::kExtended;
    if (text == "all") return OrtOptLevel::kAll;
    throw Error(ErrorKind::kUsage, "unknown graph optimization level '" + text +
                                       "' (expected disable, basic, extended or all)");
}

OnnxRtRunner::OnnxRtRunner(const std::string& model_path, const OnnxRtOptions& options)
    : model_path_(model_path), options_(options), name_(make_runner_name("onnxrt-runner")) {
    options_.model_bytes.clear();  // kept only for the session below
    with_context("while loading '" + model_path + "' with ONNX Runtime",
                 [&] { impl_ = std::make_unique<Impl>(model_path, options); });
}

OnnxRtRunner::~OnnxRtRunner() = default;

std::string OnnxRtRunner::end_profiling() {
    if (options_.profile_prefix.empty())
        throw Error(ErrorKind::kUsage, "end_profiling: the runner was created without profiling");
    const ort::Api* api = impl_->api;
    ort::Allocator* allocator = nullptr;
    check(api, api->GetAllocatorWithDefaultOptions(&allocator));
    char* path = nullptr;
    check(api, api->SessionEndProfiling(impl_->session.get(), allocator, &path));
    std::string out = path ? path : "";
    if (path) check(api, api->AllocatorFree(allocator, path));
    return out;
}

std::unique_ptr<Runner> OnnxRtRunner::with_outputs(const std::vector<std::string>& names) const {
    if (!options_.model) return nullptr;
    auto copy = ir::clone_model(*options_.model);
    std::vector<ir::Value*> outs;
    for (const auto& n : names) {
        ir::Value* v = copy->graph->find_value(n);
        if (!v) throw Error(ErrorKind::kInvalidInput, "no tensor named '" + n + "' in the model");
        outs.push_back(v);
    }
    copy->graph->set_outputs(std::move(outs));
    OnnxRtOptions o = options_;
    o.model_bytes = onnx::serialize_model(*copy);
    auto r = std::make_unique<OnnxRtRunner>(model_path_, o);
    r->name_ = name_;
    return r;
}

std::unique_ptr<Runner> OnnxRtRunner::for_model(const ir::Model& model) const {
    OnnxRtOptions o = options_;
    o.model = &model;
    o.model_bytes = onnx::serialize_model(model);
    auto r = std::make_unique<OnnxRtRunner>(model_path_, o);
    r->name_ = name_;
    return r;
}

const OnnxRtLibraryInfo& OnnxRtRunner::library() const {
    return impl_->lib.info;
}

std::vector<TensorMeta> OnnxRtRunner::input_metadata() const {
    return impl_->inputs;
}

NamedTensors OnnxRtRunner::infer(const std::map<std::string, Tensor>& feeds) {
    const Impl::Feeds inputs = impl_->make_feeds(feeds);
    const auto start = std::chrono::steady_clock::now();
    std::vector<OrtPtr<ort::Value>> results =
        with_context("while running " + name_, [&] { return impl_->run(inputs); });
    last_time_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    NamedTensors out;
    for (size_t i = 0; i < results.size(); ++i)
        out.emplace_back(impl_->output_names[i],
                         impl_->to_tensor(results[i].get(), impl_->output_names[i]));
    return out;
}

}  // namespace pg::runners
