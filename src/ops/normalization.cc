// Normalization: BatchNormalization (inference), InstanceNormalization, LayerNormalization,
// GroupNormalization, LRN, LpNormalization, MeanVarianceNormalization, Dropout (inference).
// Statistics (mean, variance, norms) accumulate in double for every float type (two passes),
// which stays within ONNX's tolerances of its float32 and float64 references; the normalized
// values are computed in T. float16/bfloat16 go through float32 (half_via_float), except
// LayerNormalization, whose Mean/InvStdDev outputs keep the stash type (float32); float32
// LayerNormalization runs layer_norm_fast (vectorized, rows over the pool).
#include <cmath>

#include "ir/graph.h"
#include "ops/broadcast.h"
#include "ops/dispatch.h"
#include "ops/half.h"
#include "ops/normalization_kernels.h"
#include "ops/op_table.h"
#include "ops/tensor_util.h"

namespace pg::ops {

namespace {

// A parameter (scale, bias, mean, var) as values of X's type T: its own data when the types
// match, else a converted copy (BatchNormalization's opset 15 lets them differ from X).
template <typename T>
struct ParamValues {
    std::vector<T> held;
    const T* data = nullptr;
    ParamValues(const Tensor& p, DataType x_type, const char* op) {
        if (p.dtype() == x_type) {
            data = p.data<T>();
            return;
        }
        if (!dtype_is_float(p.dtype()))
            fail(std::string(op) + ": parameters must be floating point, got " +
                 dtype_name(p.dtype()));
        held.resize(p.numel());
        for (uint64_t i = 0; i < p.numel(); ++i) held[i] = static_cast<T>(p.element_as_double(i));
        data = held.data();
    }
};

KernelFn make_batch_norm(const Attrs& at, int64_t opset) {
    const double eps = at.get_float("epsilon", 1e-5f);
    // Before opset 7, is_test 0 asks for training; an absent is_test (its default is 0) is taken
    // as inference, as exporters of those opsets meant it. momentum only matters in training.
    at.get_float("momentum", 0.9f);
    const bool training = opset >= 14 ? at.get_flag("training_mode", false)
                          : opset < 7 ? at.has("is_test") && !at.get_flag("is_test", true)
                                      : false;
    const bool spatial = opset >= 9 || at.get_flag("spatial", true);
    return half_via_float([eps, training, spatial](KernelContext& ctx) {
        if (training || ctx.num_outputs() > 1)
            unsupported(
                "BatchNormalization: training mode (running statistics outputs) is not supported");
        if (!spatial) unsupported("BatchNormalization: spatial=0 is not supported");
        const Tensor& x = ctx.input(0);
        if (x.rank() < 2) fail("BatchNormalization: X must have rank >= 2");
        const int64_t c = x.dims()[1];
        for (size_t i = 1; i < 5; ++i)
            if (ctx.input(i).numel() != static_cast<uint64_t>(c))
                fail("BatchNormalization: parameters must have C elements");
        Tensor y = Tensor::uninitialized(x.dtype(), x.dims());
        const char* op = "BatchNormalization";
        if (x.dtype() == DataType::kFloat32) {
            using P = ParamValues<float>;
            const P s(ctx.input(1), x.dtype(), op), b(ctx.input(2), x.dtype(), op);
            const P m(ctx.input(3), x.dtype(), op), v(ctx.input(4), x.dtype(), op);
            batch_norm_fast(x, s.data, b.data, m.data, v.data, eps,
                            reinterpret_cast<float*>(y.mutable_bytes()), ctx.pool());
            return ctx.set_output(0, std::move(y));
        }
        dispatch_float(x.dtype(), op, [&]<typename T>() {
            using P = ParamValues<T>;
            const P s(ctx.input(1), x.dtype(), op), b(ctx.input(2), x.dtype(), op);
            const P m(ctx.input(3), x.dtype(), op), v(ctx.input(4), x.dtype(), op);
            batch_norm<T>(x, s.data, b.data, m.data, v.data, eps,
                          reinterpret_cast<T*>(y.mutable_bytes()));
        });
        ctx.set_output(0, std::move(y));
    });
}

KernelFn make_instance_norm(const Attrs& at, int64_t) {
    const double eps = at.get_float("epsilon", 1e-5f);
    return half_via_float([eps](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        if (x.rank() < 3) fail("InstanceNormalization: X must have rank >= 3");
        const int64_t c = x.dims()[1];
        if (ctx.input(1).numel() != uint64_t(c) || ctx.input(2).numel() != uint64_t(c))
            fail("InstanceNormalization: scale and B must have C elements");
        Tensor y = Tensor::uninitialized(x.dtype(), x.dims());
        const char* op = "InstanceNormalization";
        dispatch_float(x.dtype(), op, [&]<typename T>() {
            const ParamValues<T> s(ctx.input(1), x.dtype(), op), b(ctx.input(2), x.dtype(), op);
            group_norm<T>(x, c, s.data, b.data, true, eps, reinterpret_cast<T*>(y.mutable_bytes()),
                          ctx.pool());
        });
        ctx.set_output(0, std::move(y));
    });
}

KernelFn make_group_norm(const Attrs& at, int64_t) {
    const double eps = at.get_float("epsilon", 1e-5f);
    const int64_t groups = at.require_int("num_groups");
    return half_via_float([eps, groups](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        if (x.rank() < 2 || groups < 1 || x.dims()[1] % groups != 0)
            fail("GroupNormalization: channels must be a multiple of num_groups");
        const uint64_t c = static_cast<uint64_t>(x.dims()[1]);
        const Tensor& scale = ctx.input(1);
        const Tensor& bias = ctx.input(2);
        // Opset 18 has one scale/bias per group, opset 21 one per channel; the size tells which.
        const bool per_channel = scale.numel() == c;
        if ((!per_channel && scale.numel() != uint64_t(groups)) || bias.numel() != scale.numel())
            fail("GroupNormalization: scale and bias must have num_groups or C elements");
        Tensor y = Tensor::uninitialized(x.dtype(), x.dims());
        const char* op = "GroupNormalization";
        dispatch_float(x.dtype(), op, [&]<typename T>() {
            const ParamValues<T> s(scale, x.dtype(), op), b(bias, x.dtype(), op);
            group_norm<T>(x, groups, s.data, b.data, per_channel, eps,
                          reinterpret_cast<T*>(y.mutable_bytes()), ctx.pool());
        });
        ctx.set_output(0, std::move(y));
    });
}

// `t` (the shape of Scale or B) broadcast to `to`, as a dense vector of doubles.
std::vector<double> broadcast_params(const Tensor& t, const Dims& to, const char* what) {
    if (broadcast_shape(t.dims(), to) != to)
        fail(std::string("LayerNormalization: ") + what + " cannot be broadcast");
    std::vector<double> out;
    const Dims st = broadcast_strides(t.dims(), to);
    for_each_broadcast2(
        to, st, st, [&](int64_t, int64_t i, int64_t) { out.push_back(t.element_as_double(i)); });
    return out;
}

KernelFn make_layer_norm(const Attrs& at, int64_t) {
    const int64_t axis_attr = at.get_int("axis", -1);
    const double eps = at.get_float("epsilon", 1e-5f);
    return [axis_attr, eps](KernelContext& ctx) {
        const Tensor& x0 = ctx.input(0);
        const Tensor x = widen_half(x0);
        const int64_t axis = normalize_axis(axis_attr, x.rank(), "LayerNormalization");
        const Dims inner_dims(x.dims().begin() + axis, x.dims().end());
        const std::vector<double> scale = broadcast_params(ctx.input(1), inner_dims, "Scale");
        const std::vector<double> bias = ctx.has_input(2)
                                             ? broadcast_params(ctx.input(2), inner_dims, "B")
                                             : std::vector<double>(scale.size(), 0.0);
        Dims stat_dims = x.dims();
        for (size_t i = static_cast<size_t>(axis); i < stat_dims.size(); ++i) stat_dims[i] = 1;
        const DataType stash =
            x.dtype() == DataType::kFloat64 ? DataType::kFloat64 : DataType::kFloat32;
        Tensor y = Tensor::uninitialized(x.dtype(), x.dims());
        Tensor mean = Tensor::zeros(stash, stat_dims), inv = Tensor::zeros(stash, stat_dims);
        if (x.dtype() == DataType::kFloat32) {
            layer_norm_fast(x.data<float>(), static_cast<int64_t>(scale.size()), scale, bias, eps,
                            reinterpret_cast<float*>(y.mutable_bytes()),
                            reinterpret_cast<float*>(mean.mutable_bytes()),
                            reinterpret_cast<float*>(inv.mutable_bytes()),
                            static_cast<int64_t>(mean.numel()), ctx.pool());
        } else {
            dispatch_float(x.dtype(), "LayerNormalization", [&]<typename T>() {
                layer_norm<T>(x.data<T>(), static_cast<int64_t>(scale.size()), scale, bias, eps,
                              reinterpret_cast<T*>(y.mutable_bytes()),
                              reinterpret_cast<T*>(mean.mutable_bytes()),
                              reinterpret_cast<T*>(inv.mutable_bytes()),
                              static_cast<int64_t>(mean.numel()));
            });
        }
        ctx.set_output(0, narrow_half(y, x0.dtype()));
        if (ctx.num_outputs() > 1) ctx.set_output(1, std::move(mean));
        if (ctx.num_outputs() > 2) ctx.set_output(2, std::move(inv));
    };
}

KernelFn make_lrn(const Attrs& at, int64_t) {
    LrnParams p{at.get_float("alpha", 1e-4f), at.get_float("beta", 0.75f),
                at.get_float("bias", 1.0f), at.require_int("size")};
    return half_via_float([p](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        if (x.rank() < 2 || p.size < 1)
            fail("LRN: X must have rank >= 2 and size must be positive");
        Tensor y = Tensor::uninitialized(x.dtype(), x.dims());
        if (x.dtype() == DataType::kFloat32) {
            lrn_fast(x, p, reinterpret_cast<float*>(y.mutable_bytes()), ctx.pool());
            return ctx.set_output(0, std::move(y));
        }
        dispatch_float(x.dtype(), "LRN", [&]<typename T>() {
            lrn<T>(x, p, reinterpret_cast<T*>(y.mutable_bytes()));
        });
        ctx.set_output(0, std::move(y));
    });
}

KernelFn make_lp_norm(const Attrs& at, int64_t) {
    const int64_t axis_attr = at.get_int("axis", -1), p = at.get_int("p", 2);
    if (p != 1 && p != 2) fail("LpNormalization: p must be 1 or 2");
    return half_via_float([axis_attr, p](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        const int64_t axis = normalize_axis(axis_attr, x.rank(), "LpNormalization");
        Tensor y = Tensor::uninitialized(x.dtype(), x.dims());
        dispatch_float(x.dtype(), "LpNormalization", [&]<typename T>() {
            lp_normalize<T>(x, axis, p, reinterpret_cast<T*>(y.mutable_bytes()));
        });
        ctx.set_output(0, std::move(y));
    });
}

KernelFn make_mvn(const Attrs& at, int64_t) {
    const Dims axes_attr = at.get_ints("axes", {0, 2, 3});
    return half_via_float([axes_attr](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        std::vector<bool> reduced(static_cast<size_t>(x.rank()), false);
        for (int64_t a : axes_attr)
            reduced[normalize_axis(a, x.rank(), "MeanVarianceNormalization")] = true;
        Tensor y = Tensor::uninitialized(x.dtype(), x.dims());
        dispatch_float(x.dtype(), "MeanVarianceNormalization", [&]<typename T>() {
            mean_variance_normalize<T>(x, reduced, reinterpret_cast<T*>(y.mutable_bytes()));
        });
        ctx.set_output(0, std::move(y));
    });
}

// Dropout in inference: Y = X, mask of ones (bool from opset 10, X's type before). The attributes
// only matter in training (ratio before opset 12, is_test before 7, seed from 12); they are read
// for their types.
KernelFn make_dropout(const Attrs& at, int64_t opset) {
    if (opset < 12) at.get_float("ratio", 0.5f);
    if (opset < 7) at.get_int("is_test", 0);
    if (opset >= 12) at.get_int("seed", 0);
    return [opset](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        if (opset >= 12 && ctx.has_input(2) && scalar_value(ctx.input(2), "Dropout") != 0.0) {
            const double ratio = ctx.has_input(1) ? scalar_value(ctx.input(1), "Dropout") : 0.5;
            if (ratio != 0.0)
                unsupported(
                    "Dropout: training_mode with ratio > 0 (random masks) is not supported");
        }
        ctx.set_output(0, x);
        if (ctx.num_outputs() < 2) return;
        const DataType mask_type = opset >= 10 ? DataType::kBool : x.dtype();
        ctx.set_output(1, ones_like(mask_type, x.dims()));
    };
}

}  // namespace

void register_normalization_ops(OpTable& t) {
    using C = NumericContract;
    t.add("BatchNormalization", 1, C::kApproximate, make_batch_norm);
    t.add("InstanceNormalization", 1, C::kApproximate, make_instance_norm);
    t.add("LayerNormalization", 17, C::kApproximate, make_layer_norm);
    t.add("GroupNormalization", 18, C::kApproximate, make_group_norm);
    t.add("LRN", 1, C::kApproximate, make_lrn);
    t.add("LpNormalization", 1, C::kApproximate, make_lp_norm);
    t.add("MeanVarianceNormalization", 9, C::kApproximate, make_mvn);
    t.add("Dropout", 1, C::kApproximate, make_dropout);
}

}  // namespace pg::ops
