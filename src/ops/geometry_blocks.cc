// Region and block ops: RoiAlign (opset 10: output_half_pixel; opset 16: coordinate mode
// attribute, default half_pixel; avg and max modes as ONNX's reference computes them), Col2Im
// (18, N-D) and CenterCropPad (18). RoiAlign computes in double (float16/bfloat16 via float32);
// Col2Im sums in T in ONNX's order; CenterCropPad moves elements of any type.
#include <cmath>

#include "base/heap.h"
#include "ir/graph.h"
#include "ops/dispatch.h"
#include "ops/half.h"
#include "ops/op_table.h"
#include "ops/tensor_shape_take.h"
#include "ops/tensor_util.h"

namespace pg::ops {

namespace {

struct RoiConfig {
    bool half_pixel = false, max_mode = false;
    int64_t out_h = 1, out_w = 1, sampling_ratio = 0;
    double spatial_scale = 1.0;
};

// One bilinear sample: four flat positions and weights (all zero outside the map).
struct RoiSample {
    int64_t pos[4] = {0, 0, 0, 0};
    double w[4] = {0, 0, 0, 0};
};

RoiSample roi_sample(double y, double x, int64_t h, int64_t w) {
    RoiSample s;
    if (y < -1.0 || y > double(h) || x < -1.0 || x > double(w)) return s;
    y = std::max(y, 0.0);
    x = std::max(x, 0.0);
    int64_t y0 = static_cast<int64_t>(y), x0 = static_cast<int64_t>(x), y1 = y0 + 1, x1 = x0 + 1;
    if (y0 >= h - 1) y = double(y0 = y1 = h - 1);
    if (x0 >= w - 1) x = double(x0 = x1 = w - 1);
    const double ly = y - double(y0), lx = x - double(x0), hy = 1 - ly, hx = 1 - lx;
    s = {{y0 * w + x0, y0 * w + x1, y1 * w + x0, y1 * w + x1},
         {hy * hx, hy * lx, ly * hx, ly * lx}};
    return s;
}

// Samples of one ROI, bin by bin (row-major), grid_h * grid_w per bin.
std::vector<RoiSample> roi_samples(const RoiConfig& c, const double* box, int64_t h, int64_t w,
                                   int64_t* count) {
    const double off = c.half_pixel ? 0.5 : 0.0;
    const double x0 = box[0] * c.spatial_scale - off, y0 = box[1] * c.spatial_scale - off;
    double rw = box[2] * c.spatial_scale - off - x0, rh = box[3] * c.spatial_scale - off - y0;
    if (!c.half_pixel) rw = std::max(rw, 1.0), rh = std::max(rh, 1.0);
    if (!std::isfinite(x0) || !std::isfinite(y0) || !std::isfinite(rw) || !std::isfinite(rh))
        fail("RoiAlign: a roi coordinate is not finite");
    const double bh = rh / double(c.out_h), bw = rw / double(c.out_w);
    const double grid_h = c.sampling_ratio > 0 ? double(c.sampling_ratio) : std::ceil(rh / c.out_h);
    const double grid_w = c.sampling_ratio > 0 ? double(c.sampling_ratio) : std::ceil(rw / c.out_w);
    // A huge roi asks for a grid of as many samples per bin (adaptive sampling_ratio): refused
    // when one roi's samples would not fit this machine's memory, before the casts and the loops.
    const double samples =
        std::max(grid_h, 0.0) * std::max(grid_w, 0.0) * double(c.out_h) * double(c.out_w);
    require_memory_for(samples * sizeof(RoiSample), "RoiAlign's samples of one roi");
    const int64_t gh = int64_t(grid_h), gw = int64_t(grid_w);
    *count = std::max<int64_t>(gh * gw, 1);
    std::vector<RoiSample> out;
    for (int64_t ph = 0; ph < c.out_h; ++ph)
        for (int64_t pw = 0; pw < c.out_w; ++pw)
            for (int64_t iy = 0; iy < gh; ++iy)
                for (int64_t ix = 0; ix < gw; ++ix)
                    out.push_back(roi_sample(y0 + ph * bh + (iy + 0.5) * bh / double(gh),
                                             x0 + pw * bw + (ix + 0.5) * bw / double(gw), h, w));
    return out;
}

// Pools the samples of one bin: average of the interpolated values, or (max mode, as ONNX's
// reference does) the max over samples of the largest weighted corner.
double roi_pool(const RoiConfig& c, const RoiSample* s, int64_t n, int64_t count,
                const double* plane) {
    double acc = 0;
    for (int64_t k = 0; k < n; ++k) {
        double v = c.max_mode ? -INFINITY : 0.0;
        for (int q = 0; q < 4; ++q) {
            const double t = s[k].w[q] * plane[s[k].pos[q]];
            v = c.max_mode ? std::max(v, t) : v + t;
        }
        acc = !c.max_mode ? acc + v : k == 0 ? v : std::max(acc, v);
    }
    return c.max_mode ? acc : acc / double(count);
}

RoiConfig read_roi_config(const Attrs& a, int64_t opset) {
    RoiConfig c;
    const std::string coord = opset >= 16
                                  ? a.get_string("coordinate_transformation_mode", "half_pixel")
                                  : "output_half_pixel";
    if (coord != "half_pixel" && coord != "output_half_pixel")
        fail("RoiAlign: unknown coordinate_transformation_mode '" + coord + "'");
    c.half_pixel = coord == "half_pixel";
    const std::string mode = a.get_string("mode", "avg");
    if (mode != "avg" && mode != "max") fail("RoiAlign: unknown mode '" + mode + "'");
    c.max_mode = mode == "max";
    c.out_h = a.get_int("output_height", 1);
    c.out_w = a.get_int("output_width", 1);
    c.sampling_ratio = a.get_int("sampling_ratio", 0);
    c.spatial_scale = a.get_float("spatial_scale", 1.0f);
    if (c.out_h < 1 || c.out_w < 1) fail("RoiAlign: output size must be positive");
    if (int64_t bins = 0; __builtin_mul_overflow(c.out_h, c.out_w, &bins))
        fail("RoiAlign: output_height x output_width overflows int64");
    return c;
}

// Pooled values [num_rois, C, out_h, out_w] in double.
std::vector<double> roi_align(const RoiConfig& c, const Tensor& x, const Tensor& rois,
                              const std::vector<int64_t>& batch) {
    if (x.rank() != 4) fail("RoiAlign: X must be 4-D");
    const int64_t nr = static_cast<int64_t>(batch.size()), ch = x.dims()[1];
    const int64_t h = x.dims()[2], w = x.dims()[3], bins = c.out_h * c.out_w;
    if (rois.dims() != std::vector<int64_t>{nr, 4}) fail("RoiAlign: rois must be [num_rois, 4]");
    std::vector<double> xv(x.numel()), rv(rois.numel()), out;
    for (uint64_t i = 0; i < x.numel(); ++i) xv[i] = x.element_as_double(i);
    for (uint64_t i = 0; i < rois.numel(); ++i) rv[i] = rois.element_as_double(i);
    // An empty map: every sample lies outside it, so every bin is 0 (and no plane has a value
    // to read, not even the zero-weighted one at position 0).
    if (h == 0 || w == 0) return std::vector<double>(static_cast<size_t>(nr * ch * bins), 0.0);
    for (int64_t r = 0; r < nr; ++r) {
        const int64_t b = batch[size_t(r)];
        if (b < 0 || b >= x.dims()[0]) fail("RoiAlign: batch index out of range");
        int64_t count = 1;
        const auto s = roi_samples(c, &rv[size_t(r * 4)], h, w, &count);
        const int64_t per_bin = static_cast<int64_t>(s.size()) / bins;
        for (int64_t k = 0; k < ch; ++k)
            for (int64_t bin = 0; bin < bins; ++bin)
                out.push_back(roi_pool(c, s.data() + bin * per_bin, per_bin, count,
                                       &xv[size_t((b * ch + k) * h * w)]));
    }
    return out;
}

KernelFn make_roi_align(const Attrs& a, int64_t opset) {
    const RoiConfig c = read_roi_config(a, opset);
    return half_via_float([c](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        const auto batch = to_int64_vector(ctx.input(2), "RoiAlign batch_indices");
        const std::vector<double> v = roi_align(c, x, ctx.input(1), batch);
        Tensor out =
            Tensor::zeros(x.dtype(), {int64_t(batch.size()), x.dims()[1], c.out_h, c.out_w});
        dispatch_float(x.dtype(), "RoiAlign", [&]<typename T>() {
            T* dst = reinterpret_cast<T*>(out.mutable_bytes());
            for (size_t i = 0; i < v.size(); ++i) dst[i] = static_cast<T>(v[i]);
        });
        ctx.set_output(0, std::move(out));
    });
}

// Col2Im geometry per spatial axis (attributes with defaults filled in).
struct Col2ImPlan {
    std::vector<int64_t> image, block, dil, pads, strides, cols;
    int64_t block_size = 1, blocks = 1, image_size = 1;
};

Col2ImPlan plan_col2im(const Tensor& x, Col2ImPlan p) {
    const size_t r = p.image.size();
    if (p.dil.empty()) p.dil.assign(r, 1);
    if (p.pads.empty()) p.pads.assign(2 * r, 0);
    if (p.strides.empty()) p.strides.assign(r, 1);
    if (p.block.size() != r || p.dil.size() != r || p.pads.size() != 2 * r || p.strides.size() != r)
        fail("Col2Im: image_shape, block_shape and attributes must agree in rank");
    if (x.rank() != 3) fail("Col2Im: input must be [N, C * prod(block_shape), L]");
    for (size_t i = 0; i < r; ++i) {
        if (p.block[i] < 1 || p.strides[i] < 1 || p.dil[i] < 1 || p.image[i] < 0)
            fail("Col2Im: block_shape, strides and dilations must be positive");
        if (p.pads[i] < 0 || p.pads[i + r] < 0) fail("Col2Im: pads must not be negative");
        int64_t span = 0, padded = 0;  // sizes past int64 (the input sweep's huge image_shape)
        if (__builtin_mul_overflow(p.dil[i], p.block[i] - 1, &span) ||
            __builtin_add_overflow(p.image[i], p.pads[i], &padded) ||
            __builtin_add_overflow(padded, p.pads[i + r], &padded) ||
            __builtin_mul_overflow(p.block_size, p.block[i], &p.block_size) ||
            __builtin_mul_overflow(p.image_size, p.image[i], &p.image_size))
            fail("Col2Im: image_shape, block_shape and attributes give sizes past int64");
        p.cols.push_back((padded - span - 1) / p.strides[i] + 1);
        if (__builtin_mul_overflow(p.blocks, p.cols.back(), &p.blocks))
            fail("Col2Im: image_shape, block_shape and attributes give sizes past int64");
    }
    if (x.dims()[1] % p.block_size != 0 || x.dims()[2] != p.blocks)
        fail("Col2Im: input shape does not match image_shape, block_shape and attributes");
    return p;
}

// Image offset that kernel position k of block col writes to, or -1 outside the image.
int64_t col2im_target(const Col2ImPlan& p, int64_t k, int64_t col) {
    int64_t off = 0, stride = 1;
    for (size_t i = p.image.size(); i-- > 0;) {
        const int64_t idx =
            (col % p.cols[i]) * p.strides[i] - p.pads[i] + (k % p.block[i]) * p.dil[i];
        if (idx < 0 || idx >= p.image[i]) return -1;
        off += idx * stride;
        stride *= p.image[i];
        col /= p.cols[i], k /= p.block[i];
    }
    return off;
}

// Col2Im: sums column blocks [N, C * prod(block), L] back into images [N, C, *image_shape].
KernelFn make_col2im(const Attrs& a, int64_t) {
    Col2ImPlan attrs;
    attrs.dil = a.get_ints("dilations");
    attrs.pads = a.get_ints("pads");
    attrs.strides = a.get_ints("strides");
    return half_via_float([attrs](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        Col2ImPlan p = attrs;
        p.image = to_int64_vector(ctx.input(1), "Col2Im image_shape");
        p.block = to_int64_vector(ctx.input(2), "Col2Im block_shape");
        p = plan_col2im(x, p);
        std::vector<int64_t> out_dims = {x.dims()[0], x.dims()[1] / p.block_size};
        out_dims.insert(out_dims.end(), p.image.begin(), p.image.end());
        Tensor out = Tensor::zeros(x.dtype(), out_dims);
        dispatch_numeric(x.dtype(), "Col2Im", [&]<typename T>() {
            const T* src = x.data<T>();
            T* dst = reinterpret_cast<T*>(out.mutable_bytes());
            for (int64_t plane = 0; plane < out_dims[0] * out_dims[1]; ++plane)
                for (int64_t k = 0; k < p.block_size; ++k)
                    for (int64_t col = 0; col < p.blocks; ++col)
                        if (const int64_t o = col2im_target(p, k, col); o >= 0)
                            dst[plane * p.image_size + o] +=
                                src[(plane * p.block_size + k) * p.blocks + col];
        });
        ctx.set_output(0, std::move(out));
    });
}

// For each output element of CenterCropPad, the flat input index it copies (-1: padding).
std::vector<int64_t> crop_pad_sources(const std::vector<int64_t>& in_dims,
                                      const std::vector<int64_t>& out_dims,
                                      const std::vector<int64_t>& shift) {
    std::vector<int64_t> src = ref_table(out_dims);  // refuses a hostile size first
    const uint64_t total = src.size();
    for (uint64_t o = 0; o < total; ++o) {
        int64_t in = 0, stride = 1;
        uint64_t rest = o;
        for (size_t a = out_dims.size(); a-- > 0;) {
            const int64_t i = int64_t(rest % uint64_t(out_dims[a])) + shift[a];
            rest /= uint64_t(out_dims[a]);
            if (i < 0 || i >= in_dims[a]) {
                in = -1;
                break;
            }
            in += i * stride;
            stride *= in_dims[a];
        }
        src[o] = in;
    }
    return src;
}

// CenterCropPad: output index o of an axis reads input index o + crop - pad. (ONNX's Python
// reference skips an axis whose target size equals the axis number, `if sh == a`; we follow the
// spec, which has no such case. No node test depends on it.)
KernelFn make_center_crop_pad(const Attrs& a, int64_t) {
    const std::vector<int64_t> axes_a = a.get_ints("axes");
    return [axes_a](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        const auto shape = to_int64_vector(ctx.input(1), "CenterCropPad shape");
        std::vector<int64_t> axes = normalize_axes(axes_a, x.rank(), "CenterCropPad");
        if (axes.empty())
            for (int64_t i = 0; i < x.rank(); ++i) axes.push_back(i);
        if (shape.size() != axes.size()) fail("CenterCropPad: shape must have one value per axis");
        std::vector<int64_t> out_dims = x.dims(), shift(x.dims().size(), 0);
        for (size_t k = 0; k < axes.size(); ++k) {
            const size_t ax = size_t(axes[k]);
            const int64_t dim = x.dims()[ax], want = shape[k];
            if (want < 0) fail("CenterCropPad: shape must be non-negative");
            out_dims[ax] = want;
            shift[ax] = want < dim ? (dim - want) / 2 : -((want - dim) / 2);
        }
        const std::vector<int64_t> src = crop_pad_sources(x.dims(), out_dims, shift);
        if (x.is_string()) {
            std::vector<std::string> s(src.size());
            for (size_t o = 0; o < src.size(); ++o)
                if (src[o] >= 0) s[o] = x.strings()[size_t(src[o])];
            return ctx.set_output(0, Tensor::from_strings(out_dims, std::move(s)));
        }
        Tensor out = Tensor::zeros(x.dtype(), out_dims);
        dispatch_by_size(x.dtype(), "CenterCropPad", [&]<typename T>() {
            T* dst = reinterpret_cast<T*>(out.mutable_bytes());
            for (size_t o = 0; o < src.size(); ++o)
                if (src[o] >= 0) dst[o] = x.data<T>()[src[o]];
        });
        ctx.set_output(0, std::move(out));
    };
}

}  // namespace

void register_geometry_block_ops(OpTable& t) {
    using C = NumericContract;
    t.add("RoiAlign", 10, C::kApproximate, make_roi_align);
    t.add("RoiAlign", 16, C::kApproximate, make_roi_align);
    t.add("Col2Im", 18, C::kExact, make_col2im);
    t.add("CenterCropPad", 18, C::kExact, make_center_crop_pad);
}

}  // namespace pg::ops
