// Tensor: a dtype, a shape and the bytes behind them. The bytes are shared and immutable once
// built (a slice of a memory-mapped file, or an owned buffer); mutable_bytes() copies on write.
// Sub-byte types (INT4, UINT4, FLOAT4E2M1, INT2, UINT2) are stored packed as ONNX packs them,
// low bits first. STRING tensors hold a vector of strings instead of bytes.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/dtype.h"

namespace pg {

// Product of dims, or nullopt if a dim is negative or the product overflows 2^62.
std::optional<uint64_t> checked_numel(const std::vector<int64_t>& dims);
// dims as "[2, 3]" (errors).
std::string dims_text(const std::vector<int64_t>& dims);

class Tensor {
  public:
    Tensor() = default;

    // A zero-filled tensor (empty strings for STRING). Throws kInvalidInput on bad dims.
    static Tensor zeros(DataType dtype, std::vector<int64_t> dims);
    // A tensor whose storage is allocated but not initialized, for kernels that write every
    // element (STRING tensors get empty strings). With poisoning on (set_poison_uninitialized,
    // or the environment variable PG_POISON_UNINITIALIZED=1) the bytes are filled with 0xA5 so
    // that elements a kernel leaves unwritten show up in tests.
    static Tensor uninitialized(DataType dtype, std::vector<int64_t> dims);
    // Turns poisoning of uninitialized() storage on or off (process-wide).
    static void set_poison_uninitialized(bool on);
    // Takes ownership of `bytes`, which must hold exactly storage_bytes(dtype, numel) bytes.
    static Tensor from_bytes(DataType dtype, std::vector<int64_t> dims, std::string bytes);
    // Takes ownership of a buffer of `size` bytes, which must be storage_bytes(dtype, numel).
    static Tensor from_buffer(DataType dtype, std::vector<int64_t> dims,
                              std::shared_ptr<uint8_t[]> buffer, uint64_t size);
    // A view of `size` bytes at `data` kept alive by `owner`; a copy if misaligned for dtype.
    static Tensor from_view(DataType dtype, std::vector<int64_t> dims, const uint8_t* data,
                            uint64_t size, std::shared_ptr<const void> owner);
    static Tensor from_strings(std::vector<int64_t> dims, std::vector<std::string> values);
    // A tensor whose values are not available (weight-stripped models, external data not
    // loaded): dtype and dims only. has_data() is false; reading its bytes is an error.
    static Tensor placeholder(DataType dtype, std::vector<int64_t> dims);
    // A scalar or 1-D tensor from typed values (test and builder helper).
    template <typename T>
    static Tensor from_values(DataType dtype, std::vector<int64_t> dims, const std::vector<T>& v);

    // The same elements under new dims (same element count; kInvalidInput otherwise), sharing
    // this tensor's storage (no copy).
    Tensor reshaped(std::vector<int64_t> dims) const;

    DataType dtype() const { return dtype_; }
    const std::vector<int64_t>& dims() const { return dims_; }
    int64_t rank() const { return static_cast<int64_t>(dims_.size()); }
    uint64_t numel() const { return numel_; }
    // Bytes of storage (0 for STRING tensors).
    uint64_t nbytes() const { return nbytes_; }
    const uint8_t* bytes() const { return data_; }
    template <typename T>
    const T* data() const {
        return reinterpret_cast<const T*>(data_);
    }
    // Writable bytes; copies the storage first if it is shared or a view.
    uint8_t* mutable_bytes();
    const std::vector<std::string>& strings() const { return strings_; }
    bool is_string() const { return dtype_ == DataType::kString; }
    // False for placeholders (see placeholder()).
    bool has_data() const { return !placeholder_; }
    // True when both have the same dtype, dims and bytes (or strings).
    bool same_contents(const Tensor& other) const;
    // Element i as double, exactly: floats (float8 and float4 formats too), integers (the packed
    // 4- and 2-bit ones too), bool; NaN for types without a numeric view (strings, complex).
    double element_as_double(uint64_t i) const;

  private:
    // The small members last: no padding between them (96 bytes; the IR and every runtime value
    // hold one).
    std::vector<int64_t> dims_;
    uint64_t numel_ = 0;
    uint64_t nbytes_ = 0;
    const uint8_t* data_ = nullptr;
    std::shared_ptr<const void> owner_;
    std::vector<std::string> strings_;
    DataType dtype_ = DataType::kUndefined;
    bool owned_ = false;
    bool placeholder_ = false;
};

template <typename T>
Tensor Tensor::from_values(DataType dtype, std::vector<int64_t> dims, const std::vector<T>& v) {
    std::string bytes(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
    return from_bytes(dtype, std::move(dims), std::move(bytes));
}

}  // namespace pg
