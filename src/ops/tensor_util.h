// Small tensor helpers shared by kernels: axis normalization, reading scalars and index lists,
// byte-level stacking / slicing along an axis (any fixed-size type and strings), and mapping a
// float32 array function over a tensor in parallel chunks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace pg {
class ThreadPool;
}

namespace pg::ops {

// `axis` in [-rank, rank) mapped to [0, rank); kInvalidInput otherwise. `what` names the op.
int64_t normalize_axis(int64_t axis, int64_t rank, const char* what);
// Every axis of `axes` normalized; kInvalidInput when one is out of range or two name the same
// axis (ONNX leaves a repeated axis undefined; ONNX Runtime refuses it).
std::vector<int64_t> normalize_axes(const std::vector<int64_t>& axes, int64_t rank,
                                    const char* what);
// Reshape's target shape for input dims `in` (tensor_shape.cc): 0 copies the input dim (unless
// allowzero), one -1 is inferred; kInvalidInput when the counts do not match.
std::vector<int64_t> reshape_dims(const std::vector<int64_t>& in, std::vector<int64_t> shape,
                                  bool allowzero);
// The values of an int32/int64 tensor as int64.
std::vector<int64_t> to_int64_vector(const Tensor& t, const char* what);
// A scalar (or one-element) tensor's value as double; kInvalidInput if it holds != 1 element.
double scalar_value(const Tensor& t, const char* what);
// Element i of t as int64: integer tensors exactly, floats truncated toward zero; kInvalidInput
// for NaN or a value outside int64 (a uint64 above 2^63 - 1, a float of magnitude 2^63 or more).
int64_t element_int64(const Tensor& t, uint64_t i, const char* what);
// A scalar (or one-element) tensor's value as element_int64 reads it; kInvalidInput for != 1
// element.
int64_t scalar_int64(const Tensor& t, const char* what);
// The element count of an output of `dims`, checked before a kernel allocates for it:
// kInvalidInput ("<prefix>an output of shape [..]<suffix> ...") when a dim is negative, the
// count overflows, or bytes_per_element bytes an element would not fit this machine's memory.
uint64_t checked_output_count(const std::vector<int64_t>& dims, double bytes_per_element,
                              const char* prefix, const char* suffix);
// A zeroed scratch of doubles for an output of `dims` (kernels computing in double before the
// output's type), checked_output_count's refusals first (16 bytes an element: the scratch and
// the output).
std::vector<double> double_scratch(const std::vector<int64_t>& dims, const char* what);
// Scalar bool / int tensors.
Tensor make_scalar_bool(bool v);
Tensor make_scalar_int64(int64_t v);
// Stacks same-shaped tensors along a new axis `axis` (0 <= axis <= rank).
Tensor stack_tensors(const std::vector<Tensor>& items, int64_t axis);
// Concatenates tensors along an existing axis (kInvalidInput unless they have one type and the
// same dims but along it).
Tensor concat_tensors(const std::vector<Tensor>& items, int64_t axis);
// The slice `index` of `t` along `axis`, with that axis removed. An axis or index out of range
// is kInternal: callers check their inputs first.
Tensor select_along(const Tensor& t, int64_t axis, int64_t index);
// Elements [start, start + length) of `t` along `axis` (the axis is kept).
Tensor narrow_along(const Tensor& t, int64_t axis, int64_t start, int64_t length);
// Same dtype and dims, new owned buffer with the same bytes (or strings).
Tensor copy_tensor(const Tensor& t);

// A float32 tensor shaped like x with fn(x values, out values, count) applied over chunks of
// 16384 elements, split over `pool` (when set) for tensors of more than one chunk.
Tensor map_float32(const Tensor& x, void (*fn)(const float*, float*, int64_t), ThreadPool* pool);

}  // namespace pg::ops
