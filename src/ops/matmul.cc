// Linear algebra: MatMul, Gemm, Einsum. The plain kernels (gemm_plain) are the reference;
// float32 MatMul/Gemm use gemm_fast (gemm_kernels.h), which tests diff against gemm_reference.
// float32 accumulates in float32; float16/bfloat16 are computed in float32 (half_via_float).
#include <algorithm>
#include <array>
#include <type_traits>

#include "ir/graph.h"
#include "ops/broadcast.h"
#include "ops/dispatch.h"
#include "ops/gemm_kernels.h"
#include "ops/half.h"
#include "ops/matmul_einsum.h"
#include "ops/matmul_fused.h"
#include "ops/op_table.h"

namespace pg::ops {

namespace {

template <typename T>
void run_gemm(const GemmArgs<T>& g, ThreadPool* pool) {
    if constexpr (std::is_same_v<T, float>)
        matmul_gemm_f32(g, pool);
    else
        gemm_plain(g);
}

// MatMul of batched operands with numpy semantics (1-D operands are promoted and the promoted
// axis removed from the result). When B has no batch, A's matrices are one stack of rows and the
// product is one GEMM (no per-matrix packing of B, and the fast kernel for many small matrices).
template <typename T>
Tensor matmul_tensors(const Tensor& a, const Tensor& b, ThreadPool* pool) {
    Dims da = a.dims(), db = b.dims();
    if (da.empty() || db.empty()) fail("MatMul: operands must have rank >= 1");
    const bool a_vec = da.size() == 1, b_vec = db.size() == 1;
    if (a_vec) da.insert(da.begin(), 1);
    if (b_vec) db.push_back(1);
    const int64_t m = da[da.size() - 2], k = da.back(), n = db.back();
    if (db[db.size() - 2] != k) fail("MatMul: inner dimensions differ");
    const Dims ba(da.begin(), da.end() - 2), bb(db.begin(), db.end() - 2);
    const Dims batch = broadcast_shape(ba, bb);
    Dims out_dims = batch;
    if (!a_vec) out_dims.push_back(m);
    if (!b_vec) out_dims.push_back(n);
    Tensor out = Tensor::uninitialized(a.dtype(), out_dims);
    T* dst = reinterpret_cast<T*>(out.mutable_bytes());
    int64_t a_items = 1, b_items = 1;
    for (int64_t d : ba) a_items *= d;
    for (int64_t d : bb) b_items *= d;
    if (b_items == 1 && !a_vec) {  // one B for all A matrices (stacked rows): one taller GEMM
        GemmArgs<T> g;
        g.m = a_items * m, g.n = n, g.k = k, g.a = a.data<T>(), g.lda = k;
        g.b = b.data<T>(), g.ldb = n, g.c = dst, g.ldc = n;
        run_gemm(g, pool);
        return out;
    }
    std::vector<std::array<int64_t, 3>> items;  // (a matrix, b matrix, out matrix)
    for_each_broadcast2(batch, broadcast_strides(ba, batch), broadcast_strides(bb, batch),
                        [&](int64_t o, int64_t ia, int64_t ib) {
                            items.push_back({ia, ib, o});
                        });
    // Whole matrices per thread when they are small, or when there are enough to go round (no
    // synchronization inside each product).
    const bool per_item_parallel =
        matmul_products_per_thread(static_cast<int64_t>(items.size()), m * n * k, pool);
    run_affine(per_item_parallel ? pool : nullptr, static_cast<int64_t>(items.size()), 1,
               [&](int64_t s, int64_t e) {
                   for (int64_t it = s; it < e; ++it) {
                       GemmArgs<T> g;
                       g.m = m, g.n = n, g.k = k;
                       g.a = a.data<T>() + items[it][0] * m * k, g.lda = k;
                       g.b = b.data<T>() + items[it][1] * k * n, g.ldb = n;
                       g.c = dst + items[it][2] * m * n, g.ldc = n;
                       run_gemm(g, per_item_parallel ? nullptr : pool);
                   }
               });
    return out;
}

KernelFn make_matmul(const Attrs&, int64_t) {
    return half_via_float([](KernelContext& ctx) {
        const Tensor& a = ctx.input(0);
        const Tensor& b = ctx.input(1);
        if (a.dtype() != b.dtype()) fail("MatMul: inputs have different types");
        dispatch_numeric(a.dtype(), "MatMul", [&]<typename T>() {
            ctx.set_output(0, matmul_tensors<T>(a, b, ctx.pool()));
        });
    });
}

// Y = alpha * op(A) * op(B) + beta * C, C broadcast to (M, N).
template <typename T>
Tensor gemm_tensors(const Tensor& a, const Tensor& b, const Tensor* c, bool ta, bool tb,
                    double alpha, double beta, ThreadPool* pool) {
    if (a.rank() != 2 || b.rank() != 2) fail("Gemm: A and B must be 2-D");
    const int64_t m = ta ? a.dims()[1] : a.dims()[0], k = ta ? a.dims()[0] : a.dims()[1];
    const int64_t n = tb ? b.dims()[0] : b.dims()[1], kb = tb ? b.dims()[1] : b.dims()[0];
    if (k != kb) fail("Gemm: inner dimensions differ");
    Tensor out = Tensor::uninitialized(a.dtype(), {m, n});
    T* dst = reinterpret_cast<T*>(out.mutable_bytes());
    const bool use_c = c && beta != 0.0;
    if (use_c) {
        const Dims od{m, n};
        if (broadcast_shape(c->dims(), od) != od) fail("Gemm: C cannot be broadcast to (M, N)");
        const T* pc = c->data<T>();
        for_each_broadcast2(od, broadcast_strides(c->dims(), od), Dims{0, 0},
                            [&](int64_t o, int64_t ic, int64_t) { dst[o] = pc[ic]; });
    }
    GemmArgs<T> g;
    g.m = m, g.n = n, g.k = k, g.a = a.data<T>(), g.lda = a.dims()[1], g.trans_a = ta;
    g.b = b.data<T>(), g.ldb = b.dims()[1], g.trans_b = tb, g.c = dst, g.ldc = n;
    g.alpha = static_cast<T>(alpha), g.beta = use_c ? static_cast<T>(beta) : T(0);
    run_gemm(g, pool);
    return out;
}

// Before opset 7, C broadcasts only with broadcast=1; with 0 it must be [M, N].
void check_unbroadcast_c(const Tensor& a, const Tensor& b, const Tensor& c, bool ta, bool tb) {
    if (a.rank() != 2 || b.rank() != 2) return;  // gemm_tensors refuses these
    const Dims mn{a.dims()[ta ? 1 : 0], b.dims()[tb ? 0 : 1]};
    if (c.dims() != mn)
        fail("Gemm: broadcast is 0 (opset < 7), so C must be [" + std::to_string(mn[0]) + ", " +
             std::to_string(mn[1]) + "]");
}

KernelFn make_gemm(const Attrs& at, int64_t opset) {
    const bool ta = at.get_flag("transA", false), tb = at.get_flag("transB", false);
    const double alpha = at.get_float("alpha", 1.0f), beta = at.get_float("beta", 1.0f);
    const bool c_unbroadcast = opset < 7 && !at.get_flag("broadcast", false);
    return half_via_float([=](KernelContext& ctx) {
        const Tensor& a = ctx.input(0);
        const Tensor* c = ctx.has_input(2) ? &ctx.input(2) : nullptr;
        if (ctx.input(1).dtype() != a.dtype() || (c && c->dtype() != a.dtype()))
            fail("Gemm: A, B and C must have the same type");
        if (c && c_unbroadcast) check_unbroadcast_c(a, ctx.input(1), *c, ta, tb);
        dispatch_numeric(a.dtype(), "Gemm", [&]<typename T>() {
            ctx.set_output(0, gemm_tensors<T>(a, ctx.input(1), c, ta, tb, alpha, beta, ctx.pool()));
        });
    });
}

KernelFn make_einsum(const Attrs& at, int64_t) {
    const std::string equation = at.get_string("equation", "");
    return half_via_float([equation](KernelContext& ctx) {
        std::vector<Tensor> ins;
        for (size_t i = 0; i < ctx.num_inputs(); ++i) ins.push_back(ctx.input(i));
        if (ins.empty()) fail("Einsum: needs at least one input");
        dispatch_numeric(ins[0].dtype(), "Einsum", [&]<typename T>() {
            ctx.set_output(0, einsum_reference<T>(equation, ins));
        });
    });
}

}  // namespace

void register_matmul_ops(OpTable& t) {
    using C = NumericContract;
    t.add("MatMul", 1, C::kApproximate, make_matmul);
    t.add("Gemm", 1, C::kApproximate, make_gemm);
    t.add("Einsum", 12, C::kApproximate, make_einsum);
}

}  // namespace pg::ops
