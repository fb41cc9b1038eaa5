#include "emu/emulation.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <set>

#include <fmt/format.h>

#include "base/error.h"
#include "ir/graph.h"

namespace pg::emu {

namespace {

float max_abs_finite(const Tensor& t) {
    float m = 0;
    const float* d = t.data<float>();
    for (uint64_t i = 0; i < t.numel(); ++i)
        if (std::isfinite(d[i])) m = std::max(m, std::fabs(d[i]));
    return m;
}

bool is_f32(const ops::RtValue* v) {
    return v && v->is_tensor() && v->tensor().dtype() == DataType::kFloat32;
}

uint64_t count_nonfinite(const Tensor& t) {
    uint64_t n = 0;
    const float* d = t.data<float>();
    for (uint64_t i = 0; i < t.numel(); ++i) n += !std::isfinite(d[i]);
    return n;
}

// Elements [begin, end) of `axis` of a float32 tensor.
Tensor slice_axis(const Tensor& t, size_t axis, int64_t begin, int64_t end) {
    std::vector<int64_t> dims = t.dims();
    int64_t outer = 1, inner = 1;
    for (size_t i = 0; i < axis; ++i) outer *= dims[i];
    for (size_t i = axis + 1; i < dims.size(); ++i) inner *= dims[i];
    const int64_t n = dims[axis];
    dims[axis] = end - begin;
    Tensor out = Tensor::zeros(DataType::kFloat32, dims);
    float* dst = reinterpret_cast<float*>(out.mutable_bytes());
    const float* src = t.data<float>();
    const size_t row = static_cast<size_t>((end - begin) * inner);
    for (int64_t o = 0; o < outer; ++o)
        std::memcpy(dst + o * (end - begin) * inner, src + (o * n + begin) * inner,
                    row * sizeof(float));
    return out;
}

int64_t int_attr(const ir::Node& n, const char* name) {
    const ir::Attribute* a = n.find_attribute(name);
    return a ? a->i : 0;
}

// The K axes of (A, B) for MatMul / Gemm, or false when blocking does not apply.
bool k_axes(const ir::Node& n, const Tensor& a, const Tensor& b, size_t& ka, size_t& kb) {
    if (a.rank() < 1 || b.rank() < 1) return false;
    if (n.op_type == "Gemm") {
        if (a.rank() != 2 || b.rank() != 2) return false;
        ka = int_attr(n, "transA") ? 0 : 1;
        kb = int_attr(n, "transB") ? 1 : 0;
    } else {
        ka = static_cast<size_t>(a.rank() - 1);
        kb = b.rank() == 1 ? 0 : static_cast<size_t>(b.rank() - 2);
    }
    return a.dims()[ka] == b.dims()[kb];
}

// Runs `kernel` on `inputs` and returns its outputs.
std::vector<ops::RtValue> call(const ops::KernelFn& kernel, const ops::KernelContext& ctx,
                               std::vector<const ops::RtValue*> inputs) {
    ops::KernelContext inner(ctx.node(), std::move(inputs), ctx.num_outputs(), ctx.pool(), nullptr);
    kernel(inner);
    return std::move(inner.outputs());
}

// Compares the float16-accumulated output `acc` with the float32-accumulated `plain` one (same
// inputs) and records the accumulation error and the storage rounding of `plain` in `e`.
void record_accumulation_error(const std::vector<ops::RtValue>& plain,
                               const std::vector<ops::RtValue>& acc, RoundingMode mode,
                               NodeEvidence& e) {
    if (plain.empty() || acc.empty() || !is_f32(&plain[0]) || !is_f32(&acc[0]) ||
        plain[0].tensor().numel() != acc[0].tensor().numel())
        return;
    const float* p = plain[0].tensor().data<float>();
    const float* a = acc[0].tensor().data<float>();
    for (uint64_t i = 0; i < plain[0].tensor().numel(); ++i) {
        if (!std::isfinite(p[i]) || !std::isfinite(a[i])) continue;
        const double r = round_to_fast(Precision::kFP16, p[i], mode);
        e.accumulation_error = std::max(e.accumulation_error, std::fabs(double{a[i]} - p[i]));
        e.accumulation_rounding = std::max(e.accumulation_rounding, std::fabs(r - p[i]));
    }
}

// MatMul / Gemm with K summed in blocks whose partial products accumulate in float16.
std::vector<ops::RtValue> call_fp16_accumulate(const ops::KernelFn& kernel,
                                               const ops::KernelContext& ctx,
                                               const std::vector<const ops::RtValue*>& in,
                                               RoundingMode mode, NodeEvidence& e) {
    size_t ka = 0, kb = 0;
    if (in.size() < 2 || !is_f32(in[0]) || !is_f32(in[1]) ||
        !k_axes(ctx.node(), in[0]->tensor(), in[1]->tensor(), ka, kb))
        return call(kernel, ctx, in);
    const Tensor& a = in[0]->tensor();
    const int64_t k = a.dims()[ka];
    std::vector<ops::RtValue> acc;
    for (int64_t b0 = 0; b0 < k || (k == 0 && b0 == 0); b0 += kAccumulateBlock) {
        const int64_t b1 = std::min(k, b0 + kAccumulateBlock);
        const bool last = b1 >= k;
        ops::RtValue sa = ops::RtValue::of(slice_axis(a, ka, b0, b1));
        ops::RtValue sb = ops::RtValue::of(slice_axis(in[1]->tensor(), kb, b0, b1));
        std::vector<const ops::RtValue*> part_in = {&sa, &sb};
        for (size_t i = 2; i < in.size(); ++i) part_in.push_back(last ? in[i] : nullptr);
        auto part = call(kernel, ctx, part_in);
        RoundingStats ignored;
        round_tensor(Precision::kFP16, part[0].tensor(), mode, ignored, ctx.pool());
        if (acc.empty()) {
            acc = std::move(part);
        } else {
            float* d = reinterpret_cast<float*>(acc[0].tensor().mutable_bytes());
            const float* p = part[0].tensor().data<float>();
            for (uint64_t i = 0; i < acc[0].tensor().numel(); ++i)
                d[i] = round_to_fast(Precision::kFP16, d[i] + p[i], mode);
        }
        if (k == 0) break;
    }
    record_accumulation_error(call(kernel, ctx, in), acc, mode, e);
    return acc;
}

// A float input rounded to a node's precision, with what the rounding did.
struct RoundedInput {
    ops::RtValue value;
    RoundingStats stats;
    bool finite = true;  // the unrounded input had no NaN/Inf
};

RoundedInput round_input(const Tensor& t, Precision p, RoundingMode mode, ThreadPool* pool) {
    RoundedInput r;
    uint64_t nonfinite_in = 0;
    r.value = ops::RtValue::of(rounded_copy(p, t, mode, r.stats, nonfinite_in, pool));
    r.finite = nonfinite_in == 0;
    return r;
}

// Initializers and Constant outputs: their rounding is cached per input slot.
bool is_constant(const ir::Value* v) {
    return v && (v->is_initializer() || (v->producer() && v->producer()->op_type == "Constant"));
}

// One rounded copy per constant input slot of a node, with the evidence of its rounding
// (replayed on every run). An entry is keyed by the source tensor's data pointer, size and
// dims, and holds a reference to the source: its buffer cannot be freed or written in place
// (copy on write) while cached, so an equal key means equal contents.
class WeightCache {
  public:
    RoundedInput get(size_t slot, const Tensor& src, Precision p, RoundingMode mode,
                     ThreadPool* pool) {
        std::lock_guard<std::mutex> lock(mu_);
        if (slot >= entries_.size()) entries_.resize(slot + 1);
        Entry& en = entries_[slot];
        if (!en.valid || en.source.bytes() != src.bytes() || en.source.nbytes() != src.nbytes() ||
            en.source.dims() != src.dims())
            en = Entry{src, round_input(src, p, mode, pool), true};
        return en.rounded;
    }

  private:
    struct Entry {
        Tensor source;
        RoundedInput rounded;
        bool valid = false;
    };
    std::mutex mu_;
    std::vector<Entry> entries_;
};

// Rounds one float32 output of a node at `p` (not TF32) and records its evidence in `e`;
// true (with the stats of checking the rounded tensor again in `again`) when it was rounded.
bool round_output(Precision p, const EmulationOptions& o, ThreadPool* pool, bool finite_in,
                  Tensor& t, NodeEvidence& e, RoundingStats& again) {
    if (p == Precision::kTF32) {
        if (finite_in) e.nonfinite_produced += count_nonfinite(t);
        return false;
    }
    RoundingStats s;
    round_tensor(p, t, o.rounding, s, again, pool);
    e.outputs.merge(s);
    if (finite_in) e.nonfinite_produced += s.nonfinite;
    return true;
}

// Fake quantization of input `slot` of INT8 node `n` (activations per tensor by name, weights
// per output channel).
RoundedInput quantize_input(const ir::Node& n, size_t slot, const Tensor& t,
                            const EmulationOptions& o) {
    RoundedInput r;
    uint64_t nonfinite_in = 0;
    std::vector<float> scales;
    size_t axis = 0;
    if (is_constant(n.input(slot))) {
        const int ax = int8_weight_axis(n, slot, t.rank());
        if (ax >= 0) {
            axis = static_cast<size_t>(ax);
            scales = int8_channel_scales(t, axis);
        } else {
            scales = {int8_scale(static_cast<double>(max_abs_finite(t)))};
        }
    } else {
        const std::string& name = n.input(slot)->name();
        const ScaleTable* table = o.int8_scales.get();
        auto it = table ? table->find(name) : ScaleTable::const_iterator{};
        if (!table || it == table->end())
            throw Error(ErrorKind::kInvalidInput,
                        "INT8 node '" + n.name + "' (" + n.op_type +
                            "): no calibration scale for its input '" + name +
                            "' (calibrate over the inputs, or check the --calibration-cache)");
        scales = {it->second};
    }
    r.value = ops::RtValue::of(fake_quant_copy(t, scales, axis, o.rounding, r.stats, nonfinite_in));
    r.finite = nonfinite_in == 0;
    return r;
}

ops::KernelFn int8_kernel(const ir::Node& n, ops::KernelFn kernel, const EmulationOptions& o,
                          EvidenceTable* evidence) {
    auto cache = std::make_shared<std::map<size_t, std::pair<Tensor, RoundedInput>>>();
    auto mu = std::make_shared<std::mutex>();
    return [&n, kernel = std::move(kernel), o, evidence, cache, mu](ops::KernelContext& ctx) {
        NodeEvidence e;
        e.op = n.op_type, e.precision = Precision::kINT8;
        std::vector<ops::RtValue> rounded(ctx.num_inputs());
        std::vector<const ops::RtValue*> in;
        bool finite_in = true;
        for (size_t i = 0; i < ctx.num_inputs(); ++i) {
            const ops::RtValue* v = ctx.value(i);
            if (!is_f32(v) || !int8_quantizes_input(n, i)) {
                in.push_back(v);
                continue;
            }
            RoundedInput r;
            if (is_constant(n.input(i))) {
                std::lock_guard<std::mutex> lock(*mu);
                auto it = cache->find(i);
                const Tensor& src = v->tensor();
                if (it == cache->end() || it->second.first.bytes() != src.bytes() ||
                    it->second.first.dims() != src.dims())
                    it =
                        cache
                            ->insert_or_assign(i, std::make_pair(src, quantize_input(n, i, src, o)))
                            .first;
                r = it->second.second;
            } else {
                r = quantize_input(n, i, v->tensor(), o);
            }
            e.inputs.merge(r.stats);
            finite_in = finite_in && r.finite;
            rounded[i] = std::move(r.value);
            in.push_back(&rounded[i]);
        }
        auto out = call(kernel, ctx, in);
        for (size_t k = 0; k < out.size(); ++k) {
            if (finite_in && is_f32(&out[k]))
                e.nonfinite_produced += count_nonfinite(out[k].tensor());
            ctx.outputs()[k] = std::move(out[k]);
        }
        if (evidence) evidence->record(n.name, std::move(e));
    };
}

// Ops whose float outputs hold only copies of their float inputs' elements (or zeros, or an
// input's negation / absolute value): with every float input representable at p, which the
// input rounding guarantees, their outputs are representable and rounding them is a no-op.
// Clip qualifies only with both bounds as inputs (rounded like any input): a missing bound or an
// opset-6 attribute bound is float32's lowest / largest value, which an infinite input clamps
// to. MaxPool with ceil_mode and reductions are left out (a window or reduction over no element
// yields float32's lowest value).
// (Data movement ops normally run as written, policy.h; they are listed for policies that
// wrap them.)
bool keeps_rounded(const ir::Node& n) {
    static const std::set<std::string> kOps = {
        "Relu",    "MaxPool", "GlobalMaxPool", "Transpose", "Concat",   "Slice",  "Gather",
        "Reshape", "Flatten", "Squeeze",       "Unsqueeze", "Identity", "Expand", "Tile",
        "Split",   "Max",     "Min",           "Neg",       "Abs",      "Clip"};
    if (!kOps.count(n.op_type)) return false;
    if (n.op_type == "Clip")
        return n.inputs().size() >= 3 && n.input(1) && n.input(2) && !n.find_attribute("min") &&
               !n.find_attribute("max");
    const ir::Attribute* ceil = n.find_attribute("ceil_mode");
    return n.op_type != "MaxPool" || !ceil || ceil->i == 0;
}

// Of keeps_rounded ops, those whose output holds exactly the elements of their float inputs
// (rearranged): its rounding stats are the merged stats of those inputs.
bool permutes_inputs(const ir::Node& n) {
    static const std::set<std::string> kOps = {"Transpose", "Concat",    "Reshape", "Flatten",
                                               "Squeeze",   "Unsqueeze", "Identity"};
    return kOps.count(n.op_type) > 0;
}

// Relu and Clip map values monotonically: on an input with no NaN/Inf whose rounded stats are
// known (`x`, with its lowest and highest value), the output's stats follow without reading
// it. False when that does not apply.
bool monotonic_stats(const ir::Node& n, const std::vector<const ops::RtValue*>& in,
                     const RoundingStats& x, RoundingStats& out) {
    if (x.nonfinite != 0 || x.values == 0 || !(x.lowest <= x.highest)) return false;
    double lo = -std::numeric_limits<double>::infinity(), hi = -lo;
    if (n.op_type == "Relu") {
        lo = 0;
    } else if (n.op_type == "Clip") {
        if (in.size() < 3 || !is_f32(in[1]) || !is_f32(in[2]) || in[1]->tensor().numel() != 1 ||
            in[2]->tensor().numel() != 1)
            return false;
        lo = in[1]->tensor().data<float>()[0], hi = in[2]->tensor().data<float>()[0];
        if (!(lo <= hi) || !std::isfinite(lo) || !std::isfinite(hi)) return false;
    } else {
        return false;
    }
    const auto f = [&](double v) { return std::min(std::max(v, lo), hi); };
    out = RoundingStats{};
    out.values = x.values;
    out.lowest = f(x.lowest), out.highest = f(x.highest);
    out.max_abs = std::max(std::fabs(out.lowest), std::fabs(out.highest));
    return true;
}

// Stats of a keeps_rounded node's output `t` without rounding it: from the inputs' known stats
// when the node permutes them or maps them monotonically, else a read-only scan.
RoundingStats kept_stats(const ir::Node& n, const std::vector<const ops::RtValue*>& in,
                         const RoundingStats* first_known, bool all_known,
                         const RoundingStats& known_inputs, size_t num_outputs, Precision p,
                         const Tensor& t, ThreadPool* pool) {
    RoundingStats s;
    if (permutes_inputs(n) && all_known && num_outputs == 1) return known_inputs;
    if (first_known && num_outputs == 1 && t.numel() == first_known->values &&
        monotonic_stats(n, in, *first_known, s))
        return s;
    return representable_stats(p, t, pool);
}

// A float32 data movement node (permutes_inputs) run as written; when its float inputs were all
// rounded by their producers to one (precision, mode), its single output holds the same
// elements, so it is recorded as rounded too, with the inputs' merged stats: the consumer then
// skips its representability check.
ops::KernelFn pass_rounding_on(const ir::Node& n, ops::KernelFn kernel, RoundedValues& rv) {
    return [&n, kernel = std::move(kernel), &rv](ops::KernelContext& ctx) {
        kernel(ctx);
        if (ctx.num_outputs() != 1 || !is_f32(&ctx.outputs()[0])) return;
        Precision p = Precision::kFP32;
        RoundingMode mode = RoundingMode::kNearestEven;
        RoundingStats merged;
        bool any = false;
        for (size_t i = 0; i < ctx.num_inputs(); ++i) {
            if (!is_f32(ctx.value(i))) continue;
            Precision pi = Precision::kFP32;
            RoundingMode mi = RoundingMode::kNearestEven;
            RoundingStats si;
            if (!rv.find_any(n.input(i), ctx.value(i)->tensor(), pi, mi, si) ||
                (any && (pi != p || mi != mode)))
                return;
            p = pi, mode = mi, any = true;
            merged.merge(si);
        }
        if (any) rv.set(n.output(0), p, mode, ctx.outputs()[0].tensor(), merged);
    };
}

bool blocks_accumulation(const ir::Node& n, Precision p, const EmulationOptions& o) {
    return o.accumulate_fp16 && p != Precision::kTF32 &&
           (n.op_type == "MatMul" || n.op_type == "Gemm");
}

// A reduced-precision node's inputs as its kernel reads them: float inputs rounded to p (or
// known rounded by their producers), everything else as given.
struct PreparedInputs {
    std::vector<ops::RtValue> rounded;    // rounded copies (sized to the input count up front)
    std::vector<const ops::RtValue*> in;  // what the kernel reads
    bool finite = true;                   // no NaN/Inf among the unrounded float inputs
    bool all_known = true;                // every float input was rounded by its producer
    RoundingStats known;                  // the merged stats of those known inputs
    bool first_known = false;             // input 0 was rounded by its producer ...
    RoundingStats first;                  // ... with these stats
};

// Rounds (or looks up) every float input of `n` at p, adding what rounding did to e.inputs.
void prepare_inputs(const ir::Node& n, const ops::KernelContext& ctx, Precision p,
                    const EmulationOptions& o, WeightCache& cache, RoundedValues* rv,
                    NodeEvidence& e, PreparedInputs& pi) {
    pi.rounded.resize(ctx.num_inputs());
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
        const ops::RtValue* v = ctx.value(i);
        if (!is_f32(v)) {
            pi.in.push_back(v);
            continue;
        }
        RoundingStats known;
        if (rv && rv->find(n.input(i), p, o.rounding, v->tensor(), known)) {
            // Rounded to p by its producer: representable, checked already.
            e.inputs.merge(known);
            pi.known.merge(known);
            if (i == 0) pi.first = known, pi.first_known = true;
            pi.finite = pi.finite && known.nonfinite == 0;
            pi.in.push_back(v);
            continue;
        }
        pi.all_known = false;
        RoundedInput r = is_constant(n.input(i))
                             ? cache.get(i, v->tensor(), p, o.rounding, ctx.pool())
                             : round_input(v->tensor(), p, o.rounding, ctx.pool());
        e.inputs.merge(r.stats);
        pi.finite = pi.finite && r.finite;
        if (r.value.tensor().bytes() == v->tensor().bytes()) {
            pi.in.push_back(v);  // already representable: no copy
            continue;
        }
        pi.rounded[i] = std::move(r.value);
        pi.in.push_back(&pi.rounded[i]);
    }
}

// Rounds the float outputs of `n` at p (or, for keeps_rounded ops, records what rounding would
// have reported), adds the evidence to `e`, records them in `rv` and hands them to `ctx`.
void finish_outputs(const ir::Node& n, ops::KernelContext& ctx, std::vector<ops::RtValue>& out,
                    Precision p, const EmulationOptions& o, const PreparedInputs& pi,
                    RoundedValues* rv, NodeEvidence& e) {
    const bool skip = o.skip_exact_rounding && p != Precision::kTF32 && keeps_rounded(n);
    for (size_t k = 0; k < out.size(); ++k) {
        RoundingStats again;
        if (is_f32(&out[k]) && skip) {
            again = kept_stats(n, pi.in, pi.first_known ? &pi.first : nullptr, pi.all_known,
                               pi.known, out.size(), p, out[k].tensor(), ctx.pool());
            RoundingStats shown = again;  // as round_tensor reports it (no lowest/highest)
            shown.lowest = RoundingStats{}.lowest, shown.highest = RoundingStats{}.highest;
            e.outputs.merge(shown);
            if (pi.finite) e.nonfinite_produced += again.nonfinite;
            if (rv) rv->set(n.output(k), p, o.rounding, out[k].tensor(), again);
        } else if (is_f32(&out[k]) &&
                   round_output(p, o, ctx.pool(), pi.finite, out[k].tensor(), e, again) && rv) {
            rv->set(n.output(k), p, o.rounding, out[k].tensor(), again);
        }
        ctx.outputs()[k] = std::move(out[k]);
    }
}

}  // namespace

bool NodeEvidence::notable() const {
    return inputs.overflow + outputs.overflow + inputs.underflow + outputs.underflow +
               nonfinite_produced + inputs.saturated >
           0;
}

void RoundedValues::next_run() {
    std::lock_guard<std::mutex> lock(mu_);
    ++run_;
}

void RoundedValues::set(const ir::Value* v, Precision p, RoundingMode mode, const Tensor& t,
                        const RoundingStats& stats) {
    if (!v) return;
    std::lock_guard<std::mutex> lock(mu_);
    entries_[v] = Entry{run_, p, mode, t.bytes(), t.nbytes(), stats};
}

bool RoundedValues::find_any(const ir::Value* v, const Tensor& t, Precision& p, RoundingMode& mode,
                             RoundingStats& stats) const {
    if (!v || t.dtype() != DataType::kFloat32 || t.numel() == 0) return false;
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(v);
    if (it == entries_.end()) return false;
    const Entry& en = it->second;
    if (en.run != run_ || en.data != t.bytes() || en.nbytes != t.nbytes()) return false;
    p = en.p, mode = en.mode, stats = en.stats;
    return true;
}

bool RoundedValues::find(const ir::Value* v, Precision p, RoundingMode mode, const Tensor& t,
                         RoundingStats& stats) const {
    Precision got_p = Precision::kFP32;
    RoundingMode got_mode = RoundingMode::kNearestEven;
    RoundingStats got;
    if (!find_any(v, t, got_p, got_mode, got) || got_p != p || got_mode != mode) return false;
    stats = got;
    return true;
}

void EvidenceTable::clear() {
    entries_.clear();
    index_.clear();
}

void EvidenceTable::record(const std::string& node, NodeEvidence e) {
    auto it = index_.find(node);
    if (it != index_.end()) {
        entries_[it->second].second = std::move(e);
        return;
    }
    index_[node] = entries_.size();
    entries_.emplace_back(node, std::move(e));
}

const NodeEvidence* EvidenceTable::find(const std::string& node) const {
    auto it = index_.find(node);
    return it == index_.end() ? nullptr : &entries_[it->second].second;
}

ops::KernelFn emulate_kernel(const ir::Node& n, ops::KernelFn kernel, Precision p,
                             const EmulationOptions& o, EvidenceTable* evidence,
                             RoundedValues* rounded_values) {
    if (p == Precision::kFP32)
        return o.skip_exact_rounding && rounded_values && permutes_inputs(n)
                   ? pass_rounding_on(n, std::move(kernel), *rounded_values)
                   : kernel;
    if (p == Precision::kINT8) return int8_kernel(n, std::move(kernel), o, evidence);
    format_spec(p);  // kINT8 is refused here, at plan time
    auto cache = std::make_shared<WeightCache>();
    return [&n, kernel = std::move(kernel), p, o, evidence, cache,
            rv = rounded_values](ops::KernelContext& ctx) {
        NodeEvidence e;
        e.op = n.op_type, e.precision = p;
        PreparedInputs pi;
        prepare_inputs(n, ctx, p, o, *cache, rv, e, pi);
        auto out = blocks_accumulation(n, p, o)
                       ? call_fp16_accumulate(kernel, ctx, pi.in, o.rounding, e)
                       : call(kernel, ctx, pi.in);
        finish_outputs(n, ctx, out, p, o, pi, rv, e);
        if (evidence) evidence->record(n.name, std::move(e));
    };
}

std::string evidence_cell(const NodeEvidence& e) {
    if (e.precision == Precision::kINT8)
        return fmt::format("sat {} of {} nan/inf {} max|x| {:.5g}", e.inputs.saturated,
                           e.inputs.values, e.nonfinite_produced, e.inputs.max_abs);
    return fmt::format("ovf {} unf {} nan/inf {} max|x| {:.5g}",
                       e.inputs.overflow + e.outputs.overflow,
                       e.inputs.underflow + e.outputs.underflow, e.nonfinite_produced,
                       std::max(e.inputs.max_abs, e.outputs.max_abs));
}

std::string int8_line(const std::string& name, const NodeEvidence& e) {
    const double ratio = e.inputs.values ? 100.0 * static_cast<double>(e.inputs.saturated) /
                                               static_cast<double>(e.inputs.values)
                                         : 0.0;
    return fmt::format(
        "{} ({}) @int8: saturated {} of {} input values ({:.4g}%), NaN/Inf produced {}, max |x| "
        "{:.6g} in, max quantization error {:.6g}",
        name, e.op, e.inputs.saturated, e.inputs.values, ratio, e.nonfinite_produced,
        e.inputs.max_abs, e.inputs.max_round_err);
}

std::vector<std::string> int8_evidence_lines(const EvidenceTable& t) {
    std::vector<std::string> out;
    for (const auto& [name, e] : t.entries())
        if (e.precision == Precision::kINT8) out.push_back(int8_line(name, e));
    return out;
}

std::vector<std::string> evidence_lines(const EvidenceTable& t) {
    std::vector<std::string> out;
    for (const auto& [name, e] : t.entries()) {
        if (!e.notable()) continue;
        if (e.precision == Precision::kINT8) {
            out.push_back(int8_line(name, e));
            continue;
        }
        out.push_back(fmt::format(
            "{} ({}) @{}: overflow {} in / {} out, underflow to zero {} in / {} out, NaN/Inf "
            "produced {}, max |x| {:.6g} in / {:.6g} out, max rounding error {:.6g}",
            name, e.op, precision_name(e.precision), e.inputs.overflow, e.outputs.overflow,
            e.inputs.underflow, e.outputs.underflow, e.nonfinite_produced, e.inputs.max_abs,
            e.outputs.max_abs, e.outputs.max_round_err));
    }
    return out;
}

}  // namespace pg::emu
