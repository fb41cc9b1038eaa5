// Sequence and optional ops: SequenceConstruct, SequenceEmpty, SequenceAt, SequenceInsert,
// SequenceErase, SequenceLength, ConcatFromSequence, SplitToSequence, SequenceMap, Optional,
// OptionalHasElement, OptionalGetElement.
#include "ir/graph.h"
#include "ops/op_table.h"
#include "ops/tensor_util.h"

namespace pg::ops {

namespace {

const std::vector<Tensor>& input_sequence(KernelContext& ctx, size_t i, const char* op) {
    const RtValue* v = ctx.value(i);
    if (!v || !v->is_sequence())
        fail(std::string(op) + ": input " + std::to_string(i) + " must be a sequence");
    return v->sequence();
}

// A position in [-n, n] (insert) or [-n, n) (access) mapped to [0, n].
int64_t sequence_position(KernelContext& ctx, size_t input, int64_t n, bool insert,
                          const char* op) {
    int64_t pos = scalar_int64(ctx.input(input), op);
    const int64_t hi = insert ? n : n - 1;
    if (pos < -n || pos > hi)
        fail(std::string(op) + ": position " + std::to_string(pos) + " is out of range");
    return pos < 0 ? pos + n : pos;
}

// A sequence's tensors share one type (ONNX's S = seq(T)): refuses `t` of another type than
// items[0]'s.
void require_sequence_type(const std::vector<Tensor>& items, const Tensor& t, const char* op) {
    if (!items.empty() && t.dtype() != items[0].dtype())
        fail(std::string(op) + ": a sequence of " + dtype_name(items[0].dtype()) +
             " tensors cannot hold a " + dtype_name(t.dtype()) + " tensor");
}

KernelFn make_sequence_construct(const Attrs&, int64_t) {
    return [](KernelContext& ctx) {
        std::vector<Tensor> items;
        for (size_t i = 0; i < ctx.num_inputs(); ++i) {
            require_sequence_type(items, ctx.input(i), "SequenceConstruct");
            items.push_back(ctx.input(i));
        }
        ctx.set_output(0, RtValue::of_sequence(std::move(items)));
    };
}

KernelFn make_sequence_empty(const Attrs&, int64_t) {
    return [](KernelContext& ctx) { ctx.set_output(0, RtValue::of_sequence({})); };
}

KernelFn make_sequence_at(const Attrs&, int64_t) {
    return [](KernelContext& ctx) {
        const auto& seq = input_sequence(ctx, 0, "SequenceAt");
        const int64_t pos =
            sequence_position(ctx, 1, static_cast<int64_t>(seq.size()), false, "SequenceAt");
        ctx.set_output(0, seq[static_cast<size_t>(pos)]);
    };
}

KernelFn make_sequence_insert(const Attrs&, int64_t) {
    return [](KernelContext& ctx) {
        std::vector<Tensor> seq = input_sequence(ctx, 0, "SequenceInsert");
        const int64_t n = static_cast<int64_t>(seq.size());
        const int64_t pos =
            ctx.has_input(2) ? sequence_position(ctx, 2, n, true, "SequenceInsert") : n;
        require_sequence_type(seq, ctx.input(1), "SequenceInsert");
        seq.insert(seq.begin() + pos, ctx.input(1));
        ctx.set_output(0, RtValue::of_sequence(std::move(seq)));
    };
}

KernelFn make_sequence_erase(const Attrs&, int64_t) {
    return [](KernelContext& ctx) {
        std::vector<Tensor> seq = input_sequence(ctx, 0, "SequenceErase");
        const int64_t n = static_cast<int64_t>(seq.size());
        const int64_t pos =
            ctx.has_input(1) ? sequence_position(ctx, 1, n, false, "SequenceErase") : n - 1;
        if (n == 0) fail("SequenceErase: the sequence is empty");
        seq.erase(seq.begin() + pos);
        ctx.set_output(0, RtValue::of_sequence(std::move(seq)));
    };
}

KernelFn make_sequence_length(const Attrs&, int64_t) {
    return [](KernelContext& ctx) {
        ctx.set_output(0, make_scalar_int64(static_cast<int64_t>(
                              input_sequence(ctx, 0, "SequenceLength").size())));
    };
}

KernelFn make_concat_from_sequence(const Attrs& a, int64_t) {
    const int64_t axis = a.require_int("axis");
    const bool new_axis = a.get_flag("new_axis", false);
    return [axis, new_axis](KernelContext& ctx) {
        const auto& seq = input_sequence(ctx, 0, "ConcatFromSequence");
        if (seq.empty()) fail("ConcatFromSequence: the sequence is empty");
        const int64_t rank = seq[0].rank() + (new_axis ? 1 : 0);
        const int64_t ax = normalize_axis(axis, rank, "ConcatFromSequence");
        ctx.set_output(0, new_axis ? stack_tensors(seq, ax) : concat_tensors(seq, ax));
    };
}

// Split sizes for SplitToSequence: from the `split` input (scalar or list) or all ones.
std::vector<int64_t> split_sizes(KernelContext& ctx, int64_t dim) {
    if (!ctx.has_input(1)) return std::vector<int64_t>(static_cast<size_t>(dim), 1);
    const Tensor& s = ctx.input(1);
    std::vector<int64_t> v = to_int64_vector(s, "SplitToSequence");
    if (s.rank() == 0) {
        const int64_t chunk = v[0];
        if (chunk <= 0) fail("SplitToSequence: split must be positive");
        std::vector<int64_t> sizes(static_cast<size_t>(dim / chunk), chunk);
        if (dim % chunk) sizes.push_back(dim % chunk);
        return sizes;
    }
    int64_t total = 0;
    for (int64_t x : v) {
        if (x < 0 || x > dim - total)  // before the sum could overflow
            fail(
                "SplitToSequence: split sizes must not be negative or add up past the axis "
                "length " +
                std::to_string(dim));
        total += x;
    }
    if (total != dim) fail("SplitToSequence: split sizes do not add up to the axis length");
    return v;
}

KernelFn make_split_to_sequence(const Attrs& a, int64_t) {
    const int64_t axis = a.get_int("axis", 0);
    const bool keepdims = a.get_flag("keepdims", true);
    return [axis, keepdims](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        const int64_t ax = normalize_axis(axis, x.rank(), "SplitToSequence");
        const int64_t dim = x.dims()[static_cast<size_t>(ax)];
        const bool squeeze = !ctx.has_input(1) && !keepdims;
        std::vector<Tensor> out;
        int64_t start = 0;
        for (int64_t size : split_sizes(ctx, dim)) {
            out.push_back(squeeze ? select_along(x, ax, start) : narrow_along(x, ax, start, size));
            start += size;
        }
        ctx.set_output(0, RtValue::of_sequence(std::move(out)));
    };
}

KernelFn make_sequence_map(const Attrs& a, int64_t) {
    const ir::Graph* body = a.get_graph("body");
    if (!body) fail("SequenceMap: missing body");
    return [body](KernelContext& ctx) {
        const size_t n = input_sequence(ctx, 0, "SequenceMap").size();
        for (size_t i = 1; i < ctx.num_inputs(); ++i) {
            const RtValue* v = ctx.value(i);
            if (!v) fail("SequenceMap: input " + std::to_string(i) + " is missing");
            if (v->is_sequence() && v->sequence().size() != n)
                fail("SequenceMap: input " + std::to_string(i) + " holds " +
                     std::to_string(v->sequence().size()) + " tensors, input 0 " +
                     std::to_string(n));
        }
        std::vector<std::vector<Tensor>> outs(body->outputs().size());
        for (size_t it = 0; it < n; ++it) {
            std::vector<RtValue> in;
            for (size_t i = 0; i < ctx.num_inputs(); ++i) {
                const RtValue* v = ctx.value(i);
                in.push_back(v->is_sequence() ? RtValue::of(v->sequence().at(it)) : *v);
            }
            auto res = ctx.subgraphs().run(*body, std::move(in));
            for (size_t k = 0; k < res.size(); ++k) outs[k].push_back(res[k].tensor());
        }
        for (size_t k = 0; k < outs.size(); ++k)
            ctx.set_output(k, RtValue::of_sequence(std::move(outs[k])));
    };
}

KernelFn make_optional(const Attrs&, int64_t) {
    return
        [](KernelContext& ctx) { ctx.set_output(0, ctx.has_input(0) ? *ctx.value(0) : RtValue()); };
}

KernelFn make_optional_has_element(const Attrs&, int64_t) {
    return [](KernelContext& ctx) { ctx.set_output(0, make_scalar_bool(ctx.has_input(0))); };
}

KernelFn make_optional_get_element(const Attrs&, int64_t) {
    return [](KernelContext& ctx) {
        if (!ctx.has_input(0)) fail("OptionalGetElement: the optional is empty");
        ctx.set_output(0, *ctx.value(0));
    };
}

}  // namespace

void register_sequence_ops(OpTable& t) {
    using C = NumericContract;
    t.add("SequenceConstruct", 11, C::kExact, make_sequence_construct);
    t.add("SequenceEmpty", 11, C::kExact, make_sequence_empty);
    t.add("SequenceAt", 11, C::kExact, make_sequence_at);
    t.add("SequenceInsert", 11, C::kExact, make_sequence_insert);
    t.add("SequenceErase", 11, C::kExact, make_sequence_erase);
    t.add("SequenceLength", 11, C::kExact, make_sequence_length);
    t.add("ConcatFromSequence", 11, C::kExact, make_concat_from_sequence);
    t.add("SplitToSequence", 11, C::kExact, make_split_to_sequence);
    t.add("SequenceMap", 17, C::kExact, make_sequence_map);
    t.add("Optional", 15, C::kExact, make_optional);
    t.add("OptionalHasElement", 15, C::kExact, make_optional_has_element);
    t.add("OptionalGetElement", 15, C::kExact, make_optional_get_element);
}

}  // namespace pg::ops
