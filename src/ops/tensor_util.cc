#include "ops/tensor_util.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "base/heap.h"
#include "base/thread_pool.h"
#include "ops/gemm_kernels.h"
#include "ops/kernel.h"

namespace pg::ops {

namespace {

// Product of dims[from, to).
int64_t span(const std::vector<int64_t>& dims, size_t from, size_t to) {
    int64_t n = 1;
    for (size_t i = from; i < to; ++i) n *= dims[i];
    return n;
}

size_t element_size(const Tensor& t, const char* what) {
    const int bits = dtype_bits(t.dtype());
    if (t.is_string()) return 0;
    if (bits < 8)
        unsupported(std::string(what) + ": sub-byte element types are not supported here");
    return static_cast<size_t>(bits / 8);
}

// Copies `rows` blocks of `block` elements from src (stride src_stride) to dst (stride dst_stride).
void copy_blocks(const Tensor& src, int64_t src_off, int64_t src_stride, Tensor& dst,
                 std::vector<std::string>* dst_str, int64_t dst_off, int64_t dst_stride,
                 int64_t rows, int64_t block, size_t esize) {
    for (int64_t r = 0; r < rows; ++r) {
        const int64_t s = src_off + r * src_stride, d = dst_off + r * dst_stride;
        if (src.is_string()) {
            for (int64_t k = 0; k < block; ++k)
                (*dst_str)[static_cast<size_t>(d + k)] = src.strings()[static_cast<size_t>(s + k)];
        } else if (block > 0) {
            std::memcpy(dst.mutable_bytes() + static_cast<size_t>(d) * esize,
                        src.bytes() + static_cast<size_t>(s) * esize,
                        static_cast<size_t>(block) * esize);
        }
    }
}

}  // namespace

int64_t normalize_axis(int64_t axis, int64_t rank, const char* what) {
    if (axis < -rank || axis >= rank)
        fail(std::string(what) + ": axis " + std::to_string(axis) + " is out of range for rank " +
             std::to_string(rank));
    return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> normalize_axes(const std::vector<int64_t>& axes, int64_t rank,
                                    const char* what) {
    std::vector<int64_t> out;
    out.reserve(axes.size());
    for (const int64_t a : axes) {
        const int64_t n = normalize_axis(a, rank, what);
        if (std::find(out.begin(), out.end(), n) != out.end())
            fail(std::string(what) + ": axis " + std::to_string(n) + " is listed twice");
        out.push_back(n);
    }
    return out;
}

std::vector<int64_t> to_int64_vector(const Tensor& t, const char* what) {
    std::vector<int64_t> out(t.numel());
    if (t.dtype() == DataType::kInt64) {
        if (!out.empty()) std::memcpy(out.data(), t.bytes(), t.numel() * 8);  // not with null
    } else if (t.dtype() == DataType::kInt32) {
        for (uint64_t i = 0; i < t.numel(); ++i) out[i] = t.data<int32_t>()[i];
    } else {
        fail(std::string(what) + ": expected an int32 or int64 tensor, got " +
             dtype_name(t.dtype()));
    }
    return out;
}

double scalar_value(const Tensor& t, const char* what) {
    if (t.numel() != 1)
        fail(std::string(what) + ": expected a single value, got " + std::to_string(t.numel()));
    return t.element_as_double(0);
}

int64_t element_int64(const Tensor& t, uint64_t i, const char* what) {
    switch (t.dtype()) {  // the wide integer types exactly (through double, 2^63 - 1 became -2^63)
        case DataType::kInt64:
            return t.data<int64_t>()[i];
        case DataType::kUInt64: {
            const uint64_t v = t.data<uint64_t>()[i];
            if (v > static_cast<uint64_t>(INT64_MAX))
                fail(std::string(what) + ": " + std::to_string(v) + " is beyond int64");
            return static_cast<int64_t>(v);
        }
        default:
            break;
    }
    const double v = t.element_as_double(i);  // exact for the narrower integers and bool
    // -2^63 is int64's lowest value, 2^63 the first past its highest (casting it is undefined).
    if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0))
        fail(std::string(what) + ": " + std::to_string(v) + " is not a value of int64");
    return static_cast<int64_t>(v);
}

int64_t scalar_int64(const Tensor& t, const char* what) {
    if (t.numel() != 1)
        fail(std::string(what) + ": expected a single value, got " + std::to_string(t.numel()));
    return element_int64(t, 0, what);
}

Tensor make_scalar_bool(bool v) {
    return Tensor::from_values<uint8_t>(DataType::kBool, {}, {v ? uint8_t{1} : uint8_t{0}});
}
Tensor make_scalar_int64(int64_t v) {
    return Tensor::from_values<int64_t>(DataType::kInt64, {}, {v});
}

Tensor stack_tensors(const std::vector<Tensor>& items, int64_t axis) {
    if (items.empty()) fail("cannot stack an empty list of tensors");
    const auto& d0 = items[0].dims();
    std::vector<int64_t> dims = d0;
    dims.insert(dims.begin() + axis, static_cast<int64_t>(items.size()));
    for (const auto& t : items)
        if (t.dims() != d0 || t.dtype() != items[0].dtype())
            fail("stacked tensors must have the same type and shape");
    std::vector<Tensor> expanded;
    for (const auto& t : items) {
        std::vector<int64_t> e = d0;
        e.insert(e.begin() + axis, 1);
        expanded.push_back(t.is_string()
                               ? Tensor::from_strings(e, t.strings())
                               : Tensor::from_view(t.dtype(), e, t.bytes(), t.nbytes(), nullptr));
    }
    Tensor out = concat_tensors(expanded, axis);
    return out;
}

Tensor concat_tensors(const std::vector<Tensor>& items, int64_t axis) {
    if (items.empty()) fail("cannot concatenate an empty list of tensors");
    const size_t a = static_cast<size_t>(axis);
    std::vector<int64_t> base = items[0].dims();  // every item's dims, but 0 along the axis
    base[a] = 0;
    std::vector<int64_t> dims = base;
    for (const auto& t : items) {
        std::vector<int64_t> d = t.dims();
        const bool same_rank = t.dtype() == items[0].dtype() && d.size() == base.size();
        if (same_rank) d[a] = 0;
        if (!same_rank || d != base)
            fail("cannot concatenate " + dtype_name(items[0].dtype()) + " " +
                 dims_text(items[0].dims()) + " and " + dtype_name(t.dtype()) + " " +
                 dims_text(t.dims()) + " along axis " + std::to_string(axis));
        dims[a] += t.dims()[a];
    }
    Tensor out = Tensor::zeros(items[0].dtype(), dims);
    std::vector<std::string> strings(out.numel());
    const size_t esize = element_size(out, "concat");
    const int64_t outer = span(dims, 0, static_cast<size_t>(axis));
    const int64_t out_row = span(dims, static_cast<size_t>(axis), dims.size());
    int64_t offset = 0;
    for (const auto& t : items) {
        const int64_t row = span(t.dims(), static_cast<size_t>(axis), t.dims().size());
        copy_blocks(t, 0, row, out, &strings, offset, out_row, outer, row, esize);
        offset += row;
    }
    return out.is_string() ? Tensor::from_strings(dims, std::move(strings)) : out;
}

Tensor select_along(const Tensor& t, int64_t axis, int64_t index) {
    std::vector<int64_t> dims = t.dims();
    if (axis < 0 || axis >= t.rank() || index < 0 || index >= dims[static_cast<size_t>(axis)])
        throw Error(ErrorKind::kInternal, "select_along: index " + std::to_string(index) +
                                              " on axis " + std::to_string(axis) + " of " +
                                              dims_text(dims));  // the caller's to check
    const int64_t n = dims[static_cast<size_t>(axis)];
    dims.erase(dims.begin() + axis);
    Tensor out = Tensor::zeros(t.dtype(), dims);
    std::vector<std::string> strings(out.numel());
    const size_t esize = element_size(t, "select");
    const int64_t outer = span(t.dims(), 0, static_cast<size_t>(axis));
    const int64_t inner = span(t.dims(), static_cast<size_t>(axis) + 1, t.dims().size());
    copy_blocks(t, index * inner, n * inner, out, &strings, 0, inner, outer, inner, esize);
    return out.is_string() ? Tensor::from_strings(dims, std::move(strings)) : out;
}

Tensor narrow_along(const Tensor& t, int64_t axis, int64_t start, int64_t length) {
    std::vector<int64_t> dims = t.dims();
    const int64_t n = dims[static_cast<size_t>(axis)];
    if (start < 0 || length < 0 || start + length > n) fail("slice out of range");
    dims[static_cast<size_t>(axis)] = length;
    Tensor out = Tensor::zeros(t.dtype(), dims);
    std::vector<std::string> strings(out.numel());
    const size_t esize = element_size(t, "narrow");
    const int64_t outer = span(t.dims(), 0, static_cast<size_t>(axis));
    const int64_t inner = span(t.dims(), static_cast<size_t>(axis) + 1, t.dims().size());
    copy_blocks(t, start * inner, n * inner, out, &strings, 0, length * inner, outer,
                length * inner, esize);
    return out.is_string() ? Tensor::from_strings(dims, std::move(strings)) : out;
}

Tensor copy_tensor(const Tensor& t) {
    if (t.is_string()) return Tensor::from_strings(t.dims(), t.strings());
    if (t.nbytes() == 0) return Tensor::zeros(t.dtype(), t.dims());
    return Tensor::from_bytes(t.dtype(), t.dims(),
                              std::string(reinterpret_cast<const char*>(t.bytes()), t.nbytes()));
}

Tensor map_float32(const Tensor& x, void (*fn)(const float*, float*, int64_t), ThreadPool* pool) {
    constexpr int64_t kChunk = 16384;
    Tensor out = Tensor::uninitialized(DataType::kFloat32, x.dims());
    float* dst = reinterpret_cast<float*>(out.mutable_bytes());
    const float* src = x.data<float>();
    auto body = [&](int64_t b, int64_t e) { fn(src + b, dst + b, e - b); };
    const auto n = static_cast<int64_t>(x.numel());
    run_affine(pool, n, kChunk, body);
    return out;
}

uint64_t checked_output_count(const std::vector<int64_t>& dims, double bytes_per_element,
                              const char* prefix, const char* suffix) {
    const std::optional<uint64_t> n = checked_numel(dims);
    const auto output = [&] {
        return std::string(prefix) + "an output of shape " + dims_text(dims) + suffix;
    };
    if (!n) fail(output() + " has a negative or too large size");
    if (*n > (uint64_t{1} << 26))  // the check reads the machine's size once; small ones skip it
        require_memory_for(static_cast<double>(*n) * bytes_per_element, output());
    return *n;
}

std::vector<double> double_scratch(const std::vector<int64_t>& dims, const char* what) {
    const std::string prefix = std::string(what) + ": ";
    return std::vector<double>(
        static_cast<size_t>(checked_output_count(dims, 16.0, prefix.c_str(), "")));
}

}  // namespace pg::ops
