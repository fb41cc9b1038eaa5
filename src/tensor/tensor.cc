#include "tensor/tensor.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "base/aligned.h"
#include "base/error.h"
#include "base/float16.h"
#include "base/float8.h"
#include "base/heap.h"

namespace pg {

namespace {

constexpr uint64_t kMaxElements = uint64_t{1} << 62;

// An owned buffer of n bytes (uninitialized) at a cache line, so that vector loads and stores
// of its contents do not straddle two lines (base/aligned.h).
std::shared_ptr<uint8_t[]> cache_aligned_buffer(uint64_t n) {
    return std::shared_ptr<uint8_t[]>(static_cast<uint8_t*>(aligned_bytes(n)), AlignedFree{});
}

uint64_t checked_bytes(DataType dtype, const std::vector<int64_t>& dims, uint64_t* numel) {
    auto n = checked_numel(dims);
    if (!n) throw Error(ErrorKind::kInvalidInput, "invalid tensor shape " + dims_text(dims));
    *numel = *n;
    if (dtype == DataType::kString) return 0;
    auto b = dtype_storage_bytes(dtype, *n);
    if (!b)
        throw Error(ErrorKind::kUnsupported,
                    "tensors of type " + dtype_name(dtype) + " have no known size");
    return *b;
}

// Refuses a new tensor larger than this machine's memory (or the memory ceiling) before
// allocating it (a hostile shape could only make the run swap or be killed). Strings count their
// std::string objects.
void require_room(DataType dtype, const std::vector<int64_t>& dims, uint64_t numel,
                  uint64_t nbytes) {
    const double bytes = dtype == DataType::kString
                             ? static_cast<double>(numel) * sizeof(std::string)
                             : static_cast<double>(nbytes);
    const double ceiling = static_cast<double>(memory_ceiling());
    // Small tensors skip the check (it reads the machine's size once) unless a ceiling is set.
    if (bytes > 1073741824.0 || (ceiling > 0 && bytes > ceiling))
        require_memory_for(bytes, "a " + dtype_name(dtype) + " tensor of shape " + dims_text(dims));
}

// The alignment typed reads of an element need: its size, a complex number's part's, 1 for
// packed sub-byte types.
uint64_t element_alignment(DataType dtype) {
    const bool complex = dtype == DataType::kComplex64 || dtype == DataType::kComplex128;
    const int bits = dtype == DataType::kString ? 8 : dtype_bits(dtype);
    return std::max(1, (complex ? bits / 2 : bits) / 8);
}

}  // namespace

std::string dims_text(const std::vector<int64_t>& dims) {
    std::string s = "[";
    for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
    return s + "]";
}

std::optional<uint64_t> checked_numel(const std::vector<int64_t>& dims) {
    uint64_t n = 1;
    bool zero = false;
    for (int64_t d : dims) {
        if (d < 0) return std::nullopt;
        if (d == 0) zero = true;
    }
    if (zero) return 0;
    for (int64_t d : dims) {
        if (static_cast<uint64_t>(d) > kMaxElements / n) return std::nullopt;
        n *= static_cast<uint64_t>(d);
    }
    return n;
}

Tensor Tensor::zeros(DataType dtype, std::vector<int64_t> dims) {
    Tensor t;
    t.dtype_ = dtype;
    t.nbytes_ = checked_bytes(dtype, dims, &t.numel_);
    require_room(dtype, dims, t.numel_, t.nbytes_);
    t.dims_ = std::move(dims);
    if (dtype == DataType::kString) {
        t.strings_.resize(t.numel_);
        return t;
    }
    std::shared_ptr<uint8_t[]> buf = cache_aligned_buffer(t.nbytes_);
    std::memset(buf.get(), 0, t.nbytes_);
    t.data_ = buf.get();
    t.owner_ = std::move(buf);
    t.owned_ = true;
    return t;
}

namespace {

std::atomic<bool>& poison_flag() {
    static std::atomic<bool> on{[] {
        const char* v = std::getenv("PG_POISON_UNINITIALIZED");
        return v && std::string(v) == "1";
    }()};
    return on;
}

}  // namespace

void Tensor::set_poison_uninitialized(bool on) {
    poison_flag() = on;
}

Tensor Tensor::uninitialized(DataType dtype, std::vector<int64_t> dims) {
    if (dtype == DataType::kString) return zeros(dtype, std::move(dims));
    Tensor t;
    t.dtype_ = dtype;
    t.nbytes_ = checked_bytes(dtype, dims, &t.numel_);
    require_room(dtype, dims, t.numel_, t.nbytes_);
    t.dims_ = std::move(dims);
    std::shared_ptr<uint8_t[]> buf = cache_aligned_buffer(t.nbytes_);
    if (poison_flag()) std::memset(buf.get(), 0xA5, t.nbytes_);
    t.data_ = buf.get();
    t.owner_ = std::move(buf);
    t.owned_ = true;
    return t;
}

Tensor Tensor::reshaped(std::vector<int64_t> dims) const {
    uint64_t n = 0;
    checked_bytes(dtype_ == DataType::kString ? DataType::kString : DataType::kUInt8, dims, &n);
    if (n != numel_)
        throw Error(ErrorKind::kInvalidInput, "cannot view " + std::to_string(numel_) +
                                                  " elements as shape " + dims_text(dims));
    Tensor t = *this;
    t.dims_ = std::move(dims);
    return t;
}

Tensor Tensor::from_bytes(DataType dtype, std::vector<int64_t> dims, std::string bytes) {
    Tensor t;
    t.dtype_ = dtype;
    t.nbytes_ = checked_bytes(dtype, dims, &t.numel_);
    if (bytes.size() != t.nbytes_)
        throw Error(ErrorKind::kInvalidInput, "tensor of type " + dtype_name(dtype) +
                                                  " and shape " + dims_text(dims) + " needs " +
                                                  std::to_string(t.nbytes_) + " bytes, got " +
                                                  std::to_string(bytes.size()));
    t.dims_ = std::move(dims);
    auto buf = std::make_shared<std::string>(std::move(bytes));
    t.data_ = reinterpret_cast<const uint8_t*>(buf->data());
    t.owner_ = buf;
    t.owned_ = true;
    return t;
}

Tensor Tensor::from_buffer(DataType dtype, std::vector<int64_t> dims,
                           std::shared_ptr<uint8_t[]> buffer, uint64_t size) {
    Tensor t = from_view(dtype, std::move(dims), buffer.get(), size, buffer);
    t.owned_ = true;
    return t;
}

Tensor Tensor::from_view(DataType dtype, std::vector<int64_t> dims, const uint8_t* data,
                         uint64_t size, std::shared_ptr<const void> owner) {
    Tensor t;
    t.dtype_ = dtype;
    t.nbytes_ = checked_bytes(dtype, dims, &t.numel_);
    if (size != t.nbytes_)
        throw Error(ErrorKind::kInvalidInput, "tensor of type " + dtype_name(dtype) +
                                                  " and shape " + dims_text(dims) + " needs " +
                                                  std::to_string(t.nbytes_) + " bytes, got " +
                                                  std::to_string(size));
    t.dims_ = std::move(dims);
    if (reinterpret_cast<uintptr_t>(data) % element_alignment(dtype) != 0) {
        // An .npz member or external data at an odd offset: typed reads of it would be
        // misaligned (undefined behaviour; vector code may fault), so it is copied.
        Tensor copy = uninitialized(dtype, std::move(t.dims_));
        if (size) std::memcpy(copy.mutable_bytes(), data, size);
        return copy;
    }
    t.data_ = data;
    t.owner_ = std::move(owner);
    return t;
}

Tensor Tensor::from_strings(std::vector<int64_t> dims, std::vector<std::string> values) {
    Tensor t;
    t.dtype_ = DataType::kString;
    checked_bytes(DataType::kString, dims, &t.numel_);
    if (values.size() != t.numel_)
        throw Error(ErrorKind::kInvalidInput, "string tensor of shape " + dims_text(dims) +
                                                  " needs " + std::to_string(t.numel_) +
                                                  " strings, got " + std::to_string(values.size()));
    t.dims_ = std::move(dims);
    t.strings_ = std::move(values);
    return t;
}

Tensor Tensor::placeholder(DataType dtype, std::vector<int64_t> dims) {
    Tensor t;
    t.dtype_ = dtype;
    t.nbytes_ = checked_bytes(dtype, dims, &t.numel_);
    t.dims_ = std::move(dims);
    t.placeholder_ = true;
    return t;
}

uint8_t* Tensor::mutable_bytes() {
    if (placeholder_)
        throw Error(ErrorKind::kUnsupported,
                    "a tensor without data (weight-stripped, or external data not loaded) cannot "
                    "be modified");
    if (!owned_ || owner_.use_count() > 1) {
        std::shared_ptr<uint8_t[]> buf = cache_aligned_buffer(nbytes_);
        if (nbytes_) std::memcpy(buf.get(), data_, nbytes_);
        data_ = buf.get();
        owner_ = std::move(buf);
        owned_ = true;
    }
    return const_cast<uint8_t*>(data_);
}

bool Tensor::same_contents(const Tensor& other) const {
    if (dtype_ != other.dtype_ || dims_ != other.dims_ || placeholder_ != other.placeholder_)
        return false;
    if (placeholder_) return true;
    if (is_string()) return strings_ == other.strings_;
    return nbytes_ == other.nbytes_ &&
           (nbytes_ == 0 || std::memcmp(data_, other.data_, nbytes_) == 0);
}

namespace {

// Element i of a float8, float4 or packed integer tensor of 4 or 2 bits (ONNX's packing: low
// bits first), decoded exactly; NaN for any other type.
double small_element_as_double(DataType dt, const uint8_t* bytes, uint64_t i) {
    if (dt == DataType::kFloat8E8M0) return float8e8m0_bits_to_float(bytes[i]);
    const bool small_int = dt == DataType::kUInt4 || dt == DataType::kInt4 ||
                           dt == DataType::kUInt2 || dt == DataType::kInt2;
    const MiniFloatFormat* f = minifloat_format(dt);  // float8 and float4 here
    if (!small_int && !f) return std::nan("");
    const int bits = dtype_bits(dt);
    const uint32_t per_byte = 8 / static_cast<uint32_t>(bits);
    const uint32_t shift = static_cast<uint32_t>(i % per_byte) * static_cast<uint32_t>(bits);
    const uint32_t field = (bytes[i / per_byte] >> shift) & ((1u << bits) - 1);
    if (f) return minifloat_to_double(field, *f);
    if (dt == DataType::kUInt4 || dt == DataType::kUInt2) return field;
    return static_cast<double>(static_cast<int32_t>(field << (32 - bits)) >> (32 - bits));
}

}  // namespace

double Tensor::element_as_double(uint64_t i) const {
    if (placeholder_ || i >= numel_) return std::nan("");
    switch (dtype_) {
        case DataType::kFloat32:
            return data<float>()[i];
        case DataType::kFloat64:
            return data<double>()[i];
        case DataType::kFloat16:
            return half_bits_to_float(data<uint16_t>()[i]);
        case DataType::kBFloat16:
            return bfloat16_bits_to_float(data<uint16_t>()[i]);
        case DataType::kInt8:
            return data<int8_t>()[i];
        case DataType::kUInt8:
            return data<uint8_t>()[i];
        case DataType::kInt16:
            return data<int16_t>()[i];
        case DataType::kUInt16:
            return data<uint16_t>()[i];
        case DataType::kInt32:
            return data<int32_t>()[i];
        case DataType::kUInt32:
            return data<uint32_t>()[i];
        case DataType::kInt64:
            return static_cast<double>(data<int64_t>()[i]);
        case DataType::kUInt64:
            return static_cast<double>(data<uint64_t>()[i]);
        case DataType::kBool:
            return data<uint8_t>()[i] ? 1.0 : 0.0;
        default:
            return small_element_as_double(dtype_, data_, i);
    }
}

}  // namespace pg
