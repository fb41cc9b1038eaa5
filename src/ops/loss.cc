// Loss ops usable at inference: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (opset 12,
// 13). Both pick -input[n, target[n, d...], d...] per element, weight it by weight[target] (1
// without weights, 0 where target == ignore_index) and reduce: none (target's shape), sum, or
// mean = sum(weighted loss) / sum(weights). Accumulation is in double; float16/bfloat16 go
// through float32 (half_via_float). A class index outside [0, C) that is not ignore_index is
// kInvalidInput.
#include <cmath>
#include <optional>

#include "ir/graph.h"
#include "ops/dispatch.h"
#include "ops/half.h"
#include "ops/op_table.h"
#include "ops/tensor_util.h"

namespace pg::ops {

namespace {

struct LossConfig {
    const char* op = "";
    std::string reduction = "mean";
    std::optional<int64_t> ignore_index;
};

LossConfig read_config(const Attrs& a, const char* op) {
    LossConfig c;
    c.op = op;
    c.reduction = a.get_string("reduction", "mean");
    if (c.reduction != "none" && c.reduction != "sum" && c.reduction != "mean")
        fail(std::string(op) + ": unknown reduction '" + c.reduction + "'");
    if (a.has("ignore_index")) c.ignore_index = a.get_int("ignore_index", 0);
    return c;
}

// Input of shape [N, C, d...] as doubles, with N, C and D = prod(d...).
struct LossInput {
    std::vector<double> x;
    int64_t n = 0, c = 0, d = 1;
};

LossInput read_input(const Tensor& x, const Tensor& target, const LossConfig& cfg) {
    if (x.rank() < 2) fail(std::string(cfg.op) + ": input must have rank >= 2");
    LossInput in{std::vector<double>(x.numel()), x.dims()[0], x.dims()[1], 1};
    for (size_t i = 2; i < x.dims().size(); ++i) in.d *= x.dims()[i];
    std::vector<int64_t> want = x.dims();
    want.erase(want.begin() + 1);
    if (target.dims() != want)
        fail(std::string(cfg.op) + ": target must have the input's shape without axis 1");
    if (target.dtype() != DataType::kInt32 && target.dtype() != DataType::kInt64)
        fail(std::string(cfg.op) + ": target must be int32 or int64");
    for (uint64_t i = 0; i < x.numel(); ++i) in.x[i] = x.element_as_double(i);
    return in;
}

// Weighted per-element losses -w * logp[n, t, d] and their weights.
void pick_losses(const LossInput& in, const Tensor& target, const Tensor* weight,
                 const LossConfig& cfg, std::vector<double>& loss, std::vector<double>& w) {
    if (weight && weight->numel() != static_cast<uint64_t>(in.c))
        fail(std::string(cfg.op) + ": weight must have C elements");
    loss.assign(static_cast<size_t>(in.n * in.d), 0.0);
    w.assign(loss.size(), 0.0);
    for (int64_t n = 0; n < in.n; ++n)
        for (int64_t d = 0; d < in.d; ++d) {
            const size_t k = static_cast<size_t>(n * in.d + d);
            const int64_t t = element_int64(target, k, cfg.op);
            if (cfg.ignore_index && t == *cfg.ignore_index) continue;
            if (t < 0 || t >= in.c)
                fail(std::string(cfg.op) + ": target class " + std::to_string(t) +
                     " is outside [0, " + std::to_string(in.c) + ")");
            w[k] = weight ? weight->element_as_double(static_cast<uint64_t>(t)) : 1.0;
            loss[k] = -w[k] * in.x[static_cast<size_t>((n * in.c + t) * in.d + d)];
        }
}

// The reduced (or unreduced) loss tensor of x's dtype.
Tensor reduce_loss(const std::vector<double>& loss, const std::vector<double>& w,
                   const Tensor& target, DataType dt, const LossConfig& cfg) {
    Tensor out =
        Tensor::zeros(dt, cfg.reduction == "none" ? target.dims() : std::vector<int64_t>{});
    dispatch_float(dt, cfg.op, [&]<typename T>() {
        T* dst = reinterpret_cast<T*>(out.mutable_bytes());
        if (cfg.reduction == "none") {
            for (size_t i = 0; i < loss.size(); ++i) dst[i] = static_cast<T>(loss[i]);
            return;
        }
        double sum = 0, wsum = 0;
        for (size_t i = 0; i < loss.size(); ++i) sum += loss[i], wsum += w[i];
        dst[0] = static_cast<T>(cfg.reduction == "sum" ? sum : sum / wsum);
    });
    return out;
}

KernelFn make_nll_loss(const Attrs& a, int64_t) {
    const LossConfig cfg = read_config(a, "NegativeLogLikelihoodLoss");
    return half_via_float([cfg](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        const Tensor& target = ctx.input(1);
        LossInput in = read_input(x, target, cfg);
        std::vector<double> loss, w;
        pick_losses(in, target, ctx.has_input(2) ? &ctx.input(2) : nullptr, cfg, loss, w);
        ctx.set_output(0, reduce_loss(loss, w, target, x.dtype(), cfg));
    });
}

// log_softmax over axis 1 of [N, C, D] data, in place.
void log_softmax_axis1(LossInput& in) {
    for (int64_t n = 0; n < in.n; ++n)
        for (int64_t d = 0; d < in.d; ++d) {
            auto at = [&](int64_t c) -> double& {
                return in.x[static_cast<size_t>((n * in.c + c) * in.d + d)];
            };
            double mx = -INFINITY, sum = 0;
            for (int64_t c = 0; c < in.c; ++c) mx = std::max(mx, at(c));
            for (int64_t c = 0; c < in.c; ++c) sum += std::exp(at(c) - mx);
            const double log_sum = std::log(sum);
            for (int64_t c = 0; c < in.c; ++c) at(c) = at(c) - mx - log_sum;
        }
}

Tensor doubles_as(DataType dt, const std::vector<int64_t>& dims, const std::vector<double>& v,
                  const char* op) {
    Tensor out = Tensor::zeros(dt, dims);
    dispatch_float(dt, op, [&]<typename T>() {
        T* dst = reinterpret_cast<T*>(out.mutable_bytes());
        for (size_t i = 0; i < v.size(); ++i) dst[i] = static_cast<T>(v[i]);
    });
    return out;
}

KernelFn make_sce_loss(const Attrs& a, int64_t) {
    const LossConfig cfg = read_config(a, "SoftmaxCrossEntropyLoss");
    return half_via_float([cfg](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        const Tensor& target = ctx.input(1);
        LossInput in = read_input(x, target, cfg);
        log_softmax_axis1(in);
        std::vector<double> loss, w;
        pick_losses(in, target, ctx.has_input(2) ? &ctx.input(2) : nullptr, cfg, loss, w);
        ctx.set_output(0, reduce_loss(loss, w, target, x.dtype(), cfg));
        if (ctx.num_outputs() > 1) ctx.set_output(1, doubles_as(x.dtype(), x.dims(), in.x, cfg.op));
    });
}

}  // namespace

void register_loss_ops(OpTable& t) {
    using C = NumericContract;
    t.add("NegativeLogLikelihoodLoss", 12, C::kApproximate, make_nll_loss);
    t.add("SoftmaxCrossEntropyLoss", 12, C::kApproximate, make_sce_loss);
}

}  // namespace pg::ops
