// Resize (opset 10, 11, 13, 18, 19) and Upsample: separable N-D interpolation with ONNX's
// coordinate transformations, nearest / linear / cubic modes, antialiasing, axes, roi and
// keep_aspect_ratio_policy. Each output coordinate of each axis gets a list of (input index,
// weight) taps; the axes are then processed one after another in float64.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "base/heap.h"
#include "ir/graph.h"
#include "ops/dispatch.h"
#include "ops/half.h"
#include "ops/op_table.h"
#include "ops/tensor_util.h"

namespace pg::ops {

namespace {

struct ResizeConfig {
    std::string mode = "nearest";
    std::string transform = "half_pixel";
    std::string nearest_mode = "round_prefer_floor";
    double cubic_a = -0.75;
    bool exclude_outside = false;
    double extrapolation = 0.0;
    bool antialias = false;
    std::vector<int64_t> axes;
    std::string aspect = "stretch";
    int input_scales = 2, input_sizes = 3, input_roi = 1;  // input positions (-1 = none)
};

struct Taps {
    std::vector<int64_t> index;  // per output coordinate: n entries
    std::vector<double> weight;
    std::vector<uint8_t> extrapolate;  // per output coordinate
    int n = 0;
};

std::vector<double> nearest_coeffs(double ratio, const std::string& mode, bool integer) {
    if (integer) return {0, 1};
    if (mode == "round_prefer_floor") return {ratio <= 0.5 ? 1.0 : 0.0, ratio > 0.5 ? 1.0 : 0.0};
    if (mode == "round_prefer_ceil") return {ratio < 0.5 ? 1.0 : 0.0, ratio >= 0.5 ? 1.0 : 0.0};
    if (mode == "floor") return {1, 0};
    if (mode == "ceil") return {0, 1};
    fail("Resize: unknown nearest_mode '" + mode + "'");
}

std::vector<double> cubic_coeffs(double r, double a) {
    const double s = 1 - r;
    return {((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a,
            ((a + 2) * r - (a + 3)) * r * r + 1, ((a + 2) * s - (a + 3)) * s * s + 1,
            ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a};
}

std::vector<double> normalized(std::vector<double> c) {
    double sum = 0;
    for (double v : c) sum += v;
    for (double& v : c) v /= sum;
    return c;
}

std::vector<double> cubic_coeffs_antialias(double r, double scale, double a) {
    scale = std::min(scale, 1.0);
    auto k = [a](double x) {
        x = std::fabs(x);
        if (x <= 1) return (a + 2) * x * x * x - (a + 3) * x * x + 1;
        if (x < 2) return a * x * x * x - 5 * a * x * x + 8 * a * x - 4 * a;
        return 0.0;
    };
    const int start = static_cast<int>(std::floor(-2 / scale) + 1), end = 2 - start;
    std::vector<double> c;
    for (int i = start; i < end; ++i) c.push_back(k(scale * (i - r)));
    return normalized(c);
}

std::vector<double> linear_coeffs_antialias(double r, double scale) {
    scale = std::min(scale, 1.0);
    const int start = static_cast<int>(std::floor(-1 / scale) + 1), footprint = 2 - 2 * start;
    std::vector<double> c;
    for (int i = start; i < start + footprint; ++i)
        c.push_back(std::clamp(1 - std::fabs((i - r) * scale), 0.0, 1.0));
    return normalized(c);
}

std::vector<double> coeffs(const ResizeConfig& c, double ratio, double scale, bool integer) {
    if (c.mode == "nearest") return nearest_coeffs(ratio, c.nearest_mode, integer);
    if (c.mode == "linear")
        return c.antialias ? linear_coeffs_antialias(ratio, scale)
                           : std::vector<double>{1 - ratio, ratio};
    if (c.mode == "cubic")
        return c.antialias ? cubic_coeffs_antialias(ratio, scale, c.cubic_a)
                           : cubic_coeffs(ratio, c.cubic_a);
    fail("Resize: unknown mode '" + c.mode + "'");
}

// The input coordinate of output coordinate x (ONNX's coordinate_transformation_mode).
double original_coordinate(const ResizeConfig& c, double x, double scale, int64_t in,
                           int64_t out_int, double roi_start, double roi_end, bool* extrapolate) {
    const double out = scale * static_cast<double>(in);
    const std::string& m = c.transform;
    if (m == "align_corners") return out == 1 ? 0.0 : x * (in - 1) / (out - 1);
    if (m == "asymmetric") return x / scale;
    // An output of length 1 reads input coordinate 0, as ONNX's text says and ONNX Runtime does
    // (ONNX's Python reference reads -0.5; only an antialiasing or cubic filter tells them apart).
    if (m == "pytorch_half_pixel") return out == 1 ? 0.0 : (x + 0.5) / scale - 0.5;
    if (m == "half_pixel") return (x + 0.5) / scale - 0.5;
    if (m == "tf_half_pixel_for_nn") return (x + 0.5) / scale;  // opset 11-12
    if (m == "half_pixel_symmetric") {
        const double adjustment = static_cast<double>(out_int) / out, center = in / 2.0;
        return center * (1 - adjustment) + (x + 0.5) / scale - 0.5;
    }
    if (m == "tf_crop_and_resize") {
        double v = out == 1 ? (roi_end - roi_start) * (in - 1) / 2
                            : x * (roi_end - roi_start) * (in - 1) / (out - 1);
        v += roi_start * (in - 1);
        *extrapolate = !(v >= 0 && v <= in - 1);  // a NaN roi too
        return v;
    }
    fail("Resize: unknown coordinate_transformation_mode '" + m + "'");
}

// The n input indices nearest to x (ties prefer the lower index), as ONNX's _get_neighbor picks
// them in the edge-padded array; returned unclamped.
std::vector<int64_t> neighbors(double x, int n) {
    const int64_t lo = static_cast<int64_t>(std::floor(x - n / 2.0)) - 1;
    std::vector<std::pair<double, int64_t>> cand;
    for (int64_t i = lo; i <= lo + n + 2; ++i)
        cand.emplace_back(std::fabs(x - static_cast<double>(i)), i);
    std::sort(cand.begin(), cand.end());
    std::vector<int64_t> out;
    for (int k = 0; k < n; ++k) out.push_back(cand[static_cast<size_t>(k)].second);
    std::sort(out.begin(), out.end());
    return out;
}

Taps make_taps(const ResizeConfig& c, int64_t in, int64_t out, double scale, double roi_start,
               double roi_end) {
    Taps t;
    for (int64_t x = 0; x < out; ++x) {
        bool extrapolate = false;
        double xo = original_coordinate(c, static_cast<double>(x), scale, in, out, roi_start,
                                        roi_end, &extrapolate);
        if (extrapolate) xo = 0;  // its taps are not read (a NaN or huge roi made no indices)
        if (!std::isfinite(xo)) fail("Resize: an input coordinate is not finite");
        const bool integer = xo == std::floor(xo);
        const double ratio = integer ? 1.0 : xo - std::floor(xo);
        std::vector<double> w = coeffs(c, ratio, scale, integer);
        const int n = static_cast<int>(w.size());
        std::vector<int64_t> idx = neighbors(xo, n);
        if (c.exclude_outside) {
            for (int k = 0; k < n; ++k)
                if (idx[static_cast<size_t>(k)] < 0 || idx[static_cast<size_t>(k)] >= in)
                    w[static_cast<size_t>(k)] = 0;
            w = normalized(w);
        }
        t.n = n;
        for (int k = 0; k < n; ++k) {
            t.index.push_back(std::clamp<int64_t>(idx[static_cast<size_t>(k)], 0, in - 1));
            t.weight.push_back(w[static_cast<size_t>(k)]);
        }
        t.extrapolate.push_back(extrapolate);
    }
    return t;
}

// Interpolates `data` (dims) along `axis` with taps, producing out_len along that axis.
std::vector<double> apply_axis(const std::vector<double>& data, std::vector<int64_t>& dims,
                               size_t axis, int64_t out_len, const Taps& t, double extrapolation) {
    int64_t outer = 1, inner = 1;
    for (size_t i = 0; i < axis; ++i) outer *= dims[i];
    for (size_t i = axis + 1; i < dims.size(); ++i) inner *= dims[i];
    const int64_t in_len = dims[axis];
    std::vector<double> out(static_cast<size_t>(outer * out_len * inner));
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t x = 0; x < out_len; ++x)
            for (int64_t i = 0; i < inner; ++i) {
                double v = 0;
                if (t.extrapolate[static_cast<size_t>(x)])
                    v = extrapolation;
                else
                    for (int k = 0; k < t.n; ++k) {
                        const size_t tap = static_cast<size_t>(x * t.n + k);
                        v += t.weight[tap] *
                             data[static_cast<size_t>((o * in_len + t.index[tap]) * inner + i)];
                    }
                out[static_cast<size_t>((o * out_len + x) * inner + i)] = v;
            }
    dims[axis] = out_len;
    return out;
}

struct Plan {
    std::vector<double> scales;
    std::vector<int64_t> out;
    std::vector<double> roi;  // 2 * rank
};

// An output dim from scale * input dim, truncated; kInvalidInput past 2^62 (and for an infinite
// scale), where the cast to int64 is undefined.
int64_t output_size(double v) {
    if (!(v < 4611686018427387904.0)) {
        char text[32];
        std::snprintf(text, sizeof text, "%.4g", v);
        fail(std::string("Resize: an output dim of ") + text + " (scale x input dim) is too large");
    }
    return static_cast<int64_t>(v);
}

// Output sizes and scales per axis from the scales or sizes input, axes and aspect policy.
Plan plan_resize(KernelContext& ctx, const ResizeConfig& c, const std::vector<int64_t>& dims) {
    const size_t r = dims.size();
    std::vector<int64_t> axes = c.axes;
    if (axes.empty())
        for (size_t i = 0; i < r; ++i) axes.push_back(static_cast<int64_t>(i));
    axes = normalize_axes(axes, static_cast<int64_t>(r), "Resize");
    Plan p{std::vector<double>(r, 1.0), dims, std::vector<double>(2 * r, 0.0)};
    for (size_t i = 0; i < r; ++i) p.roi[r + i] = 1.0;
    if (c.input_roi >= 0 && ctx.has_input(static_cast<size_t>(c.input_roi)) &&
        ctx.input(static_cast<size_t>(c.input_roi)).numel() > 0) {
        const Tensor& roi = ctx.input(static_cast<size_t>(c.input_roi));
        for (size_t k = 0; k < axes.size() && 2 * k + 1 < 2 * axes.size() + 1; ++k) {
            p.roi[static_cast<size_t>(axes[k])] = roi.element_as_double(k);
            p.roi[r + static_cast<size_t>(axes[k])] = roi.element_as_double(axes.size() + k);
        }
    }
    const bool has_sizes = c.input_sizes >= 0 &&
                           ctx.has_input(static_cast<size_t>(c.input_sizes)) &&
                           ctx.input(static_cast<size_t>(c.input_sizes)).numel() > 0;
    if (has_sizes) {
        const auto sizes =
            to_int64_vector(ctx.input(static_cast<size_t>(c.input_sizes)), "Resize sizes");
        if (sizes.size() != axes.size()) fail("Resize: sizes must have one entry per resized axis");
        for (size_t k = 0; k < axes.size(); ++k) {
            const size_t a = static_cast<size_t>(axes[k]);
            if (sizes[k] < 0)
                fail("Resize: sizes must not be negative, got " + std::to_string(sizes[k]));
            if (dims[a] == 0 && sizes[k] > 0)  // no values to sample from
                fail("Resize: axis " + std::to_string(a) + " has size 0 and cannot be resized to " +
                     std::to_string(sizes[k]));
            p.out[a] = sizes[k];
            p.scales[a] = static_cast<double>(sizes[k]) / static_cast<double>(dims[a]);
        }
        if (c.aspect != "stretch") {
            double s = c.aspect == "not_larger" ? 1e300 : -1e300;
            for (int64_t a : axes)
                s = c.aspect == "not_larger" ? std::min(s, p.scales[static_cast<size_t>(a)])
                                             : std::max(s, p.scales[static_cast<size_t>(a)]);
            for (int64_t a : axes) {
                p.scales[static_cast<size_t>(a)] = s;
                p.out[static_cast<size_t>(a)] =
                    output_size(s * static_cast<double>(dims[static_cast<size_t>(a)]) + 0.5);
            }
        }
        return p;
    }
    if (c.input_scales < 0 || !ctx.has_input(static_cast<size_t>(c.input_scales)))
        fail("Resize: give scales or sizes");
    const Tensor& st = ctx.input(static_cast<size_t>(c.input_scales));
    if (st.numel() != axes.size()) fail("Resize: scales must have one entry per resized axis");
    for (size_t k = 0; k < axes.size(); ++k) {
        const size_t a = static_cast<size_t>(axes[k]);
        p.scales[a] = st.element_as_double(k);
        if (!(p.scales[a] > 0)) fail("Resize: scales must be positive");
        p.out[a] = output_size(p.scales[a] * static_cast<double>(dims[a]));
    }
    return p;
}

// Refuses (before any table is built) a resize whose values, held as doubles axis after axis,
// could not fit in this machine's memory: sizes of 7e8 on a 1x1x2x4 input filled tables for
// minutes before the output's allocation failed.
void require_working_set(std::vector<int64_t> dims, const std::vector<int64_t>& out) {
    double most = 0;
    for (size_t a = 0; a < dims.size(); ++a) {
        double before = 1, after = 1;
        for (size_t k = 0; k < dims.size(); ++k) {
            before *= static_cast<double>(dims[k]);
            after *= static_cast<double>(k == a ? out[a] : dims[k]);
        }
        most = std::max(most, before + after);  // the axis's input and output values
        dims[a] = out[a];
    }
    require_memory_for(most * sizeof(double), "Resize to " + dims_text(out));
}

// v as the integer type T, clamped to T's range (NaN: 0): a cubic resize of integers overshoots
// the input's range near steps, and a double past T's range is undefined as a T.
template <typename T>
T saturated(double v) {
    if (std::isnan(v)) return T(0);
    if (v <= static_cast<double>(std::numeric_limits<T>::lowest()))
        return std::numeric_limits<T>::lowest();
    if (v >= static_cast<double>(std::numeric_limits<T>::max()))
        return std::numeric_limits<T>::max();
    return static_cast<T>(v);
}

KernelFn resize_kernel(ResizeConfig c) {
    return half_via_float([c](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        Plan p = plan_resize(ctx, c, x.dims());
        require_working_set(x.dims(), p.out);
        std::vector<double> data(x.numel());
        for (uint64_t i = 0; i < x.numel(); ++i) data[i] = x.element_as_double(i);
        std::vector<int64_t> dims = x.dims();
        for (size_t a = 0; a < dims.size(); ++a) {
            if (p.out[a] == dims[a] && p.scales[a] == 1.0) continue;
            Taps t = make_taps(c, dims[a], p.out[a], p.scales[a], p.roi[a], p.roi[dims.size() + a]);
            data = apply_axis(data, dims, a, p.out[a], t, c.extrapolation);
        }
        Tensor out = Tensor::zeros(x.dtype(), dims);
        dispatch_numeric(x.dtype(), "Resize", [&]<typename T>() {
            T* dst = reinterpret_cast<T*>(out.mutable_bytes());
            for (size_t i = 0; i < data.size(); ++i) {
                if constexpr (std::is_integral_v<T>)  // cubic overshoot saturates
                    dst[i] = saturated<T>(std::nearbyint(data[i]));
                else
                    dst[i] = static_cast<T>(data[i]);
            }
        });
        ctx.set_output(0, std::move(out));
    });
}

KernelFn make_resize(const Attrs& a, int64_t opset) {
    ResizeConfig c;
    c.mode = a.get_string("mode", "nearest");
    if (opset < 11) {  // Resize-10: inputs X, scales; asymmetric, floor
        c.transform = "asymmetric";
        c.nearest_mode = "floor";
        c.input_roi = -1;
        c.input_scales = 1;
        c.input_sizes = -1;
        return resize_kernel(c);
    }
    c.transform = a.get_string("coordinate_transformation_mode", "half_pixel");
    c.nearest_mode = a.get_string("nearest_mode", "round_prefer_floor");
    c.cubic_a = a.get_float("cubic_coeff_a", -0.75f);
    c.exclude_outside = a.get_flag("exclude_outside", false);
    c.extrapolation = a.get_float("extrapolation_value", 0.0f);
    if (opset >= 18) {  // Resize-18 added antialias, axes and keep_aspect_ratio_policy
        c.antialias = a.get_flag("antialias", false);
        c.axes = a.get_ints("axes");
        c.aspect = a.get_string("keep_aspect_ratio_policy", "stretch");
        if (c.aspect != "stretch" && c.aspect != "not_larger" && c.aspect != "not_smaller")
            fail("Resize: unknown keep_aspect_ratio_policy '" + c.aspect + "'");
    }
    return resize_kernel(c);
}

KernelFn make_upsample(const Attrs& a, int64_t opset) {
    ResizeConfig c;
    c.mode = a.get_string("mode", "nearest");
    c.transform = "asymmetric";
    c.nearest_mode = "floor";
    c.input_roi = -1;
    c.input_sizes = -1;
    if (opset >= 9) {
        c.input_scales = 1;
        return resize_kernel(c);
    }
    const std::vector<float> scales = a.get_floats("scales");
    KernelFn inner = resize_kernel(c);
    return [inner, scales](KernelContext& ctx) {  // scales as an attribute: feed it as input 1
        RtValue s = RtValue::of(
            Tensor::from_values(DataType::kFloat32, {static_cast<int64_t>(scales.size())}, scales));
        KernelContext c2(ctx.node(), {ctx.value(0), &s}, ctx.num_outputs(), ctx.pool(), nullptr);
        inner(c2);
        ctx.set_output(0, std::move(c2.outputs()[0]));
    };
}

}  // namespace

void register_resize_ops(OpTable& t) {
    using C = NumericContract;
    t.add("Resize", 10, C::kApproximate, make_resize);
    t.add("Upsample", 7, C::kApproximate, make_upsample);
}

}  // namespace pg::ops
