#include "passes/prune.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "base/error.h"
#include "base/float16.h"
#include "ir/graph.h"

namespace pg::passes {

namespace {

bool prunable_dtype(DataType t) {
    return t == DataType::kFloat32 || t == DataType::kFloat16 || t == DataType::kBFloat16;
}

float magnitude(const Tensor& t, uint64_t i) {
    uint16_t bits = 0;
    switch (t.dtype()) {
        case DataType::kFloat32:
            return std::fabs(t.data<float>()[i]);
        case DataType::kFloat16:
            std::memcpy(&bits, t.bytes() + 2 * i, 2);
            return std::fabs(half_bits_to_float(bits));
        case DataType::kBFloat16:
            std::memcpy(&bits, t.bytes() + 2 * i, 2);
            return std::fabs(bfloat16_bits_to_float(bits));
        default:
            throw Error(ErrorKind::kInternal, "prune: unexpected dtype " + dtype_name(t.dtype()));
    }
}

// Calls fn(indices of one group of four) for every group along `axis`.
template <typename Fn>
void for_each_group(const Tensor& t, int64_t axis, Fn fn) {
    const auto& d = t.dims();
    if (axis < 0 || axis >= t.rank() || d[static_cast<size_t>(axis)] % 4 != 0)
        throw Error(ErrorKind::kInternal,
                    "prune: axis " + std::to_string(axis) + " cannot be pruned");
    uint64_t outer = 1, inner = 1;
    for (int64_t k = 0; k < axis; ++k) outer *= static_cast<uint64_t>(d[static_cast<size_t>(k)]);
    for (size_t k = static_cast<size_t>(axis) + 1; k < d.size(); ++k)
        inner *= static_cast<uint64_t>(d[k]);
    const uint64_t len = static_cast<uint64_t>(d[static_cast<size_t>(axis)]);
    for (uint64_t o = 0; o < outer; ++o)
        for (uint64_t i = 0; i < inner; ++i)
            for (uint64_t a = 0; a < len; a += 4) {
                std::array<uint64_t, 4> idx;
                for (uint64_t k = 0; k < 4; ++k) idx[k] = (o * len + a + k) * inner + i;
                fn(idx);
            }
}

// Positions (0..3) of the two smallest magnitudes of a group; the first occurrence wins ties.
std::array<int, 2> two_smallest(const Tensor& t, const std::array<uint64_t, 4>& idx) {
    std::array<int, 4> order = {0, 1, 2, 3};
    auto key = [&](int k) {  // NaN sorts last, keeping the order strict
        const float m = magnitude(t, idx[static_cast<size_t>(k)]);
        return std::isnan(m) ? INFINITY : m;
    };
    std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return key(x) < key(y); });
    return {order[0], order[1]};
}

bool is_graph_op(const ir::Node& n, std::initializer_list<const char*> ops) {
    for (const char* op : ops)
        if (n.op_type == op) return true;
    return false;
}

// Rank of a value when the model records it, else -1.
int64_t rank_of(const ir::Value& v) {
    if (v.is_initializer()) return v.initializer()->tensor.rank();
    if (v.has_type() && v.type().shape) return static_cast<int64_t>(v.type().shape->size());
    return -1;
}

struct Tracer {
    std::vector<PruneCandidate>& out;
    std::vector<std::string>* warnings;

    void warn(const std::string& msg) {
        if (warnings) warnings->push_back(msg);
    }

    // Follows v back to an initializer, adjusting the axis through Transpose.
    void trace(const ir::Value* v, int64_t axis) {
        if (!v) return;
        if (v->is_initializer()) {
            auto same = [&](const PruneCandidate& c) { return c.name == v->name(); };
            if (std::none_of(out.begin(), out.end(), same)) out.push_back({v->name(), axis});
            return;
        }
        const ir::Node* p = v->producer();
        if (!p) return;
        if (is_graph_op(*p, {"QuantizeLinear", "DequantizeLinear", "TRT_FP8QuantizeLinear",
                             "TRT_FP8DequantizeLinear", "Cast"}))
            return trace(p->input(0), axis);
        if (p->op_type == "Transpose") return trace_transpose(*p, axis);
        if (is_graph_op(*p, {"LayerNormalization", "Reshape", "Concat", "Slice", "Shape",
                             "Unsqueeze", "Gather", "Mul", "Add"}))
            return;
        warn("weight '" + v->name() + "' comes from unsupported node " + p->describe() +
             "; not traced further");
    }

    void trace_transpose(const ir::Node& p, int64_t axis) {
        std::vector<int64_t> perm;
        if (const ir::Attribute* a = p.find_attribute("perm"))
            perm = a->ints;
        else if (const ir::Value* in = p.input(0); in && rank_of(*in) >= 0)
            for (int64_t k = rank_of(*in); k-- > 0;) perm.push_back(k);  // default: reverse
        auto it = std::find(perm.begin(), perm.end(), axis);
        if (it == perm.end()) {
            warn("cannot map axis " + std::to_string(axis) + " through " + p.describe());
            return;
        }
        trace(p.input(0), it - perm.begin());
    }
};

}  // namespace

std::vector<PruneCandidate> find_prune_candidates(const ir::Graph& g,
                                                  std::vector<std::string>* warnings) {
    std::vector<PruneCandidate> out;
    Tracer tracer{out, warnings};
    for (const auto& n : g.nodes()) {
        if (n->op_type == "Conv") {
            tracer.trace(n->input(1), 1);
        } else if (n->op_type == "MatMul") {
            tracer.trace(n->input(0), 1);
            tracer.trace(n->input(1), 0);
        } else if (n->op_type == "Gemm") {
            const ir::Attribute* ta = n->find_attribute("transA");
            const ir::Attribute* tb = n->find_attribute("transB");
            tracer.trace(n->input(0), ta && ta->i ? 0 : 1);
            tracer.trace(n->input(1), tb && tb->i ? 1 : 0);
        }
    }
    return out;
}

bool is_2_4_sparse(const Tensor& t, int64_t axis) {
    bool sparse = true;
    for_each_group(t, axis, [&](const std::array<uint64_t, 4>& idx) {
        if (!sparse) return;
        auto s = two_smallest(t, idx);
        sparse = magnitude(t, idx[s[0]]) == 0 && magnitude(t, idx[s[1]]) == 0;
    });
    return sparse;
}

Tensor prune_2_4(const Tensor& t, int64_t axis) {
    Tensor out = t;
    uint8_t* bytes = out.mutable_bytes();
    const size_t width = t.dtype() == DataType::kFloat32 ? 4 : 2;
    for_each_group(t, axis, [&](const std::array<uint64_t, 4>& idx) {
        for (int k : two_smallest(t, idx)) std::memset(bytes + idx[k] * width, 0, width);
    });
    return out;
}

PruneReport prune(ir::Graph& g) {
    PruneReport report;
    for (const PruneCandidate& c : find_prune_candidates(g, &report.warnings)) {
        ir::Value* v = g.lookup(c.name);
        const Tensor& t = v->initializer()->tensor;
        if (!prunable_dtype(t.dtype()) || c.axis >= t.rank() ||
            t.dims()[static_cast<size_t>(c.axis)] % 4 != 0)
            continue;
        if (!t.has_data()) {
            report.warnings.push_back("weight '" + c.name + "' has no data loaded; not pruned");
            continue;
        }
        report.eligible.push_back(c);
        if (is_2_4_sparse(t, c.axis)) {
            report.already_sparse.push_back(c.name);
            continue;
        }
        v->mutable_initializer()->tensor = prune_2_4(t, c.axis);
        report.pruned.push_back(c.name);
    }
    return report;
}

}  // namespace pg::passes
