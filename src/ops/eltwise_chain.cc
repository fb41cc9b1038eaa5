// Fused element-wise chains (see eltwise_chain.h). The output is written piece by piece: a piece
// (at most kPiece elements, inside one block over which every broadcast operand is constant)
// is copied from x and then each link is applied to it in place, so it stays in cache across
// the chain. Pieces are split over the pool in chunks (of whole blocks when blocks are shorter
// than a chunk; a piece never crosses a block's end either way). The binary links and
// Relu run 16 lanes at a time with AVX-512F where vec_current_isa() says so (the same IEEE
// operations, so the same bits), else as plain loops (which GCC vectorizes for the baseline).
#include "ops/eltwise_chain.h"

#include <algorithm>
#include <cstring>

#include "ops/broadcast.h"
#include "ops/gemm_kernels.h"
#include "ops/vec_math.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define PG_CHAIN_AVX512 1
#endif

namespace pg::ops {

namespace {

using Dims = std::vector<int64_t>;
using Op = EltwiseLink::Op;

constexpr int64_t kPiece = 1024;  // elements per in-place piece
constexpr int64_t kChunk = 1 << 14;

// Element i of the output reads element (i / inner) % mid of the operand: the same shape
// (inner 1, mid n), a single value (mid 1), or constant over blocks of `inner` elements.
struct Operand {
    const float* p = nullptr;
    int64_t inner = 1, mid = 1;
};

// The operand layout of dims d broadcast to od, if covered.
bool classify(const Dims& od, const Dims& d, int64_t n, Operand* o) {
    if (d.size() > od.size()) return false;
    Dims dd(od.size() - d.size(), 1);
    dd.insert(dd.end(), d.begin(), d.end());
    int64_t first = -1, last = -1;
    for (size_t a = 0; a < od.size(); ++a) {
        if (dd[a] != 1 && dd[a] != od[a]) return false;
        if (dd[a] != 1) last = static_cast<int64_t>(a), first = first < 0 ? last : first;
    }
    o->inner = 1, o->mid = 1;
    if (first < 0) return true;  // one value
    for (int64_t a = first; a <= last; ++a) {
        if (dd[static_cast<size_t>(a)] != od[static_cast<size_t>(a)]) return false;  // a gap
        o->mid *= od[static_cast<size_t>(a)];
    }
    for (size_t a = static_cast<size_t>(last) + 1; a < od.size(); ++a) o->inner *= od[a];
    return (o->inner == 1 && o->mid == n) || o->inner >= 8;
}

template <Op kOp>
inline float apply(float v, float c) {
    if constexpr (kOp == Op::kAdd) return v + c;
    if constexpr (kOp == Op::kSub) return v - c;
    if constexpr (kOp == Op::kMul) return v * c;
    if constexpr (kOp == Op::kDiv) return v / c;
    return v < 0.0f ? 0.0f : v;  // Relu
}

// v = v op c (or c op v when `second`) over n values; c is arr[j] when arr is set.
template <Op kOp>
void apply_run(float* v, int64_t n, bool second, const float* arr, float c) {
    if (arr && second)
        for (int64_t j = 0; j < n; ++j) v[j] = apply<kOp>(arr[j], v[j]);
    else if (arr)
        for (int64_t j = 0; j < n; ++j) v[j] = apply<kOp>(v[j], arr[j]);
    else if (second)
        for (int64_t j = 0; j < n; ++j) v[j] = apply<kOp>(c, v[j]);
    else
        for (int64_t j = 0; j < n; ++j) v[j] = apply<kOp>(v[j], c);
}

#ifdef PG_CHAIN_AVX512
#define PG_AVX512 __attribute__((target("avx512f")))

template <Op kOp>
PG_AVX512 inline __m512 apply16(__m512 v, __m512 c) {
    if constexpr (kOp == Op::kAdd) return _mm512_add_ps(v, c);
    if constexpr (kOp == Op::kSub) return _mm512_sub_ps(v, c);
    if constexpr (kOp == Op::kMul) return _mm512_mul_ps(v, c);
    if constexpr (kOp == Op::kDiv) return _mm512_div_ps(v, c);
    // Relu as apply's v < 0 ? 0 : v (NaN and -0 kept, which max would not keep)
    const __m512 zero = _mm512_setzero_ps();
    return _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(v, zero, _CMP_LT_OQ), zero);
}

// apply_run, 16 lanes at a time (the tail masked).
template <Op kOp>
PG_AVX512 void apply_run16(float* v, int64_t n, bool second, const float* arr, float c) {
    const __m512 cv = _mm512_set1_ps(c);
    for (int64_t j = 0; j < n; j += 16) {
        const __mmask16 m = n - j >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (n - j)) - 1u);
        const __m512 x = _mm512_maskz_loadu_ps(m, v + j);
        const __m512 a = arr ? _mm512_maskz_loadu_ps(m, arr + j) : cv;
        _mm512_mask_storeu_ps(v + j, m, second ? apply16<kOp>(a, x) : apply16<kOp>(x, a));
    }
}

template <Op kOp>
void apply_fast(float* v, int64_t n, bool second, const float* arr, float c) {
    if (vec_current_isa() == VecIsa::kAvx512) return apply_run16<kOp>(v, n, second, arr, c);
    apply_run<kOp>(v, n, second, arr, c);
}
#else
template <Op kOp>
void apply_fast(float* v, int64_t n, bool second, const float* arr, float c) {
    apply_run<kOp>(v, n, second, arr, c);
}
#endif

void apply_link(const EltwiseLink& l, float* v, int64_t n, const float* arr, float c) {
    switch (l.op) {
        case Op::kAdd:
            return apply_fast<Op::kAdd>(v, n, l.value_second, arr, c);
        case Op::kSub:
            return apply_fast<Op::kSub>(v, n, l.value_second, arr, c);
        case Op::kMul:
            return apply_fast<Op::kMul>(v, n, l.value_second, arr, c);
        case Op::kDiv:
            return apply_fast<Op::kDiv>(v, n, l.value_second, arr, c);
        case Op::kRelu:
            return apply_fast<Op::kRelu>(v, n, false, nullptr, 0.0f);
        case Op::kErf:
            return vec_erf(v, v, n);
    }
}

// Output elements [begin, end) of the chain.
void run_range(const std::vector<EltwiseLink>& links, const std::vector<Operand>& ops,
               const float* x, float* y, int64_t block, int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end;) {
        const int64_t len = std::min({kPiece, block - i % block, end - i});
        float* v = y + i;
        std::memcpy(v, x + i, static_cast<size_t>(len) * sizeof(float));
        size_t k = 0;
        for (const EltwiseLink& l : links) {
            if (eltwise_unary(l.op)) {
                apply_link(l, v, len, nullptr, 0.0f);
                continue;
            }
            const Operand& o = ops[k++];
            if (o.inner == 1 && o.mid > 1)
                apply_link(l, v, len, o.p + i, 0.0f);
            else
                apply_link(l, v, len, nullptr, o.p[(i / o.inner) % o.mid]);
        }
        i += len;
    }
}

}  // namespace

bool eltwise_link_of(const std::string& op, size_t inputs, EltwiseLink* out) {
    const bool binary = inputs == 2;
    if (op == "Add" && binary) return *out = {Op::kAdd}, true;
    if (op == "Sum" && binary) return *out = {Op::kAdd}, true;  // Sum of two: a + b
    if (op == "Sub" && binary) return *out = {Op::kSub}, true;
    if (op == "Mul" && binary) return *out = {Op::kMul}, true;
    if (op == "Div" && binary) return *out = {Op::kDiv}, true;
    if (op == "Relu" && inputs == 1) return *out = {Op::kRelu}, true;
    if (op == "Erf" && inputs == 1) return *out = {Op::kErf}, true;
    return false;
}

bool eltwise_unary(Op op) {
    return op == Op::kRelu || op == Op::kErf;
}

bool eltwise_chain_fast(const std::vector<EltwiseLink>& links, const Tensor& x,
                        const std::vector<const Tensor*>& operands, Tensor* out, ThreadPool* pool) {
    if (x.dtype() != DataType::kFloat32) return false;
    size_t binary = 0;
    for (const EltwiseLink& l : links) binary += !eltwise_unary(l.op);
    if (binary != operands.size()) return false;
    const int64_t n = static_cast<int64_t>(x.numel());
    std::vector<Operand> ops(operands.size());
    int64_t block = std::max<int64_t>(n, 1);  // every broadcast operand constant over a block
    for (size_t k = 0; k < operands.size(); ++k) {
        const Tensor& t = *operands[k];
        if (t.dtype() != DataType::kFloat32 || !classify(x.dims(), t.dims(), n, &ops[k]))
            return false;
        ops[k].p = t.data<float>();
        if (ops[k].mid > 1 && ops[k].inner > 1) block = std::min(block, ops[k].inner);
    }
    *out = Tensor::uninitialized(DataType::kFloat32, x.dims());
    if (n == 0) return true;
    const float* px = x.data<float>();
    float* py = reinterpret_cast<float*>(out->mutable_bytes());
    // Chunks of whole blocks when blocks are short, else of kChunk elements (run_range cuts its
    // pieces at block ends either way). A chain with no broadcast block (block = n: the
    // transformer's Gelu) took one chunk, so one thread, before.
    const int64_t chunk = block < kChunk ? kChunk / block * block : kChunk;
    run_affine(n > 2 * chunk ? pool : nullptr, (n + chunk - 1) / chunk, 1,
                 [&](int64_t b, int64_t e) {
                     run_range(links, ops, px, py, block, b * chunk, std::min(n, e * chunk));
                 });
    return true;
}

KernelFn make_eltwise_chain(std::vector<EltwiseLink> links, KernelFn plain) {
    return [links = std::move(links), plain = std::move(plain)](KernelContext& ctx) {
        bool tensors = ctx.has_input(0) && ctx.value(0)->is_tensor();
        std::vector<const Tensor*> operands;
        for (size_t i = 1; tensors && i < ctx.num_inputs(); ++i) {
            tensors = ctx.has_input(i) && ctx.value(i)->is_tensor();
            if (tensors) operands.push_back(&ctx.input(i));
        }
        Tensor y;
        if (tensors && eltwise_chain_fast(links, ctx.input(0), operands, &y, ctx.pool()))
            return ctx.set_output(0, std::move(y));
        if (tensors && !eltwise_unary(links[0].op)) {  // x is the first op's second input
            std::vector<EltwiseLink> swapped = links;
            swapped[0].value_second = true;
            operands[0] = &ctx.input(0);
            if (eltwise_chain_fast(swapped, ctx.input(1), operands, &y, ctx.pool()))
                return ctx.set_output(0, std::move(y));
        }
        plain(ctx);
    };
}

}  // namespace pg::ops
