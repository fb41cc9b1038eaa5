#include "ops/quant_util.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "base/float16.h"
#include "base/float8.h"

namespace pg::ops {

namespace {

// The format of an 8-bit float type (float8e8m0 excluded), or nullptr.
const MiniFloatFormat* float8_format(DataType dt) {
    return dtype_bits(dt) == 8 ? minifloat_format(dt) : nullptr;
}

void int_range(DataType dt, double* lo, double* hi) {
    switch (dt) {
        case DataType::kInt8:
            *lo = -128, *hi = 127;
            return;
        case DataType::kUInt8:
            *lo = 0, *hi = 255;
            return;
        case DataType::kInt16:
            *lo = -32768, *hi = 32767;
            return;
        case DataType::kUInt16:
            *lo = 0, *hi = 65535;
            return;
        case DataType::kInt32:
            *lo = -2147483648.0, *hi = 2147483647.0;
            return;
        case DataType::kInt4:
            *lo = -8, *hi = 7;
            return;
        case DataType::kUInt4:
            *lo = 0, *hi = 15;
            return;
        case DataType::kInt2:
            *lo = -2, *hi = 1;
            return;
        case DataType::kUInt2:
            *lo = 0, *hi = 3;
            return;
        default:
            unsupported("quantization to " + dtype_name(dt));
    }
}

}  // namespace

double round_saturate(double v, double lo, double hi) {
    return std::clamp(std::nearbyint(v), lo, hi);
}

double round_to_float_type(DataType dt, double v) {
    switch (dt) {
        case DataType::kFloat32:
            return static_cast<float>(v);
        case DataType::kFloat64:
            return v;
        case DataType::kFloat16:
            return half_bits_to_float(float_to_half_bits(static_cast<float>(v)));
        case DataType::kBFloat16:
            return bfloat16_bits_to_float(float_to_bfloat16_bits(static_cast<float>(v)));
        default:
            unsupported("float type " + dtype_name(dt));
    }
}

Tensor float_tensor(DataType dt, const std::vector<int64_t>& dims, const std::vector<double>& v) {
    Tensor out = Tensor::zeros(dt, dims);
    uint8_t* p = out.mutable_bytes();
    for (size_t i = 0; i < v.size(); ++i) {
        switch (dt) {
            case DataType::kFloat32:
                reinterpret_cast<float*>(p)[i] = static_cast<float>(v[i]);
                break;
            case DataType::kFloat64:
                reinterpret_cast<double*>(p)[i] = v[i];
                break;
            case DataType::kFloat16:
                reinterpret_cast<uint16_t*>(p)[i] = float_to_half_bits(static_cast<float>(v[i]));
                break;
            case DataType::kBFloat16:
                reinterpret_cast<uint16_t*>(p)[i] =
                    float_to_bfloat16_bits(static_cast<float>(v[i]));
                break;
            default:
                unsupported("float output of type " + dtype_name(dt));
        }
    }
    return out;
}

QuantWriter::QuantWriter(DataType dt, std::vector<int64_t> dims, bool saturate)
    : dt_(dt),
      saturate_(saturate),
      out_(Tensor::zeros(dt, std::move(dims))),
      bytes_(out_.mutable_bytes()) {}

void QuantWriter::set(uint64_t i, double x, double zero_point) {
    if (const MiniFloatFormat* f = float8_format(dt_)) {
        bytes_[i] = static_cast<uint8_t>(
            double_to_minifloat(static_cast<float>(x + zero_point), *f, saturate_));
        return;
    }
    const int bits = dtype_bits(dt_);
    double q = 0;
    if (dt_ == DataType::kFloat4E2M1) {
        q = double_to_minifloat(x + zero_point, kE2M1, true);
    } else {
        double lo = 0, hi = 0;
        int_range(dt_, &lo, &hi);
        q = std::clamp(std::nearbyint(x) + zero_point, lo, hi);
    }
    if (bits < 8) {  // packed, low bits first
        const int per_byte = 8 / bits;
        const uint8_t mask = static_cast<uint8_t>((1 << bits) - 1);
        const int shift = static_cast<int>(i % static_cast<uint64_t>(per_byte)) * bits;
        uint8_t& b = bytes_[i / static_cast<uint64_t>(per_byte)];
        b = static_cast<uint8_t>((b & ~(mask << shift)) | ((static_cast<int>(q) & mask) << shift));
        return;
    }
    switch (dt_) {
        case DataType::kInt8:
            reinterpret_cast<int8_t*>(bytes_)[i] = static_cast<int8_t>(q);
            break;
        case DataType::kUInt8:
            bytes_[i] = static_cast<uint8_t>(q);
            break;
        case DataType::kInt16:
            reinterpret_cast<int16_t*>(bytes_)[i] = static_cast<int16_t>(q);
            break;
        case DataType::kUInt16:
            reinterpret_cast<uint16_t*>(bytes_)[i] = static_cast<uint16_t>(q);
            break;
        case DataType::kInt32:
            reinterpret_cast<int32_t*>(bytes_)[i] = static_cast<int32_t>(q);
            break;
        default:
            unsupported("quantization to " + dtype_name(dt_));
    }
}

}  // namespace pg::ops
