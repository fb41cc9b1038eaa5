// Element data types, numbered as ONNX's TensorProto.DataType. A DataType is a plain integer
// underneath, so a value we do not know (a future ONNX type) is carried through untouched.
// To add a type: add the enumerator and its row in kDataTypeTable (dtype.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace pg {

enum class DataType : int32_t {
    kUndefined = 0,
    kFloat32 = 1,
    kUInt8 = 2,
    kInt8 = 3,
    kUInt16 = 4,
    kInt16 = 5,
    kInt32 = 6,
    kInt64 = 7,
    kString = 8,
    kBool = 9,
    kFloat16 = 10,
    kFloat64 = 11,
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
    kFloat8E8M0 = 24,
    kUInt2 = 25,
    kInt2 = 26,
};

// True when the integer is a data type this build knows.
bool dtype_is_known(DataType t);
// Polygraphy's lowercase name ("float32", "int64", "float8e4m3fn"); "dtype(N)" when unknown.
std::string dtype_name(DataType t);
// ONNX's upper-case name ("FLOAT", "INT64"); "UNKNOWN(N)" when unknown.
std::string dtype_onnx_name(DataType t);
// Parses a Polygraphy or ONNX dtype name, case-insensitively (also "fp16", "float", "half").
std::optional<DataType> dtype_from_name(std::string_view name);
// Bits per element (4 for INT4, 2 for INT2, 0 for STRING and unknown types).
int dtype_bits(DataType t);
// Bytes needed to store `count` elements, packed as ONNX packs sub-byte types.
// Returns nullopt on overflow or for types with no fixed size (STRING, unknown).
std::optional<uint64_t> dtype_storage_bytes(DataType t, uint64_t count);
// Floating-point element types (including float8/float4, excluding complex).
bool dtype_is_float(DataType t);
bool dtype_is_integer(DataType t);
bool dtype_is_signed(DataType t);

}  // namespace pg
