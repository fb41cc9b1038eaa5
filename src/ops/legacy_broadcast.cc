#include "ops/legacy_broadcast.h"

#include <optional>
#include <string>

#include "ops/tensor_shape_take.h"
#include "ops/tensor_util.h"
#include "tensor/tensor.h"

namespace pg::ops {

namespace {

// B's dims lined up with A's rank from `axis`: 1s before and after.
Dims aligned_dims(const Tensor& a, const Tensor& b, int64_t axis, const char* name) {
    const int64_t rank = a.rank();
    if (axis < 0) axis += rank;
    if (axis < 0 || axis + b.rank() > rank)
        fail(std::string(name) + ": axis " + std::to_string(axis) + " does not fit B's " +
             std::to_string(b.rank()) + " dimensions into A's " + std::to_string(rank));
    Dims d(static_cast<size_t>(axis), 1);
    d.insert(d.end(), b.dims().begin(), b.dims().end());
    d.resize(static_cast<size_t>(rank), 1);
    return d;
}

}  // namespace

MakeKernel with_legacy_broadcast(const char* name, MakeKernel make) {
    return [name, make = std::move(make)](const Attrs& a, int64_t opset) -> KernelFn {
        KernelFn k = make(a, opset);
        if (opset >= 7) return k;
        const bool broadcast = a.get_flag("broadcast", false);
        const std::optional<int64_t> axis =
            a.has("axis") ? std::optional<int64_t>(a.get_int("axis", 0)) : std::nullopt;
        return [name, k, broadcast, axis](KernelContext& ctx) {
            const Tensor& x = ctx.input(0);
            const Tensor& y = ctx.input(1);
            if (!broadcast && x.dims() != y.dims())
                fail(std::string(name) + ": broadcast is 0 (opset < 7), so A and B must have " +
                     "the same shape; got " + dims_text(x.dims()) + " and " +
                     dims_text(y.dims()));
            if (!broadcast || !axis) return k(ctx);
            const RtValue b = RtValue::of(with_dims(y, aligned_dims(x, y, *axis, name)));
            KernelContext inner(ctx.node(), {ctx.value(0), &b}, ctx.num_outputs(), ctx.pool(),
                                nullptr);
            k(inner);
            for (size_t i = 0; i < ctx.num_outputs(); ++i)
                ctx.set_output(i, std::move(inner.outputs()[i]));
        };
    };
}

}  // namespace pg::ops
