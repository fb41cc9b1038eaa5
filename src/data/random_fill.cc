// Generated arrays for the default data loader: see random_fill.h.
#include "data/random_fill.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "base/error.h"
#include "base/float8.h"

namespace pg::data {

namespace {

// numpy's d * scale + shift for random_sample() scaled into [lo, hi).
struct Affine {
    double scale, shift;
};

Affine float_affine(const ValRange& r) {
    if (std::isinf(r.lo)) return {r.lo, 0.0};
    return {std::isinf(r.hi) ? r.hi : r.hi - r.lo, r.lo};
}

template <typename T, typename Convert>
std::string fill_floats(NumpyRandomState& rs, uint64_t n, const ValRange& range, Convert conv) {
    const Affine a = float_affine(range);
    std::string bytes(n * sizeof(T), '\0');
    for (uint64_t i = 0; i < n; ++i) {
        const double d = rs.random_sample() * a.scale + a.shift;
        const T v = conv(d);
        std::memcpy(bytes.data() + i * sizeof(T), &v, sizeof(T));
    }
    return bytes;
}

std::string float_bytes(NumpyRandomState& rs, DataType dt, uint64_t n, const ValRange& r) {
    auto mini = [](const MiniFloatFormat& f) {
        return [&f](double d) { return static_cast<uint16_t>(double_to_minifloat(d, f, false)); };
    };
    auto mini8 = [](const MiniFloatFormat& f) {
        return [&f](double d) { return static_cast<uint8_t>(double_to_minifloat(d, f, true)); };
    };
    switch (dt) {
        case DataType::kFloat64:
            return fill_floats<double>(rs, n, r, [](double d) { return d; });
        case DataType::kFloat32:
            return fill_floats<float>(rs, n, r, [](double d) { return static_cast<float>(d); });
        case DataType::kFloat16:
            return fill_floats<uint16_t>(rs, n, r, mini(kHalfFormat));
        case DataType::kBFloat16:
            return fill_floats<uint16_t>(rs, n, r, mini(kBFloat16Format));
        case DataType::kFloat8E4M3FN:
            return fill_floats<uint8_t>(rs, n, r, mini8(kE4M3FN));
        case DataType::kFloat8E4M3FNUZ:
            return fill_floats<uint8_t>(rs, n, r, mini8(kE4M3FNUZ));
        case DataType::kFloat8E5M2:
            return fill_floats<uint8_t>(rs, n, r, mini8(kE5M2));
        case DataType::kFloat8E5M2FNUZ:
            return fill_floats<uint8_t>(rs, n, r, mini8(kE5M2FNUZ));
        default:
            throw Error(ErrorKind::kUnsupported,
                        "cannot generate random data of dtype " + dtype_name(dt));
    }
}

// Python's int() of a range bound, refusing values no integer type can hold.
int64_t py_int(double v) {
    if (!std::isfinite(v) || std::fabs(v) >= 9.2e18) {
        throw Error(ErrorKind::kUsage,
                    "value range bound is not a usable integer: " + std::to_string(v));
    }
    return static_cast<int64_t>(std::trunc(v));
}

// The inclusive [lo, hi] bounds of an integer dtype, as int64 (uint64's top is clipped).
std::pair<int64_t, int64_t> int_limits(DataType dt) {
    const int bits = dtype_bits(dt);
    if (dtype_is_signed(dt)) {
        const int64_t hi =
            bits == 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (bits - 1)) - 1;
        return {-hi - 1, hi};
    }
    return {0, bits == 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << bits) - 1};
}

template <typename U, typename Draw>
std::string fill_ints(uint64_t n, U off, Draw draw) {
    std::string bytes(n * sizeof(U), '\0');
    for (uint64_t i = 0; i < n; ++i) {
        const U v = static_cast<U>(off + draw());
        std::memcpy(bytes.data() + i * sizeof(U), &v, sizeof(U));
    }
    return bytes;
}

std::string int_bytes(NumpyRandomState& rs, DataType dt, uint64_t n, const ValRange& r) {
    const int64_t lo = py_int(r.lo), hi = py_int(r.hi);
    const auto [tmin, tmax] = int_limits(dt);
    if (lo < tmin) throw Error(ErrorKind::kUsage, "low is out of bounds for " + dtype_name(dt));
    if (hi > tmax) throw Error(ErrorKind::kUsage, "high is out of bounds for " + dtype_name(dt));
    if (lo > hi) throw Error(ErrorKind::kUsage, "low >= high (value range is empty)");
    const uint64_t rng = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
    BufferedBits bb(rs);
    switch (dtype_bits(dt)) {
        case 8:
            return fill_ints<uint8_t>(n, lo, [&] { return bb.bounded8(uint8_t(rng)); });
        case 16:
            return fill_ints<uint16_t>(n, lo, [&] { return bb.bounded16(uint16_t(rng)); });
        case 32:
            return fill_ints<uint32_t>(n, lo, [&] { return rs.bounded32(uint32_t(rng)); });
        default:
            return fill_ints<uint64_t>(n, lo, [&] { return rs.bounded64(rng); });
    }
}

std::string bool_bytes(NumpyRandomState& rs, uint64_t n, const ValRange& r) {
    const bool lo = r.lo != 0, hi = r.hi != 0;
    if (lo > hi) throw Error(ErrorKind::kUsage, "low >= high (value range is empty)");
    BufferedBits bb(rs);
    std::string bytes(n, '\0');
    for (uint64_t i = 0; i < n; ++i) bytes[i] = (lo == hi) ? lo : bb.next_bool();
    return bytes;
}

bool numpy_int_type(DataType dt) {
    const int bits = dtype_bits(dt);
    return dtype_is_integer(dt) && (bits == 8 || bits == 16 || bits == 32 || bits == 64);
}

}  // namespace

Tensor random_tensor(NumpyRandomState& rs, DataType dtype, const std::vector<int64_t>& dims,
                     const ValRange& range) {
    const auto n = checked_numel(dims);
    if (!n) throw Error(ErrorKind::kInvalidInput, "invalid shape for generated data");
    if (dtype == DataType::kBool) return Tensor::from_bytes(dtype, dims, bool_bytes(rs, *n, range));
    if (numpy_int_type(dtype)) {
        return Tensor::from_bytes(dtype, dims, int_bytes(rs, dtype, *n, range));
    }
    return Tensor::from_bytes(dtype, dims, float_bytes(rs, dtype, *n, range));
}

}  // namespace pg::data
