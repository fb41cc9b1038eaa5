// Random ops: RandomNormal, RandomUniform, RandomNormalLike, RandomUniformLike, Bernoulli,
// Multinomial. Seeded with the `seed` attribute (when absent, a fixed per-node seed derived from
// the node's name, so runs are reproducible). The streams are std::mt19937_64's, not numpy's.
#include <functional>
#include <random>

#include "ir/graph.h"
#include "ops/op_table.h"
#include "ops/quant_util.h"
#include "ops/tensor_util.h"

namespace pg::ops {

namespace {

uint64_t seed_of(const Attrs& a) {
    if (a.has("seed")) return static_cast<uint64_t>(static_cast<int64_t>(a.get_float("seed", 0)));
    return std::hash<std::string>{}(a.node().name + "/" + a.node().op_type);
}

DataType attr_dtype(const Attrs& a, DataType fallback) {
    return a.has("dtype") ? static_cast<DataType>(a.get_int("dtype", 1)) : fallback;
}

template <typename Dist>
KernelFn fill(DataType dt, std::vector<int64_t> shape, uint64_t seed, Dist dist, bool like) {
    return [=](KernelContext& ctx) mutable {
        std::mt19937_64 rng(seed);
        const DataType out_dt = like && dt == DataType::kUndefined ? ctx.input(0).dtype() : dt;
        const std::vector<int64_t> dims = like ? ctx.input(0).dims() : shape;
        std::vector<double> v = double_scratch(dims, "random values");
        for (auto& x : v) x = dist(rng);
        ctx.set_output(0, float_tensor(out_dt, dims, v));
    };
}

KernelFn make_random_normal(const Attrs& a, int64_t) {
    std::normal_distribution<double> d(a.get_float("mean", 0), a.get_float("scale", 1));
    return fill(attr_dtype(a, DataType::kFloat32), a.get_ints("shape"), seed_of(a), d, false);
}

KernelFn make_random_uniform(const Attrs& a, int64_t) {
    std::uniform_real_distribution<double> d(a.get_float("low", 0), a.get_float("high", 1));
    return fill(attr_dtype(a, DataType::kFloat32), a.get_ints("shape"), seed_of(a), d, false);
}

KernelFn make_random_normal_like(const Attrs& a, int64_t) {
    std::normal_distribution<double> d(a.get_float("mean", 0), a.get_float("scale", 1));
    return fill(attr_dtype(a, DataType::kUndefined), {}, seed_of(a), d, true);
}

KernelFn make_random_uniform_like(const Attrs& a, int64_t) {
    std::uniform_real_distribution<double> d(a.get_float("low", 0), a.get_float("high", 1));
    return fill(attr_dtype(a, DataType::kUndefined), {}, seed_of(a), d, true);
}

KernelFn make_bernoulli(const Attrs& a, int64_t) {
    const uint64_t seed = seed_of(a);
    const DataType dt = attr_dtype(a, DataType::kUndefined);
    return [=](KernelContext& ctx) {
        const Tensor& p = ctx.input(0);
        std::mt19937_64 rng(seed);
        std::uniform_real_distribution<double> u(0, 1);
        const DataType out = dt == DataType::kUndefined ? p.dtype() : dt;
        std::vector<double> v(p.numel());
        for (uint64_t i = 0; i < p.numel(); ++i) v[i] = u(rng) < p.element_as_double(i) ? 1.0 : 0.0;
        if (dtype_is_float(out)) return ctx.set_output(0, float_tensor(out, p.dims(), v));
        if (out == DataType::kBool) {
            Tensor b = Tensor::zeros(DataType::kBool, p.dims());
            for (uint64_t i = 0; i < p.numel(); ++i) b.mutable_bytes()[i] = v[i] != 0;
            return ctx.set_output(0, std::move(b));
        }
        QuantWriter w(out, p.dims(), true);
        for (uint64_t i = 0; i < p.numel(); ++i) w.set(i, v[i], 0);
        ctx.set_output(0, w.take());
    };
}

KernelFn make_multinomial(const Attrs& a, int64_t) {
    const uint64_t seed = seed_of(a);
    const int64_t samples = a.get_int("sample_size", 1);
    const DataType dt = attr_dtype(a, DataType::kInt32);
    return [=](KernelContext& ctx) {
        const Tensor& logits = ctx.input(0);  // [batch, classes], unnormalized log probabilities
        if (logits.rank() != 2) fail("Multinomial: input must be 2-D");
        const int64_t B = logits.dims()[0], C = logits.dims()[1];
        std::mt19937_64 rng(seed);
        QuantWriter w(dt, {B, samples}, true);
        for (int64_t b = 0; b < B; ++b) {
            std::vector<double> weights(static_cast<size_t>(C));
            for (int64_t c = 0; c < C; ++c)
                weights[static_cast<size_t>(c)] =
                    std::exp(logits.element_as_double(static_cast<uint64_t>(b * C + c)));
            std::discrete_distribution<int64_t> d(weights.begin(), weights.end());
            for (int64_t s = 0; s < samples; ++s)
                w.set(static_cast<uint64_t>(b * samples + s), static_cast<double>(d(rng)), 0);
        }
        ctx.set_output(0, w.take());
    };
}

}  // namespace

void register_random_ops(OpTable& t) {
    using C = NumericContract;
    t.add("RandomNormal", 1, C::kRandom, make_random_normal);
    t.add("RandomUniform", 1, C::kRandom, make_random_uniform);
    t.add("RandomNormalLike", 1, C::kRandom, make_random_normal_like);
    t.add("RandomUniformLike", 1, C::kRandom, make_random_uniform_like);
    t.add("Bernoulli", 15, C::kRandom, make_bernoulli);
    t.add("Multinomial", 7, C::kRandom, make_multinomial);
}

}  // namespace pg::ops
