// Type dispatch for kernels: call a template lambda with the C++ type of a DataType.
//   dispatch_numeric(t.dtype(), "Add", [&]<typename T>() { ... });
// float16 / bfloat16 are not dispatched here: ops compute them in float32 (see half.h).
#pragma once

#include <cstdint>
#include <string>

#include "base/dtype.h"
#include "ops/kernel.h"

namespace pg::ops {

[[noreturn]] void unsupported_type(const char* op, DataType dt);

// float, double.
template <typename F>
void dispatch_float(DataType dt, const char* op, F&& f) {
    switch (dt) {
        case DataType::kFloat32:
            f.template operator()<float>();
            return;
        case DataType::kFloat64:
            f.template operator()<double>();
            return;
        default:
            unsupported_type(op, dt);
    }
}

// Every integer type.
template <typename F>
void dispatch_integer(DataType dt, const char* op, F&& f) {
    switch (dt) {
        case DataType::kInt8:
            f.template operator()<int8_t>();
            return;
        case DataType::kInt16:
            f.template operator()<int16_t>();
            return;
        case DataType::kInt32:
            f.template operator()<int32_t>();
            return;
        case DataType::kInt64:
            f.template operator()<int64_t>();
            return;
        case DataType::kUInt8:
            f.template operator()<uint8_t>();
            return;
        case DataType::kUInt16:
            f.template operator()<uint16_t>();
            return;
        case DataType::kUInt32:
            f.template operator()<uint32_t>();
            return;
        case DataType::kUInt64:
            f.template operator()<uint64_t>();
            return;
        default:
            unsupported_type(op, dt);
    }
}

// float, double and every integer type.
template <typename F>
void dispatch_numeric(DataType dt, const char* op, F&& f) {
    if (dt == DataType::kFloat32 || dt == DataType::kFloat64)
        dispatch_float(dt, op, f);
    else
        dispatch_integer(dt, op, f);
}

// Numeric types and bool (as uint8_t holding 0/1).
template <typename F>
void dispatch_numeric_bool(DataType dt, const char* op, F&& f) {
    if (dt == DataType::kBool)
        f.template operator()<bool>();
    else
        dispatch_numeric(dt, op, f);
}

// Data movement: a trivially copyable type of the element's byte width (1, 2, 4, 8, 16).
template <typename F>
void dispatch_by_size(DataType dt, const char* op, F&& f) {
    struct B16 {
        uint64_t lo, hi;
    };
    switch (dtype_bits(dt)) {
        case 8:
            f.template operator()<uint8_t>();
            return;
        case 16:
            f.template operator()<uint16_t>();
            return;
        case 32:
            f.template operator()<uint32_t>();
            return;
        case 64:
            f.template operator()<uint64_t>();
            return;
        case 128:
            f.template operator()<B16>();
            return;
        default:
            unsupported_type(op, dt);
    }
}

}  // namespace pg::ops
