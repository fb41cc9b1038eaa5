// The MatMul over transposed views (see matmul_views.h).
#include "ops/matmul_views.h"

#include <array>
#include <utility>

#include "base/mapped_buffer.h"
#include "ops/gemm_kernels.h"
#include "ops/matmul_fused.h"
#include "ops/transpose_tiles.h"

namespace pg::ops {

namespace {

using Axes = std::array<int64_t, 4>;

// A 4-D view: its dims and the element strides of the tensor it reads.
struct View {
    Axes dims{}, strides{};
};

// Row-major strides of 4-D dims.
Axes contiguous_strides(const Axes& d) {
    return {d[1] * d[2] * d[3], d[2] * d[3], d[3], 1};
}

// `perm` is a permutation of 0..3 (empty: the identity).
bool valid_perm(const std::vector<int64_t>& perm) {
    if (perm.empty()) return true;
    if (perm.size() != 4) return false;
    std::array<bool, 4> seen{};
    for (int64_t a : perm) {
        if (a < 0 || a > 3 || seen[static_cast<size_t>(a)]) return false;
        seen[static_cast<size_t>(a)] = true;
    }
    return true;
}

// Tensor x (4-D) read through Transpose(perm): view axis i is x's axis perm[i].
View view_of(const Tensor& x, const std::vector<int64_t>& perm) {
    Axes d{};
    for (size_t i = 0; i < 4; ++i) d[i] = x.dims()[i];
    const Axes s = contiguous_strides(d);
    if (perm.empty()) return View{d, s};
    View v;
    for (size_t i = 0; i < 4; ++i) {
        v.dims[i] = d[static_cast<size_t>(perm[i])];
        v.strides[i] = s[static_cast<size_t>(perm[i])];
    }
    return v;
}

// A matrix with row stride rs and column stride cs as GEMM operand fields: unit columns (ld =
// rs) or unit rows (stored transposed, ld = cs); false when neither stride is 1.
bool operand(int64_t rs, int64_t cs, int64_t* ld, bool* trans) {
    if (cs == 1) return *ld = rs, *trans = false, true;
    if (rs == 1) return *ld = cs, *trans = true, true;
    return false;
}

// The product's layout: the output tensor's dims and the product's strides in it.
struct OutputLayout {
    std::vector<int64_t> dims;
    Axes strides{};
};

// The product c (dims cd) written through Transpose(perm): output axis i is c's axis perm[i].
OutputLayout output_layout(const Axes& cd, const std::vector<int64_t>& perm) {
    if (perm.empty()) return {{cd[0], cd[1], cd[2], cd[3]}, contiguous_strides(cd)};
    Axes yd{};
    for (size_t i = 0; i < 4; ++i) yd[i] = cd[static_cast<size_t>(perm[i])];
    const Axes ys = contiguous_strides(yd);
    OutputLayout o{{yd[0], yd[1], yd[2], yd[3]}, {}};
    for (size_t i = 0; i < 4; ++i) o.strides[static_cast<size_t>(perm[i])] = ys[i];
    return o;
}

// A matrix stored transposed (`cols` rows of `rows` values, ld apart) copied row-major into
// dst (rows x cols): the plain MatMul reads the Transpose's row-major copy, and the GEMM kernels
// choose their path by layout, so the product runs on the same layout (bit-identical).
const float* row_major(const float* src, int64_t ld, int64_t cols, int64_t rows, float* dst) {
    transpose_block32(reinterpret_cast<const uint32_t*>(src), ld, reinterpret_cast<uint32_t*>(dst),
                      cols, rows, cols);
    return dst;
}

// Runs the per-matrix GEMMs with the plain MatMul's choices (matmul_fused.h), so each product
// takes the same kernel as there.
void run_products(const View& a, const View& b, const OutputLayout& y, float* out, const float* pa,
                  const float* pb, const GemmArgs<float>& shape, ThreadPool* pool) {
    const int64_t items = a.dims[0] * a.dims[1];
    const bool per_item = matmul_products_per_thread(items, shape.m * shape.n * shape.k, pool);
    run_affine(per_item ? pool : nullptr, items, 1, [&](int64_t s, int64_t e) {
        // A transposed operand's row-major copy, in scratch the thread keeps.
        thread_local KeptArray<float> keep_a, keep_b;
        float* ta =
            shape.trans_a ? keep_a.at_least(static_cast<size_t>(shape.m * shape.k)) : nullptr;
        float* tb =
            shape.trans_b ? keep_b.at_least(static_cast<size_t>(shape.k * shape.n)) : nullptr;
        for (int64_t it = s; it < e; ++it) {
            const int64_t i0 = it / a.dims[1], i1 = it % a.dims[1];
            GemmArgs<float> g = shape;
            g.a = pa + i0 * a.strides[0] + i1 * a.strides[1];
            g.b = pb + i0 * b.strides[0] + i1 * b.strides[1];
            g.c = out + i0 * y.strides[0] + i1 * y.strides[1];
            if (g.trans_a) g.a = row_major(g.a, g.lda, g.k, g.m, ta), g.lda = g.k;
            if (g.trans_b) g.b = row_major(g.b, g.ldb, g.n, g.k, tb), g.ldb = g.n;
            g.trans_a = g.trans_b = false;
            matmul_gemm_f32(g, per_item ? nullptr : pool);
        }
    });
}

}  // namespace

KernelFn make_matmul_views(MatMulViews views, KernelFn plain) {
    const bool valid =
        valid_perm(views.perm_a) && valid_perm(views.perm_b) && valid_perm(views.perm_y);
    return [views = std::move(views), plain = std::move(plain), valid](KernelContext& ctx) {
        const Tensor& xa = ctx.input(0);
        const Tensor& xb = ctx.input(1);
        if (!valid || xa.dtype() != DataType::kFloat32 || xb.dtype() != DataType::kFloat32 ||
            xa.rank() != 4 || xb.rank() != 4)
            return plain(ctx);
        const View a = view_of(xa, views.perm_a), b = view_of(xb, views.perm_b);
        if (a.dims[0] != b.dims[0] || a.dims[1] != b.dims[1] || a.dims[3] != b.dims[2])
            return plain(ctx);
        GemmArgs<float> g;
        g.m = a.dims[2], g.k = a.dims[3], g.n = b.dims[3];
        const OutputLayout y = output_layout({a.dims[0], a.dims[1], g.m, g.n}, views.perm_y);
        if (!operand(a.strides[2], a.strides[3], &g.lda, &g.trans_a) ||
            !operand(b.strides[2], b.strides[3], &g.ldb, &g.trans_b) || y.strides[3] != 1)
            return plain(ctx);
        g.ldc = y.strides[2];
        Tensor out = Tensor::uninitialized(DataType::kFloat32, y.dims);
        float* dst = reinterpret_cast<float*>(out.mutable_bytes());
        if (out.numel() > 0 && g.k > 0)
            run_products(a, b, y, dst, xa.data<float>(), xb.data<float>(), g, ctx.pool());
        else if (out.numel() > 0)
            return plain(ctx);  // k = 0: the plain MatMul's zeros
        ctx.set_output(0, std::move(out));
    };
}

}  // namespace pg::ops
