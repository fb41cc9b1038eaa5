// Pooling: MaxPool, AveragePool, LpPool, GlobalMaxPool, GlobalAveragePool, GlobalLpPool,
// MaxUnpool, MaxRoiPool. Windows use the geometry of conv_kernels.h (up to 3 spatial axes);
// each (image, channel) plane is independent and the planes are split over the thread pool.
// Float reductions accumulate in T (float32 for float32).
#include <cmath>
#include <limits>

#include "ir/graph.h"
#include "ops/conv_kernels.h"
#include "ops/dispatch.h"
#include "ops/gemm_kernels.h"
#include "ops/half.h"
#include "ops/op_table.h"
#include "ops/pool_kernels.h"
#include "ops/tensor_util.h"

namespace pg::ops {

namespace {

using Dims = std::vector<int64_t>;

// The window of a pooling op over X (N, C, spatial...).
Window pool_window(const WindowAttrs& wa, const Tensor& x, const char* op) {
    if (x.rank() < 3) fail(std::string(op) + ": X must have rank >= 3");
    if (wa.kernel_shape.empty()) fail(std::string(op) + ": kernel_shape is required");
    const Dims spatial(x.dims().begin() + 2, x.dims().end());
    return make_window(wa, spatial, wa.kernel_shape, op);
}

Dims pooled_dims(const Tensor& x, const Window& g) {
    Dims out{x.dims()[0], x.dims()[1]};
    for (int i = 3 - g.nd; i < 3; ++i) out.push_back(g.out[i]);
    return out;
}

KernelFn make_max_pool(const Attrs& at, int64_t) {
    const WindowAttrs wa = read_window_attrs(at);
    const bool col_major = at.get_flag("storage_order", false);
    return half_via_float([wa, col_major](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        const Window g = pool_window(wa, x, "MaxPool");
        Tensor y = Tensor::uninitialized(x.dtype(), pooled_dims(x, g));
        const bool want_idx = ctx.num_outputs() > 1;
        Tensor idx = Tensor::zeros(DataType::kInt64, want_idx ? y.dims() : Dims{0});
        if (x.dtype() == DataType::kFloat32 && !want_idx) {
            max_pool_fast<float>(g, x.dims()[0] * x.dims()[1], x.data<float>(),
                                 reinterpret_cast<float*>(y.mutable_bytes()), ctx.pool());
            return ctx.set_output(0, std::move(y));
        }
        dispatch_numeric(x.dtype(), "MaxPool", [&]<typename T>() {
            max_pool<T>(g, x.dims()[0] * x.dims()[1], x.data<T>(),
                        reinterpret_cast<T*>(y.mutable_bytes()),
                        want_idx ? reinterpret_cast<int64_t*>(idx.mutable_bytes()) : nullptr,
                        col_major, ctx.pool());
        });
        ctx.set_output(0, std::move(y));
        if (want_idx) ctx.set_output(1, std::move(idx));
    });
}

KernelFn make_average_pool(const Attrs& at, int64_t) {
    const WindowAttrs wa = read_window_attrs(at);
    const bool include_pad = at.get_flag("count_include_pad", false);
    return half_via_float([wa, include_pad](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        const Window g = pool_window(wa, x, "AveragePool");
        Tensor y = Tensor::uninitialized(x.dtype(), pooled_dims(x, g));
        if (x.dtype() == DataType::kFloat32) {
            avg_pool_fast<float>(g, x.dims()[0] * x.dims()[1], x.data<float>(),
                                 reinterpret_cast<float*>(y.mutable_bytes()), include_pad,
                                 ctx.pool());
            return ctx.set_output(0, std::move(y));
        }
        dispatch_float(x.dtype(), "AveragePool", [&]<typename T>() {
            avg_pool<T>(g, x.dims()[0] * x.dims()[1], x.data<T>(),
                        reinterpret_cast<T*>(y.mutable_bytes()), include_pad, ctx.pool());
        });
        ctx.set_output(0, std::move(y));
    });
}

KernelFn make_lp_pool(const Attrs& at, int64_t opset) {
    const WindowAttrs wa = read_window_attrs(at);
    const double p = opset < 2 ? at.get_float("p", 2.0f) : static_cast<double>(at.get_int("p", 2));
    return half_via_float([wa, p](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        const Window g = pool_window(wa, x, "LpPool");
        Tensor y = Tensor::uninitialized(x.dtype(), pooled_dims(x, g));
        dispatch_float(x.dtype(), "LpPool", [&]<typename T>() {
            lp_pool<T>(g, x.dims()[0] * x.dims()[1], x.data<T>(),
                       reinterpret_cast<T*>(y.mutable_bytes()), p, ctx.pool());
        });
        ctx.set_output(0, std::move(y));
    });
}

// Global pools: one window covering every spatial axis. kind: 0 max, 1 average, 2 Lp.
KernelFn global_pool(const char* op, int kind, double p) {
    return half_via_float([op, kind, p](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        if (x.rank() < 3) fail(std::string(op) + ": X must have rank >= 3");
        Dims out_dims = x.dims();
        int64_t plane = 1;
        for (size_t i = 2; i < out_dims.size(); ++i) plane *= out_dims[i], out_dims[i] = 1;
        Tensor y = Tensor::uninitialized(x.dtype(), out_dims);
        const int64_t planes = x.dims()[0] * x.dims()[1];
        dispatch_float(x.dtype(), op, [&]<typename T>() {
            const T* src = x.data<T>();
            T* dst = reinterpret_cast<T*>(y.mutable_bytes());
            // Planes over the pool (each plane's sum stays in order: the same values).
            run_affine(planes * plane > (1 << 15) ? ctx.pool() : nullptr, planes, 1,
                       [&](int64_t b, int64_t e) {
                           global_pool_planes<T>(src + b * plane, dst + b, e - b, plane, kind, p);
                       });
        });
        ctx.set_output(0, std::move(y));
    });
}

KernelFn make_global_lp_pool(const Attrs& at, int64_t opset) {
    const double p = opset < 2 ? at.get_float("p", 2.0f) : static_cast<double>(at.get_int("p", 2));
    return global_pool("GlobalLpPool", 2, p);
}

// A flat index into a tensor of dims `from` as a flat index into `to` (same rank); -1 when the
// position lies outside `to`.
int64_t remap_index(int64_t i, const Dims& from, const Dims& to) {
    int64_t out = 0, scale = 1;
    for (size_t a = from.size(); a-- > 0;) {
        const int64_t c = i % from[a];
        i /= from[a];
        if (c >= to[a]) return -1;
        out += c * scale, scale *= to[a];
    }
    return i == 0 ? out : -1;
}

// MaxUnpool: scatters X into zeros at the indices I, which are flat indices into the shape the
// pooling geometry gives (and are moved to the same coordinates of output_shape when given).
KernelFn make_max_unpool(const Attrs& at, int64_t) {
    const WindowAttrs wa = read_window_attrs(at);
    return half_via_float([wa](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        const Tensor& ind = ctx.input(1);
        if (x.rank() < 3 || ind.dims() != x.dims())
            fail("MaxUnpool: X and I must have the same shape (rank >= 3)");
        const Dims natural = unpooled_dims(wa, x.dims());
        const Dims out_dims =
            ctx.has_input(2) ? to_int64_vector(ctx.input(2), "MaxUnpool") : natural;
        if (out_dims.size() != x.dims().size()) fail("MaxUnpool: output_shape has the wrong rank");
        Tensor y = Tensor::zeros(x.dtype(), out_dims);
        const std::vector<int64_t> index = to_int64_vector(ind, "MaxUnpool");
        dispatch_numeric(x.dtype(), "MaxUnpool", [&]<typename T>() {
            T* py = reinterpret_cast<T*>(y.mutable_bytes());
            for (uint64_t i = 0; i < x.numel(); ++i) {
                const int64_t o = index[i] < 0 ? -1 : remap_index(index[i], natural, out_dims);
                if (o < 0) fail("MaxUnpool: index out of range");
                py[o] = x.data<T>()[i];
            }
        });
        ctx.set_output(0, std::move(y));
    });
}

KernelFn make_max_roi_pool(const Attrs& at, int64_t) {
    const Dims pooled = at.get_ints("pooled_shape");
    const double scale = at.get_float("spatial_scale", 1.0f);
    if (pooled.size() != 2 || pooled[0] < 1 || pooled[1] < 1)
        fail("MaxRoiPool: pooled_shape must be 2 positive ints");
    return half_via_float([pooled, scale](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        const Tensor& rois = ctx.input(1);
        if (x.rank() != 4 || rois.rank() != 2 || rois.dims()[1] != 5)
            fail("MaxRoiPool: X must be 4-D and rois (R, 5)");
        if (rois.dtype() != x.dtype()) fail("MaxRoiPool: X and rois have different types");
        Tensor y = Tensor::zeros(x.dtype(), {rois.dims()[0], x.dims()[1], pooled[0], pooled[1]});
        dispatch_float(x.dtype(), "MaxRoiPool", [&]<typename T>() {
            max_roi_pool<T>(x, rois.data<T>(), rois.dims()[0], pooled, scale,
                            reinterpret_cast<T*>(y.mutable_bytes()));
        });
        ctx.set_output(0, std::move(y));
    });
}

}  // namespace

void register_pool_ops(OpTable& t) {
    using C = NumericContract;
    t.add("MaxPool", 1, C::kApproximate, make_max_pool);
    t.add("AveragePool", 1, C::kApproximate, make_average_pool);
    t.add("LpPool", 1, C::kApproximate, make_lp_pool);
    t.add("GlobalMaxPool", 1, C::kApproximate,
          [](const Attrs&, int64_t) { return global_pool("GlobalMaxPool", 0, 0); });
    t.add("GlobalAveragePool", 1, C::kApproximate,
          [](const Attrs&, int64_t) { return global_pool("GlobalAveragePool", 1, 0); });
    t.add("GlobalLpPool", 1, C::kApproximate, make_global_lp_pool);
    t.add("MaxUnpool", 9, C::kApproximate, make_max_unpool);
    t.add("MaxRoiPool", 1, C::kApproximate, make_max_roi_pool);
}

}  // namespace pg::ops
