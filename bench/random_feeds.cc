// See random_feeds.h.
#include "random_feeds.h"

#include <random>
#include <vector>

#include "ir/graph.h"

namespace pg::bench {

runtime::Feeds random_feeds(const ir::Model& model) {
    runtime::Feeds feeds;
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (const ir::Value* in : model.graph->inputs()) {
        if (in->is_initializer() || !in->type().shape) continue;
        std::vector<int64_t> dims;
        for (const auto& d : *in->type().shape) dims.push_back(d.value ? *d.value : 1);
        Tensor t = Tensor::zeros(in->type().elem_type, dims);
        if (t.dtype() == DataType::kFloat32) {
            auto* p = reinterpret_cast<float*>(t.mutable_bytes());
            for (uint64_t i = 0; i < t.numel(); ++i) p[i] = u(rng);
        }
        feeds[in->name()] = ops::RtValue::of(t);
    }
    return feeds;
}

}  // namespace pg::bench
