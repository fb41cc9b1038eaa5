// The part of ONNX Runtime's C API that the --onnxrt runner calls, declared from the public API's
// documented layout so that Polygraph needs no ONNX Runtime header and no link-time dependency
// (the library is loaded with dlopen, see onnxrt_runner.cc).
//
// The API is a table of function pointers (`Api`) whose order never changes: each ONNX Runtime
// release only appends members, and GetApi(version) returns the table as of that version. Members
// we do not call are `void*` placeholders, grouped by index range; the static_asserts at the end
// pin the index of every member we call.
//
// To call another function: replace its placeholder by a typed member at the same index (split
// the placeholder array), add a static_assert for its index, and raise kApiVersion if the
// function is newer than that version.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pg::ort {

// The API version we request. Version N is served by ONNX Runtime 1.N and newer.
inline constexpr uint32_t kApiVersion = 16;

// Opaque handles owned by ONNX Runtime; released with the matching Api::Release* member.
struct Env;
struct Status;  // nullptr means success
struct MemoryInfo;
struct Session;
struct Value;
struct RunOptions;
struct TypeInfo;
struct TensorTypeAndShapeInfo;
struct SessionOptions;
struct Allocator;  // only used through Api::AllocatorFree

// ONNX Runtime's element types. 0-23 equal ONNX's TensorProto.DataType; after that ONNX Runtime
// numbers UINT2, INT2 and FLOAT8E8M0 differently from ONNX (which has 25, 26 and 24).
enum class ElementType : int {
    kUndefined = 0,
    kFloat = 1,
    kUInt8 = 2,
    kInt8 = 3,
    kUInt16 = 4,
    kInt16 = 5,
    kInt32 = 6,
    kInt64 = 7,
    kString = 8,
    kBool = 9,
    kFloat16 = 10,
    kDouble = 11,
    kUInt32 = 12,
    kUInt64 = 13,
    kComplex64 = 14,
    kComplex128 = 15,
    kBFloat16 = 16,
    kFloat8E4M3FN = 17,
    kFloat8E4M3FNUZ = 18,
    kFloat8E5M2 = 19,
    kFloat8E5M2FNUZ = 20,
    kUInt4 = 21,
    kInt4 = 22,
    kFloat4E2M1 = 23,
    kUInt2 = 24,
    kInt2 = 25,
    kFloat8E8M0 = 26,
};

// Kind of a value (synced with ONNX's TypeProto oneof).
enum class OnnxType : int {
    kUnknown = 0,
    kTensor = 1,
    kSequence = 2,
    kMap = 3,
    kOpaque = 4,
    kSparseTensor = 5,
    kOptional = 6,
};

enum class LoggingLevel : int { kVerbose = 0, kInfo = 1, kWarning = 2, kError = 3, kFatal = 4 };

enum class ErrorCode : int {
    kOk = 0,
    kFail = 1,
    kInvalidArgument = 2,
    kNoSuchFile = 3,
    kNoModel = 4,
    kEngineError = 5,
    kRuntimeException = 6,
    kInvalidProtobuf = 7,
    kModelLoaded = 8,
    kNotImplemented = 9,
    kInvalidGraph = 10,
    kEpFail = 11,
};

enum class GraphOptimizationLevel : int {
    kDisableAll = 0,
    kEnableBasic = 1,
    kEnableExtended = 2,
    kEnableAll = 99,
};

enum class AllocatorType : int { kInvalid = -1, kDevice = 0, kArena = 1 };

enum class MemType : int { kCpuInput = -2, kCpuOutput = -1, kCpu = -1, kDefault = 0 };

// The function table (OrtApi). Comments give the index of each member.
struct Api {
    void* unused_0;                                                 // 0 CreateStatus
    ErrorCode (*GetErrorCode)(const Status* status) noexcept;       // 1
    const char* (*GetErrorMessage)(const Status* status) noexcept;  // 2
    Status* (*CreateEnv)(LoggingLevel level, const char* log_id, Env** out) noexcept;  // 3
    void* unused_4_6[3];
    Status* (*CreateSession)(const Env* env, const char* model_path, const SessionOptions* options,
                             Session** out) noexcept;  // 7
    Status* (*CreateSessionFromArray)(const Env* env, const void* model_data, size_t model_size,
                                      const SessionOptions* options, Session** out) noexcept;  // 8
    Status* (*Run)(Session* session, const RunOptions* run_options, const char* const* input_names,
                   const Value* const* inputs, size_t input_count, const char* const* output_names,
                   size_t output_count, Value** outputs) noexcept;   // 9
    Status* (*CreateSessionOptions)(SessionOptions** out) noexcept;  // 10
    void* unused_11_13[3];
    // Per-node timings written as JSON to "<prefix>_<date>.json" when profiling ends.
    Status* (*EnableProfiling)(SessionOptions* options, const char* prefix) noexcept;  // 14
    void* unused_15_22[8];
    Status* (*SetSessionGraphOptimizationLevel)(SessionOptions* options,
                                                GraphOptimizationLevel level) noexcept;  // 23
    Status* (*SetIntraOpNumThreads)(SessionOptions* options, int threads) noexcept;      // 24
    Status* (*SetInterOpNumThreads)(SessionOptions* options, int threads) noexcept;      // 25
    void* unused_26_29[4];
    Status* (*SessionGetInputCount)(const Session* session, size_t* out) noexcept;   // 30
    Status* (*SessionGetOutputCount)(const Session* session, size_t* out) noexcept;  // 31
    void* unused_32;
    Status* (*SessionGetInputTypeInfo)(const Session* session, size_t index,
                                       TypeInfo** out) noexcept;  // 33
    Status* (*SessionGetOutputTypeInfo)(const Session* session, size_t index,
                                        TypeInfo** out) noexcept;  // 34
    void* unused_35;
    // Names are allocated with `allocator`; free them with AllocatorFree.
    Status* (*SessionGetInputName)(const Session* session, size_t index, Allocator* allocator,
                                   char** out) noexcept;  // 36
    Status* (*SessionGetOutputName)(const Session* session, size_t index, Allocator* allocator,
                                    char** out) noexcept;  // 37
    void* unused_38_47[10];
    Status* (*CreateTensorAsOrtValue)(Allocator* allocator, const int64_t* shape, size_t rank,
                                      ElementType type, Value** out) noexcept;  // 48
    // The value borrows `data` (not copied, not freed).
    Status* (*CreateTensorWithDataAsOrtValue)(const MemoryInfo* info, void* data, size_t size,
                                              const int64_t* shape, size_t rank, ElementType type,
                                              Value** out) noexcept;     // 49
    Status* (*IsTensor)(const Value* value, int* out) noexcept;          // 50
    Status* (*GetTensorMutableData)(Value* value, void** out) noexcept;  // 51
    Status* (*FillStringTensor)(Value* value, const char* const* strings,
                                size_t count) noexcept;                              // 52
    Status* (*GetStringTensorDataLength)(const Value* value, size_t* out) noexcept;  // 53
    // Concatenated string bytes (not terminated) and the start offset of each string.
    Status* (*GetStringTensorContent)(const Value* value, void* bytes, size_t size, size_t* offsets,
                                      size_t offset_count) noexcept;  // 54
    // `out` is owned by `info` (not released separately); null for non-tensors.
    Status* (*CastTypeInfoToTensorInfo)(const TypeInfo* info,
                                        const TensorTypeAndShapeInfo** out) noexcept;  // 55
    Status* (*GetOnnxTypeFromTypeInfo)(const TypeInfo* info, OnnxType* out) noexcept;  // 56
    void* unused_57_59[3];
    Status* (*GetTensorElementType)(const TensorTypeAndShapeInfo* info,
                                    ElementType* out) noexcept;                               // 60
    Status* (*GetDimensionsCount)(const TensorTypeAndShapeInfo* info, size_t* out) noexcept;  // 61
    Status* (*GetDimensions)(const TensorTypeAndShapeInfo* info, int64_t* dims,
                             size_t count) noexcept;  // 62
    // Pointers to the symbolic names, "" for dims without one; owned by `info`.
    Status* (*GetSymbolicDimensions)(const TensorTypeAndShapeInfo* info, const char** names,
                                     size_t count) noexcept;  // 63
    Status* (*GetTensorShapeElementCount)(const TensorTypeAndShapeInfo* info,
                                          size_t* out) noexcept;  // 64
    Status* (*GetTensorTypeAndShape)(const Value* value,
                                     TensorTypeAndShapeInfo** out) noexcept;  // 65
    void* unused_66;
    Status* (*GetValueType)(const Value* value, OnnxType* out) noexcept;  // 67
    void* unused_68;
    Status* (*CreateCpuMemoryInfo)(AllocatorType type, MemType mem_type,
                                   MemoryInfo** out) noexcept;  // 69
    void* unused_70_75[6];
    Status* (*AllocatorFree)(Allocator* allocator, void* p) noexcept;  // 76
    void* unused_77;
    // The default CPU allocator; never released.
    Status* (*GetAllocatorWithDefaultOptions)(Allocator** out) noexcept;  // 78
    void* unused_79_91[13];
    void (*ReleaseEnv)(Env* p) noexcept;                                        // 92
    void (*ReleaseStatus)(Status* p) noexcept;                                  // 93
    void (*ReleaseMemoryInfo)(MemoryInfo* p) noexcept;                          // 94
    void (*ReleaseSession)(Session* p) noexcept;                                // 95
    void (*ReleaseValue)(Value* p) noexcept;                                    // 96
    void (*ReleaseRunOptions)(RunOptions* p) noexcept;                          // 97
    void (*ReleaseTypeInfo)(TypeInfo* p) noexcept;                              // 98
    void (*ReleaseTensorTypeAndShapeInfo)(TensorTypeAndShapeInfo* p) noexcept;  // 99
    void (*ReleaseSessionOptions)(SessionOptions* p) noexcept;                  // 100
    void* unused_101_109[9];
    // Ends profiling; *out (allocated with `allocator`) is the JSON file written.
    Status* (*SessionEndProfiling)(Session* session, Allocator* allocator,
                                   char** out) noexcept;  // 110
    void* unused_111_129[19];
    // Keys and values as in onnxruntime_session_options_config_keys.h (API version 5).
    Status* (*AddSessionConfigEntry)(SessionOptions* options, const char* key,
                                     const char* value) noexcept;  // 130
};

// The entry point table returned by the exported function OrtGetApiBase().
struct ApiBase {
    // nullptr when the library does not support `version`.
    const Api* (*GetApi)(uint32_t version) noexcept;
    const char* (*GetVersionString)() noexcept;  // e.g. "1.30.0"
};

using GetApiBaseFn = const ApiBase* (*)();
inline constexpr const char* kGetApiBaseSymbol = "OrtGetApiBase";

// Member indices. ONNX Runtime's own sources assert that the version 1 table ends with
// ReleaseCustomOpDomain at index 101 and the version 4 table with ReleaseAvailableProviders at
// 126; AddSessionConfigEntry follows GetStringTensorElementLength, GetStringTensorElement and
// FillStringTensorElement (127-129).
constexpr size_t index_of(size_t offset) {
    return offset / sizeof(void*);
}
static_assert(index_of(offsetof(Api, GetErrorCode)) == 1);
static_assert(index_of(offsetof(Api, CreateEnv)) == 3);
static_assert(index_of(offsetof(Api, CreateSession)) == 7);
static_assert(index_of(offsetof(Api, Run)) == 9);
static_assert(index_of(offsetof(Api, CreateSessionOptions)) == 10);
static_assert(index_of(offsetof(Api, EnableProfiling)) == 14);
static_assert(index_of(offsetof(Api, SetSessionGraphOptimizationLevel)) == 23);
static_assert(index_of(offsetof(Api, SessionGetInputCount)) == 30);
static_assert(index_of(offsetof(Api, SessionGetInputTypeInfo)) == 33);
static_assert(index_of(offsetof(Api, SessionGetInputName)) == 36);
static_assert(index_of(offsetof(Api, CreateTensorAsOrtValue)) == 48);
static_assert(index_of(offsetof(Api, GetStringTensorContent)) == 54);
static_assert(index_of(offsetof(Api, GetTensorElementType)) == 60);
static_assert(index_of(offsetof(Api, GetTensorTypeAndShape)) == 65);
static_assert(index_of(offsetof(Api, GetValueType)) == 67);
static_assert(index_of(offsetof(Api, CreateCpuMemoryInfo)) == 69);
static_assert(index_of(offsetof(Api, AllocatorFree)) == 76);
static_assert(index_of(offsetof(Api, GetAllocatorWithDefaultOptions)) == 78);
static_assert(index_of(offsetof(Api, ReleaseEnv)) == 92);
static_assert(index_of(offsetof(Api, ReleaseSessionOptions)) == 100);
static_assert(index_of(offsetof(Api, SessionEndProfiling)) == 110);
static_assert(index_of(offsetof(Api, AddSessionConfigEntry)) == 130);
static_assert(sizeof(Api) == 131 * sizeof(void*));

}  // namespace pg::ort
