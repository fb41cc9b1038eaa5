// NumPy .npy encoding and hostile-file-safe decoding: see npy.h.
#include "data/npy.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/error.h"
#include "base/float16.h"
#include "base/float8.h"
#include "base/fs.h"
#include "base/log.h"
#include "ops/cast.h"

namespace pg::data {

namespace {

struct DescrRow {
    DataType dtype;
    const char* descr;  // as numpy writes it
};

constexpr DescrRow kDescrTable[] = {
    {DataType::kFloat64, "<f8"},   {DataType::kFloat32, "<f4"},     {DataType::kFloat16, "<f2"},
    {DataType::kInt8, "|i1"},      {DataType::kInt16, "<i2"},       {DataType::kInt32, "<i4"},
    {DataType::kInt64, "<i8"},     {DataType::kUInt8, "|u1"},       {DataType::kUInt16, "<u2"},
    {DataType::kUInt32, "<u4"},    {DataType::kUInt64, "<u8"},      {DataType::kBool, "|b1"},
    {DataType::kComplex64, "<c8"}, {DataType::kComplex128, "<c16"},
};

constexpr char kMagic[] = "\x93NUMPY";
constexpr uint64_t kMaxHeaderBytes = 1u << 20;  // numpy refuses headers past 10000 by default

// Python's repr of a shape tuple: "()", "(3,)", "(1, 2)".
std::string py_tuple(const std::vector<int64_t>& dims) {
    if (dims.size() == 1) return "(" + std::to_string(dims[0]) + ",)";
    std::string s = "(";
    for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
    return s + ")";
}

// numpy's _write_array_header + _wrap_header for version 1.0 (2.0 past 65535 bytes).
std::string npy_header(const std::string& descr, const std::vector<int64_t>& dims) {
    std::string h =
        "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + py_tuple(dims) + ", }";
    if (!dims.empty()) h.append(21 - std::to_string(dims[0]).size(), ' ');
    const bool v2 = h.size() + 1 + 10 > 65535;
    const size_t prefix = v2 ? 12 : 10;
    const size_t hlen = h.size() + 1;
    const size_t pad = 64 - (prefix + hlen) % 64;
    h.append(pad, ' ');
    h += '\n';
    std::string out(kMagic, 6);
    out += v2 ? '\x02' : '\x01';
    out += '\0';
    const uint32_t len = static_cast<uint32_t>(h.size());
    for (size_t i = 0; i < (v2 ? 4u : 2u); ++i) out += static_cast<char>((len >> (8 * i)) & 0xff);
    return out + h;
}

Tensor to_float32(const Tensor& t) {
    std::vector<float> v(t.numel());
    for (uint64_t i = 0; i < t.numel(); ++i) v[i] = static_cast<float>(t.element_as_double(i));
    std::string bytes(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
    return Tensor::from_bytes(DataType::kFloat32, t.dims(), std::move(bytes));
}

}  // namespace

std::optional<std::string> npy_descr(DataType dtype) {
    for (const auto& row : kDescrTable) {
        if (row.dtype == dtype) return row.descr;
    }
    return std::nullopt;
}

Tensor numpy_compatible(const Tensor& t, const std::string& name) {
    if (npy_descr(t.dtype())) return t;
    if (dtype_is_float(t.dtype()) && dtype_bits(t.dtype()) <= 16 && t.has_data()) {
        log_warning("Tensor: {} | numpy has no {} type; storing it as float32 (exact values).",
                    name, dtype_name(t.dtype()));
        return to_float32(t);
    }
    throw Error(ErrorKind::kUnsupported, "tensor '" + name + "' has dtype " +
                                             dtype_name(t.dtype()) +
                                             ", which NumPy files cannot hold");
}

namespace {

bool same_value(double a, double b) {
    return a == b || (std::isnan(a) && std::isnan(b));
}

}  // namespace

Tensor from_numpy_compatible(const Tensor& t, DataType want, const std::string& name) {
    const bool small = dtype_is_float(want) && dtype_bits(want) <= 16 && !npy_descr(want);
    if (!small || t.dtype() != DataType::kFloat32 || !t.has_data()) return t;
    const Tensor out = ops::cast_to_narrow(t, want, {false, E8M0Rounding::kNearest});
    uint64_t inexact = 0;
    for (uint64_t i = 0; i < t.numel(); ++i)
        inexact += !same_value(out.element_as_double(i), t.element_as_double(i));
    log_info(
        "Tensor: {} | float32 values read as {}, the model's type (NumPy files hold it as "
        "float32).",
        name, dtype_name(want));
    if (inexact)
        log_warning("Tensor: {} | {} of {} values are not exact in {} and were rounded.", name,
                    inexact, t.numel(), dtype_name(want));
    return out;
}

std::string npy_encode(const Tensor& t) {
    const auto descr = npy_descr(t.dtype());
    if (!descr || !t.has_data()) {
        throw Error(ErrorKind::kUnsupported,
                    "cannot write a " + dtype_name(t.dtype()) + " tensor as .npy");
    }
    std::string out = npy_header(*descr, t.dims());
    out.append(reinterpret_cast<const char*>(t.bytes()), t.nbytes());
    return out;
}

bool is_npy(const uint8_t* data, uint64_t size) {
    return size >= 6 && std::memcmp(data, kMagic, 6) == 0;
}

Tensor load_npy(const std::string& path) {
    auto file = MappedFile::open(path);
    return with_context("while reading '" + path + "'",
                        [&] { return npy_decode(file->data(), file->size(), path, file); });
}

void save_npy(const std::string& path, const Tensor& t) {
    const std::string bytes = npy_encode(numpy_compatible(t, base_name(path)));
    AtomicFile f(path);
    f.write(bytes);
    f.commit();
}

}  // namespace pg::data
