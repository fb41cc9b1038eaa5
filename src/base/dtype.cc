#include "base/dtype.h"

#include <algorithm>
#include <cctype>
#include <limits>

namespace pg {

namespace {

struct DataTypeInfo {
    DataType type;
    const char* name;       // Polygraphy name
    const char* onnx_name;  // ONNX name
    int bits;
    bool is_float;
    bool is_integer;
    bool is_signed;
};

constexpr DataTypeInfo kDataTypeTable[] = {
    {DataType::kFloat32, "float32", "FLOAT", 32, true, false, true},
    {DataType::kUInt8, "uint8", "UINT8", 8, false, true, false},
    {DataType::kInt8, "int8", "INT8", 8, false, true, true},
    {DataType::kUInt16, "uint16", "UINT16", 16, false, true, false},
    {DataType::kInt16, "int16", "INT16", 16, false, true, true},
    {DataType::kInt32, "int32", "INT32", 32, false, true, true},
    {DataType::kInt64, "int64", "INT64", 64, false, true, true},
    {DataType::kString, "string", "STRING", 0, false, false, false},
    {DataType::kBool, "bool", "BOOL", 8, false, false, false},
    {DataType::kFloat16, "float16", "FLOAT16", 16, true, false, true},
    {DataType::kFloat64, "float64", "DOUBLE", 64, true, false, true},
    {DataType::kUInt32, "uint32", "UINT32", 32, false, true, false},
    {DataType::kUInt64, "uint64", "UINT64", 64, false, true, false},
    {DataType::kComplex64, "complex64", "COMPLEX64", 64, false, false, true},
    {DataType::kComplex128, "complex128", "COMPLEX128", 128, false, false, true},
    {DataType::kBFloat16, "bfloat16", "BFLOAT16", 16, true, false, true},
    {DataType::kFloat8E4M3FN, "float8e4m3fn", "FLOAT8E4M3FN", 8, true, false, true},
    {DataType::kFloat8E4M3FNUZ, "float8e4m3fnuz", "FLOAT8E4M3FNUZ", 8, true, false, true},
    {DataType::kFloat8E5M2, "float8e5m2", "FLOAT8E5M2", 8, true, false, true},
    {DataType::kFloat8E5M2FNUZ, "float8e5m2fnuz", "FLOAT8E5M2FNUZ", 8, true, false, true},
    {DataType::kUInt4, "uint4", "UINT4", 4, false, true, false},
    {DataType::kInt4, "int4", "INT4", 4, false, true, true},
    {DataType::kFloat4E2M1, "float4e2m1", "FLOAT4E2M1", 4, true, false, true},
    {DataType::kFloat8E8M0, "float8e8m0", "FLOAT8E8M0", 8, true, false, false},
    {DataType::kUInt2, "uint2", "UINT2", 2, false, true, false},
    {DataType::kInt2, "int2", "INT2", 2, false, true, true},
};

const DataTypeInfo* find_info(DataType t) {
    for (const auto& info : kDataTypeTable)
        if (info.type == t) return &info;
    return nullptr;
}

std::string lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

}  // namespace

bool dtype_is_known(DataType t) { return find_info(t) != nullptr; }

std::string dtype_name(DataType t) {
    if (const auto* info = find_info(t)) return info->name;
    return "dtype(" + std::to_string(static_cast<int32_t>(t)) + ")";
}

std::string dtype_onnx_name(DataType t) {
    if (const auto* info = find_info(t)) return info->onnx_name;
    return "UNKNOWN(" + std::to_string(static_cast<int32_t>(t)) + ")";
}

std::optional<DataType> dtype_from_name(std::string_view name) {
    const std::string n = lower(name);
    if (n == "float" || n == "fp32") return DataType::kFloat32;
    if (n == "half" || n == "fp16") return DataType::kFloat16;
    if (n == "double" || n == "fp64") return DataType::kFloat64;
    if (n == "bf16") return DataType::kBFloat16;
    for (const auto& info : kDataTypeTable) {
        if (n == info.name || n == lower(info.onnx_name)) return info.type;
    }
    return std::nullopt;
}

int dtype_bits(DataType t) {
    const auto* info = find_info(t);
    return info ? info->bits : 0;
}

std::optional<uint64_t> dtype_storage_bytes(DataType t, uint64_t count) {
    const int bits = dtype_bits(t);
    if (bits == 0) return std::nullopt;
    if (count > std::numeric_limits<uint64_t>::max() / static_cast<uint64_t>(bits)) return std::nullopt;
    return (count * static_cast<uint64_t>(bits) + 7) / 8;
}

bool dtype_is_float(DataType t) {
    const auto* info = find_info(t);
    return info && info->is_float;
}

bool dtype_is_integer(DataType t) {
    const auto* info = find_info(t);
    return info && info->is_integer;
}

bool dtype_is_signed(DataType t) {
    const auto* info = find_info(t);
    return info && info->is_signed;
}

}  // namespace pg
