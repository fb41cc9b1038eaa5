// NumPy .npy arrays: encoding exactly as numpy.save writes them (numpy >= 1.24 header layout:
// sorted dict literal, 21 spare spaces for the first dim, padded with spaces to a multiple of
// 64 bytes, "\n" last), and decoding of any v1/v2/v3 file with the header checked against the
// data size before anything is allocated. numpy has no bfloat16 or float8: such tensors are
// stored as float32 (exact) with a warning; see numpy_compatible(). To map another dtype, add a
// row to the descr table in npy.cc.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "tensor/tensor.h"

namespace pg::data {

// numpy's descr string for a dtype ("<f4", "|b1"); nullopt when numpy has none.
std::optional<std::string> npy_descr(DataType dtype);

// `t` itself when numpy can hold its dtype; bfloat16 and float8 tensors converted to float32
// (exact), logging a warning that names `name`. Throws kUnsupported for other dtypes.
Tensor numpy_compatible(const Tensor& t, const std::string& name);

// The inverse of numpy_compatible for a value the model takes as `want`: a float32 `t` for a
// bfloat16, float8 or float4 input converted to `want` (round to nearest even; NaN and infinities
// as Cast without saturation), logging that it was and warning when a value was not exact.
// Anything else is returned as it is.
Tensor from_numpy_compatible(const Tensor& t, DataType want, const std::string& name);

// The bytes numpy.save would write for `t` (its dtype must have an npy_descr).
std::string npy_encode(const Tensor& t);

// Decodes .npy bytes. `what` names the source in messages. With `owner`, a little-endian
// array is returned as a view of `data` kept alive by `owner`; otherwise the data is copied.
// Throws kInvalidInput for malformed or lying headers, kUnsupported for fortran_order or
// dtypes we do not map.
Tensor npy_decode(const uint8_t* data, uint64_t size, const std::string& what,
                  std::shared_ptr<const void> owner = nullptr);

// True when the bytes start with the .npy magic.
bool is_npy(const uint8_t* data, uint64_t size);

// Reads / writes (atomically) one .npy file.
Tensor load_npy(const std::string& path);
void save_npy(const std::string& path, const Tensor& t);

}  // namespace pg::data
