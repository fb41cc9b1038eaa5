// Miscellaneous newer ONNX ops: Swish (opset 24), TensorScatter (24, a KV-cache update),
// BitCast (26, reinterprets element bytes) and CumProd (26). Float16/bfloat16 math goes through
// half_via_float; TensorScatter and BitCast move bytes, so they take every fixed-size type.
#include <cmath>
#include <cstring>
#include <type_traits>

#include "ir/graph.h"
#include "ops/dispatch.h"
#include "ops/half.h"
#include "ops/op_table.h"
#include "ops/tensor_util.h"

namespace pg::ops {

namespace {

int64_t product(const std::vector<int64_t>& d, size_t from, size_t to) {
    int64_t p = 1;
    for (size_t i = from; i < to; ++i) p *= d[i];
    return p;
}

// Bytes of one element; sub-byte and string types are unsupported.
size_t element_bytes(DataType dt, const char* op) {
    const int bits = dtype_bits(dt);
    if (bits < 8 || bits % 8 != 0) unsupported_type(op, dt);
    return static_cast<size_t>(bits / 8);
}

// Swish(x) = x * sigmoid(alpha * x).
KernelFn make_swish(const Attrs& a, int64_t) {
    const double alpha = a.get_float("alpha", 1.0f);
    return half_via_float([alpha](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        dispatch_float(x.dtype(), "Swish", [&]<typename T>() {
            Tensor out = Tensor::zeros(x.dtype(), x.dims());
            T* y = reinterpret_cast<T*>(out.mutable_bytes());
            const T* src = x.data<T>();
            for (uint64_t i = 0; i < x.numel(); ++i) {
                const double v = static_cast<double>(src[i]);
                y[i] = static_cast<T>(v / (1.0 + std::exp(-alpha * v)));
            }
            ctx.set_output(0, std::move(out));
        });
    });
}

// TensorScatter: writes `update` into a copy of `past_cache` along `axis`, at per-batch offsets
// write_indices[b] (default 0); mode "circular" wraps offsets modulo the cache length.
KernelFn make_tensor_scatter(const Attrs& a, int64_t) {
    const std::string mode = a.get_string("mode", "linear");
    const int64_t axis_attr = a.get_int("axis", -2);
    if (mode != "linear" && mode != "circular") fail("TensorScatter: unknown mode '" + mode + "'");
    return [=](KernelContext& ctx) {
        const Tensor& cache = ctx.input(0);
        const Tensor& upd = ctx.input(1);
        const auto& cd = cache.dims();
        const auto& ud = upd.dims();
        const size_t axis =
            static_cast<size_t>(normalize_axis(axis_attr, cache.rank(), "TensorScatter"));
        if (axis == 0) fail("TensorScatter: axis must not be the batch axis");
        if (upd.dtype() != cache.dtype() || ud.size() != cd.size())
            fail("TensorScatter: update must match past_cache in type and rank");
        for (size_t i = 0; i < cd.size(); ++i)
            if (i == axis ? ud[i] > cd[i] : ud[i] != cd[i])
                fail("TensorScatter: update shape is not compatible with past_cache");
        std::vector<int64_t> idx(static_cast<size_t>(cd[0]), 0);
        if (ctx.has_input(2)) idx = to_int64_vector(ctx.input(2), "TensorScatter write_indices");
        if (static_cast<int64_t>(idx.size()) != cd[0])
            fail("TensorScatter: write_indices must have one entry per batch");
        const size_t row = element_bytes(cache.dtype(), "TensorScatter") *
                           static_cast<size_t>(product(cd, axis + 1, cd.size()));
        const int64_t per_batch = product(cd, 1, axis), max_len = cd[axis], len = ud[axis];
        Tensor out = copy_tensor(cache);
        uint8_t* dst = out.mutable_bytes();
        for (int64_t p = 0; p < cd[0] * per_batch; ++p) {
            for (int64_t s = 0; s < len; ++s) {
                int64_t pos = idx[static_cast<size_t>(p / per_batch)] + s;
                if (mode == "circular") pos = ((pos % max_len) + max_len) % max_len;
                if (pos < 0 || pos >= max_len)
                    fail("TensorScatter: write index out of range of the cache");
                std::memcpy(dst + static_cast<size_t>(p * max_len + pos) * row,
                            upd.bytes() + static_cast<size_t>(p * len + s) * row, row);
            }
        }
        ctx.set_output(0, std::move(out));
    };
}

// The output shape of a BitCast from `in` bytes per element to `out` bytes per element.
std::vector<int64_t> bitcast_dims(std::vector<int64_t> d, size_t in, size_t out) {
    if (in == out) return d;
    if (d.empty()) {
        if (in < out) fail("BitCast: a scalar cannot be cast to a wider type");
        return {static_cast<int64_t>(in / out)};
    }
    if (in > out) {
        d.back() *= static_cast<int64_t>(in / out);
        return d;
    }
    const auto ratio = static_cast<int64_t>(out / in);
    if (d.back() % ratio != 0)
        fail("BitCast: the last dimension must be divisible by the element size ratio");
    d.back() /= ratio;
    return d;
}

KernelFn make_bitcast(const Attrs& a, int64_t) {
    const auto to = static_cast<DataType>(a.require_int("to"));
    return [to](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        const size_t in = element_bytes(x.dtype(), "BitCast"), out = element_bytes(to, "BitCast");
        std::string bytes(reinterpret_cast<const char*>(x.bytes()), x.nbytes());
        ctx.set_output(0,
                       Tensor::from_bytes(to, bitcast_dims(x.dims(), in, out), std::move(bytes)));
    };
}

// a * b; integers wrap around like numpy's.
template <typename T>
T wrap_mul(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<T>;
        return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
    } else {
        return a * b;
    }
}

template <typename T>
void cumprod_line(const T* x, T* y, int64_t n, int64_t stride, bool exclusive, bool reverse) {
    T acc = T(1);
    for (int64_t j = 0; j < n; ++j) {
        const int64_t p = (reverse ? n - 1 - j : j) * stride;
        if (exclusive) y[p] = acc;
        acc = wrap_mul(acc, x[p]);
        if (!exclusive) y[p] = acc;
    }
}

KernelFn make_cumprod(const Attrs& a, int64_t) {
    const bool exclusive = a.get_flag("exclusive", false), reverse = a.get_flag("reverse", false);
    return half_via_float([=](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        if (ctx.input(1).rank() != 0) fail("CumProd: axis must be a scalar");
        const auto axis = static_cast<size_t>(
            normalize_axis(scalar_int64(ctx.input(1), "CumProd"), x.rank(), "CumProd"));
        const int64_t n = x.dims()[axis];
        const int64_t inner = product(x.dims(), axis + 1, x.dims().size());
        const int64_t lines = n ? static_cast<int64_t>(x.numel()) / n : 0;
        Tensor out = Tensor::zeros(x.dtype(), x.dims());
        dispatch_numeric(x.dtype(), "CumProd", [&]<typename T>() {
            const T* src = x.data<T>();
            T* dst = reinterpret_cast<T*>(out.mutable_bytes());
            for (int64_t l = 0; l < lines; ++l) {
                const int64_t off = (l / inner) * n * inner + l % inner;
                cumprod_line(src + off, dst + off, n, inner, exclusive, reverse);
            }
        });
        ctx.set_output(0, std::move(out));
    });
}

}  // namespace

void register_misc_math_ops(OpTable& t) {
    using C = NumericContract;
    t.add("Swish", 24, C::kApproximate, make_swish);
    t.add("TensorScatter", 24, C::kExact, make_tensor_scatter);
    t.add("BitCast", 26, C::kExact, make_bitcast);
    t.add("CumProd", 26, C::kRounding, make_cumprod);
}

}  // namespace pg::ops
