// Dense GEMM kernels shared by MatMul, Gemm and Conv: C = alpha * op(A) * op(B) + beta * C.
// gemm_plain is the reference (the oracle: straightforward loops, accumulating in T, so float32
// accumulates in float32); gemm_fast is the float32 fast path (packed panels, register tiles of
// 12 x 32 with AVX-512F, 6 x 16 with AVX2+FMA or the x86-64 baseline, chosen at run time from
// what the CPU has; rows/columns split over the pool). Tests diff gemm_fast against
// gemm_reference on random shapes under every ISA the CPU has (tests/unit/ops_matmul_test.cc).
// To add a fast path for another type, add an overload here and diff it the same way.
#pragma once

#include <cstdint>
#include <functional>

namespace pg {
class ThreadPool;
}

namespace pg::ops {

// Per-row post-processing of the finished C (gemm_fast / gemm_fast_packed only): each column
// gets col_bias added when set, row i gets bias[i] added when bias is set, then becomes (c -
// sub[i]) * mul[i] + add[i] when sub is set (BatchNormalization's float32 arithmetic), then c *
// scale[i] and c + shift[i] when set (a per-channel Mul and Add), then gets the residual added when
// res is set (Add), then is clamped to [lo, hi] when clamp is set (Relu, Clip: v < lo ? lo : v,
// then v > hi ? hi : v). Applied to each tile of C right after its last k-slice, while it is in
// cache; the results are bit-identical to running the plain kernels afterwards.
struct GemmEpilogue {
    // Before anything else: column j gets col_bias[j] added (MatMul + Add of a bias row); the
    // column of C address q is (q - col_origin) % col_ldc.
    const float* col_bias = nullptr;
    const float* col_origin = nullptr;
    int64_t col_ldc = 0;
    const float* bias = nullptr;  // first: row i gets bias[i] added (Conv's B)
    const float* sub = nullptr;   // then (v - sub[i]) * mul[i] + add[i] (BatchNormalization)
    const float* mul = nullptr;
    const float* add = nullptr;
    const float* scale = nullptr;  // then v * scale[i] (a per-channel Mul)
    const float* shift = nullptr;  // then v + shift[i] (a per-channel Add)
    // A residual laid out like the output C belongs to (a fused Add / Sum), added after the
    // normalization and before the clamp: the value at C address q gets res[q - res_origin].
    const float* res = nullptr;
    const float* res_origin = nullptr;
    bool clamp = false;
    float lo = 0.0f, hi = 0.0f;
    // A hint, not a value: the next step reads C whole at once, so kernels that store around the
    // caches (MOVNTPS) store through them instead.
    bool keep_cached = false;
    // Applies the epilogue to n values of row i.
    void apply(int64_t i, float* row, int64_t n) const;
};

// One GEMM: op(A) is m x k, op(B) is k x n, C is m x n (row-major with leading dimensions).
template <typename T>
struct GemmArgs {
    int64_t m = 0, n = 0, k = 0;
    const T* a = nullptr;
    int64_t lda = 0;
    bool trans_a = false;  // A is stored k x m
    const T* b = nullptr;
    int64_t ldb = 0;
    bool trans_b = false;  // B is stored n x k
    T* c = nullptr;
    int64_t ldc = 0;
    T alpha = T(1);
    T beta = T(0);                           // 0: C is written without being read (may hold NaN)
    const GemmEpilogue* epilogue = nullptr;  // float32 fast paths only; nullptr = none
};

// The reference GEMM for any numeric T.
template <typename T>
void gemm_plain(const GemmArgs<T>& g) {
    for (int64_t i = 0; i < g.m; ++i) {
        for (int64_t j = 0; j < g.n; ++j) {
            T acc = T(0);
            for (int64_t p = 0; p < g.k; ++p) {
                const T av = g.trans_a ? g.a[p * g.lda + i] : g.a[i * g.lda + p];
                const T bv = g.trans_b ? g.b[j * g.ldb + p] : g.b[p * g.ldb + j];
                acc = static_cast<T>(acc + av * bv);
            }
            T& out = g.c[i * g.ldc + j];
            out = g.beta == T(0) ? static_cast<T>(g.alpha * acc)
                                 : static_cast<T>(g.alpha * acc + g.beta * out);
        }
    }
}

// float32 reference (gemm_plain<float>), the oracle of gemm_fast.
void gemm_reference(const GemmArgs<float>& g);
// float32 fast path; `pool` may be nullptr (single-threaded). m == 1 runs a matrix-vector loop.
void gemm_fast(const GemmArgs<float>& g, ThreadPool* pool);
// Whether m == 1 with a transposed B reads eight rows of B at a time where the CPU has AVX2 (on
// by default; the sums are the same either way). Tests and kernel_ab; returns the old setting.
bool set_gemv_row_blocks(bool on);

// Width of the column panels gemm_fast packs B into.
constexpr int kGemmNr = 16;
// Packs rows [p0, p0 + kc) x columns [j0, j0 + nc) of op(B) into kGemmNr-wide column panels,
// panel after panel, each kc rows of kGemmNr floats (zero past column nc).
using GemmPackB = std::function<void(int64_t p0, int64_t kc, int64_t j0, int64_t nc, float* dst)>;
// gemm_fast with op(B) produced by `pack_b` (g.b, g.ldb and g.trans_b are not read): Conv packs
// its im2col panels straight from the image.
void gemm_fast_packed(const GemmArgs<float>& g, const GemmPackB& pack_b, ThreadPool* pool);

// The instruction sets gemm_fast has micro-kernels for.
enum class GemmIsa { kBaseline, kAvx2, kAvx512 };
// Whether this build and CPU can run gemm_fast's kernels for `isa`.
bool gemm_isa_available(GemmIsa isa);
// Tests: makes gemm_fast use `isa` (the baseline when unavailable) in every thread until
// gemm_reset_isa; returns the ISA in use before.
GemmIsa gemm_force_isa(GemmIsa isa);
void gemm_reset_isa();
// The ISA gemm_fast uses now (the best available unless forced).
GemmIsa gemm_current_isa();
// Runs fn(begin, end) over [0, n) on `pool` (inline when pool is nullptr or n is 1).
void run_parallel(ThreadPool* pool, int64_t n, const std::function<void(int64_t, int64_t)>& fn);
// [0, n) as one contiguous share per pool thread, share t on thread t, run front to back in
// chunks of which a thread done early takes over the back half of another's rest
// (ThreadPool::parallel_shares; set_steal_tails): kernels that split a layer's pixels this way
// find, call after call, the pixels a thread wrote in that thread's caches, and a thread that
// the OS or the hypervisor slows holds the other up for one chunk, not its whole share. fn may
// run many ranges per thread and call. Inline when pool is null or has one thread; fn is not
// called for an empty range.
void run_parts(ThreadPool* pool, int64_t n, const std::function<void(int64_t, int64_t)>& fn);
// Work on values that a model's steps write and read in turn (element-wise ops, per-matrix
// products, per-group Convs): [0, n) as one contiguous range of at least `grain` items per pool
// thread (at most n / grain ranges), range t on thread t as run_parts, so a thread reads mostly
// what it wrote the step before; dynamically claimed chunks of `grain` or more
// (ThreadPool::parallel_for) when set_affine_parts is off. Inline when pool is null, has one
// thread, or n <= grain.
void run_affine(ThreadPool* pool, int64_t n, int64_t grain,
                const std::function<void(int64_t, int64_t)>& fn);
// Tests and benches: run_affine's contiguous ranges (on, the default) or chunks (off); returns
// the previous setting.
bool set_affine_parts(bool on);
// Tests and benches: run_parts' shares run in chunks, a thread done early taking the back half
// of what another has left (on, the default; ThreadPool::parallel_shares), or each share whole
// on one thread (off). Returns the previous setting.
bool set_steal_tails(bool on);

}  // namespace pg::ops
