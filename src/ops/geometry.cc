// Sampling geometry: GridSample (opset 16: 4-D, bilinear/nearest/bicubic; opset 20: N-D,
// linear/nearest/cubic), AffineGrid (20) and DeformConv (19, 2-D). Interpolation is separable:
// each spatial axis gets a few (index, weight) taps after ONNX's padding rules (zeros / border /
// reflection), and the taps' products are summed, in double. float16/bfloat16 data are rounded
// from float32 results; GridSample's grid may have a different float type than X (T1 vs T2), so
// it reads both as double and returns X's type instead of using half_via_float.
// RoiAlign, Col2Im and CenterCropPad live in geometry_blocks.cc.
#include <algorithm>
#include <array>
#include <cmath>

#include "base/thread_pool.h"
#include "ir/graph.h"
#include "ops/dispatch.h"
#include "ops/half.h"
#include "ops/op_table.h"
#include "ops/tensor_util.h"

namespace pg::ops {

void register_geometry_block_ops(OpTable& t);

namespace {

// Output elements above which kernels split their loops over ctx.pool().
constexpr int64_t kParallelGrain = 1 << 14;

// Values of a float tensor of any float type as double.
std::vector<double> to_doubles(const Tensor& t) {
    std::vector<double> v(t.numel());
    for (uint64_t i = 0; i < t.numel(); ++i) v[i] = t.element_as_double(i);
    return v;
}

// A tensor of float type `dt` holding `v`; float16/bfloat16 are rounded from float32.
Tensor from_doubles(DataType dt, const std::vector<int64_t>& dims, const std::vector<double>& v,
                    const char* op) {
    const DataType compute = is_half(dt) ? DataType::kFloat32 : dt;
    Tensor out = Tensor::zeros(compute, dims);
    dispatch_float(compute, op, [&]<typename T>() {
        T* dst = reinterpret_cast<T*>(out.mutable_bytes());
        for (size_t i = 0; i < v.size(); ++i) dst[i] = static_cast<T>(v[i]);
    });
    return narrow_half(out, dt);
}

struct GridSampleConfig {
    std::string mode;     // nearest, linear, cubic
    std::string padding;  // zeros, border, reflection
    bool align = false;
    bool only_4d = false;  // opset 16
};

// Reflects x into [lo, hi] by bouncing off the nearer border until it lands inside.
double reflect(double x, double lo, double hi) {
    const double range = hi - lo;
    if (range <= 0) return lo;
    if (x < lo || x > hi) {
        const double dx = x < lo ? lo - x : x - hi;
        if (!(dx / range < 4503599627370496.0)) {  // 2^52 ranges away: no exact int64 count
            const bool even = std::fmod(std::floor(dx / range), 2.0) == 0;
            const double r = std::fmod(dx, range);
            return (x < lo) == even ? lo + r : hi - r;
        }
        const int64_t n = static_cast<int64_t>(dx / range);
        const double r = dx - static_cast<double>(n) * range;
        const bool toward_lo = (x < lo) == (n % 2 == 0);
        return toward_lo ? lo + r : hi - r;
    }
    return x;
}

std::array<double, 4> cubic_coeffs(double x) {
    constexpr double a = -0.75;
    x = std::fabs(x);
    return {((a * (x + 1) - 5 * a) * (x + 1) + 8 * a) * (x + 1) - 4 * a,
            ((a + 2) * x - (a + 3)) * x * x + 1,
            ((a + 2) * (1 - x) - (a + 3)) * (1 - x) * (1 - x) + 1,
            ((a * (2 - x) - 5 * a) * (2 - x) + 8 * a) * (2 - x) - 4 * a};
}

// Up to four (index, weight) taps along one axis; index -1 reads a zero.
struct AxisTaps {
    std::array<int64_t, 4> index{};
    std::array<double, 4> weight{};
    int n = 0;
};

// Index i of an axis of length len after padding (ONNX's _pixel_at_array).
int64_t padded_index(int64_t i, int64_t len, const std::string& padding, double lo, double hi) {
    if (padding == "zeros") return i >= 0 && i < len ? i : -1;
    if (padding == "border") return std::clamp<int64_t>(i, 0, len - 1);
    const double r = reflect(static_cast<double>(i), lo, hi);
    return std::clamp<int64_t>(static_cast<int64_t>(r), 0, len - 1);
}

// Taps of normalized coordinate g along an axis of length len.
AxisTaps axis_taps(double g, int64_t len, const GridSampleConfig& c) {
    const double lo = c.align ? 0.0 : -0.5, hi = c.align ? len - 1.0 : len - 0.5;
    double x = c.align ? (g + 1) / 2.0 * static_cast<double>(len - 1)
                       : ((g + 1) * static_cast<double>(len) - 1) / 2.0;
    if (c.mode == "nearest") x = std::nearbyint(x);
    if (x < lo || x > hi) {
        if (c.padding == "border") x = std::clamp(x, 0.0, static_cast<double>(len - 1));
        if (c.padding == "reflection") x = reflect(x, lo, hi);
    }
    // Far outside (zeros padding) or NaN, every tap reads padding: a point 3 pixels out gives
    // the same taps and keeps the int64 casts below defined.
    if (!(x >= lo - 3 && x <= hi + 3)) x = x > hi ? hi + 3 : lo - 3;
    AxisTaps t;
    const auto add = [&](int64_t i, double w) {
        t.index[static_cast<size_t>(t.n)] = padded_index(i, len, c.padding, lo, hi);
        t.weight[static_cast<size_t>(t.n++)] = w;
    };
    if (c.mode == "nearest") {
        add(static_cast<int64_t>(x), 1.0);
        return t;
    }
    const double x0 = std::floor(x), f = x - x0;
    const int64_t i0 = static_cast<int64_t>(x0);
    if (c.mode == "linear") {
        add(i0, 1 - f);
        add(i0 + 1, f);
        return t;
    }
    const auto w = cubic_coeffs(f);
    for (int k = 0; k < 4; ++k) add(i0 - 1 + k, w[static_cast<size_t>(k)]);
    return t;
}

// Sum over every tap combination of the product of weights times the pixel (zero if any
// axis reads padding). `plane` points at one channel of X with spatial dims `dims`.
double sample(const double* plane, const std::vector<int64_t>& dims,
              const std::vector<AxisTaps>& taps) {
    const size_t r = dims.size();
    std::vector<int> k(r, 0);
    double acc = 0;
    while (true) {
        double w = 1;
        int64_t off = 0;
        bool zero = false;
        for (size_t a = 0; a < r; ++a) {
            const int64_t i = taps[a].index[static_cast<size_t>(k[a])];
            zero = zero || i < 0;
            off = off * dims[a] + i;
            w *= taps[a].weight[static_cast<size_t>(k[a])];
        }
        if (!zero) acc += w * plane[off];
        size_t a = r;
        while (a-- > 0 && ++k[a] == taps[a].n) k[a] = 0;
        if (a == static_cast<size_t>(-1)) return acc;
    }
}

void check_grid_sample(const Tensor& x, const Tensor& grid, const GridSampleConfig& c) {
    if (x.rank() < 3) fail("GridSample: X must have rank >= 3");
    if (c.only_4d && x.rank() != 4) fail("GridSample: X must be 4-D before opset 20");
    if (grid.rank() != x.rank() || grid.dims()[0] != x.dims()[0] ||
        grid.dims().back() != x.rank() - 2)
        fail("GridSample: grid must have shape [N, D1, ..., Dr, r] with r = rank(X) - 2");
    for (size_t a = 2; a < x.dims().size(); ++a)
        if (x.dims()[a] < 1)
            fail("GridSample: X has an empty spatial dim (shape " + dims_text(x.dims()) +
                 "), nothing to sample");
}

KernelFn grid_sample_kernel(GridSampleConfig c) {
    return [c](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        const Tensor& grid = ctx.input(1);
        check_grid_sample(x, grid, c);
        const size_t r = static_cast<size_t>(x.rank() - 2);
        const std::vector<int64_t> in_dims(x.dims().begin() + 2, x.dims().end());
        std::vector<int64_t> out_dims = {x.dims()[0], x.dims()[1]};
        out_dims.insert(out_dims.end(), grid.dims().begin() + 1, grid.dims().end() - 1);
        int64_t in_plane = 1, out_plane = 1;
        for (size_t a = 0; a < r; ++a) in_plane *= in_dims[a], out_plane *= out_dims[a + 2];
        const std::vector<double> xv = to_doubles(x), gv = to_doubles(grid);
        std::vector<double> out(static_cast<size_t>(out_dims[0] * out_dims[1] * out_plane));
        const auto points = [&](int64_t begin, int64_t end) {  // grid points n * out_plane + p
            std::vector<AxisTaps> taps(r);
            for (int64_t q = begin; q < end; ++q) {
                const int64_t n = q / out_plane, p = q % out_plane;
                const double* g = &gv[static_cast<size_t>(q * int64_t(r))];
                for (size_t a = 0; a < r; ++a) taps[a] = axis_taps(g[r - 1 - a], in_dims[a], c);
                for (int64_t ch = 0; ch < out_dims[1]; ++ch) {
                    const int64_t plane = n * out_dims[1] + ch;
                    out[static_cast<size_t>(plane * out_plane + p)] =
                        sample(&xv[static_cast<size_t>(plane * in_plane)], in_dims, taps);
                }
            }
        };
        const int64_t total = out_dims[0] * out_plane;
        if (ctx.pool() && total * out_dims[1] > kParallelGrain)
            ctx.pool()->parallel_for(total, 256, points);
        else
            points(0, total);
        ctx.set_output(0, from_doubles(x.dtype(), out_dims, out, "GridSample"));
    };
}

KernelFn make_grid_sample(const Attrs& a, int64_t opset) {
    GridSampleConfig c;
    c.mode = a.get_string("mode", opset < 20 ? "bilinear" : "linear");
    if (opset < 20) {
        c.only_4d = true;
        if (c.mode == "bilinear")
            c.mode = "linear";
        else if (c.mode == "bicubic")
            c.mode = "cubic";
        else if (c.mode != "nearest")
            fail("GridSample: unknown mode '" + c.mode + "'");
    } else if (c.mode != "linear" && c.mode != "cubic" && c.mode != "nearest") {
        fail("GridSample: unknown mode '" + c.mode + "'");
    }
    c.padding = a.get_string("padding_mode", "zeros");
    if (c.padding != "zeros" && c.padding != "border" && c.padding != "reflection")
        fail("GridSample: unknown padding_mode '" + c.padding + "'");
    c.align = a.get_flag("align_corners", false);
    return grid_sample_kernel(c);
}

// Normalized coordinate k of an axis of length len. An axis of one pixel sits at 0 in both modes,
// as in PyTorch's affine_grid, whose grid the op reproduces (ONNX's reference divides by zero
// there with align_corners; ONNX Runtime gives +1, Eigen's LinSpaced of one value).
double base_coord(int64_t k, int64_t len, bool align) {
    if (align) return len == 1 ? 0.0 : -1.0 + 2.0 * double(k) / double(len - 1);
    return -1.0 + (2.0 * double(k) + 1.0) / double(len);
}

KernelFn make_affine_grid(const Attrs& a, int64_t) {
    const bool align = a.get_flag("align_corners", false);
    return half_via_float([align](KernelContext& ctx) {
        const Tensor& theta = ctx.input(0);
        const std::vector<int64_t> size = to_int64_vector(ctx.input(1), "AffineGrid size");
        if (size.size() != 4 && size.size() != 5) fail("AffineGrid: size must have 4 or 5 values");
        const int64_t r = static_cast<int64_t>(size.size()) - 2;
        if (theta.dims() != std::vector<int64_t>{size[0], r, r + 1})
            fail("AffineGrid: theta must have shape [N, r, r + 1]");
        const std::vector<int64_t> sp(size.begin() + 2, size.end());  // D?, H, W
        std::vector<int64_t> out_dims = {size[0]};
        out_dims.insert(out_dims.end(), sp.begin(), sp.end());
        out_dims.push_back(r);
        const int64_t points = r == 2 ? sp[0] * sp[1] : sp[0] * sp[1] * sp[2];
        const std::vector<double> th = to_doubles(theta);
        std::vector<double> out(static_cast<size_t>(size[0] * points * r));
        for (int64_t n = 0; n < size[0]; ++n)
            for (int64_t p = 0; p < points; ++p) {
                std::vector<double> h(static_cast<size_t>(r + 1), 1.0);  // (x, y[, z], 1)
                for (int64_t a = 0, rest = p; a < r; ++a) {  // a = 0 is the innermost (W) axis
                    const int64_t len = sp[static_cast<size_t>(r - 1 - a)];
                    h[static_cast<size_t>(a)] = base_coord(rest % len, len, align);
                    rest /= len;
                }
                for (int64_t i = 0; i < r; ++i) {
                    double v = 0;
                    for (int64_t j = 0; j <= r; ++j)
                        v += th[static_cast<size_t>((n * r + i) * (r + 1) + j)] *
                             h[static_cast<size_t>(j)];
                    out[static_cast<size_t>((n * points + p) * r + i)] = v;
                }
            }
        ctx.set_output(0, from_doubles(theta.dtype(), out_dims, out, "AffineGrid"));
    });
}

}  // namespace

void register_deform_conv_ops(OpTable& t);

void register_geometry_ops(OpTable& t) {
    using C = NumericContract;
    t.add("GridSample", 16, C::kApproximate, make_grid_sample);
    t.add("GridSample", 20, C::kApproximate, make_grid_sample);
    t.add("AffineGrid", 20, C::kApproximate, make_affine_grid);
    register_deform_conv_ops(t);
    register_geometry_block_ops(t);
}

}  // namespace pg::ops
