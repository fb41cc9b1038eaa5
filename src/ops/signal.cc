// Signal processing: DFT (opset 17 and 20), STFT, HannWindow, HammingWindow, BlackmanWindow.
// Plain O(n^2) transforms in float64; inputs carry complex values as a trailing dim of 2
// (or 1 for real signals).
#include <cmath>
#include <complex>

#include "ir/graph.h"
#include "ops/dispatch.h"
#include "ops/half.h"
#include "ops/op_table.h"
#include "ops/quant_util.h"
#include "ops/tensor_util.h"

namespace pg::ops {

void register_tfidf_ops(OpTable& t);  // tfidf.cc

namespace {

using cd = std::complex<double>;

// 1-D DFT of `in` zero-padded or truncated to n; inverse divides by n.
std::vector<cd> dft_1d(const std::vector<cd>& in, int64_t n, bool inverse) {
    std::vector<cd> out(static_cast<size_t>(n));
    const double sign = inverse ? 1.0 : -1.0;
    for (int64_t k = 0; k < n; ++k) {
        cd s = 0;
        for (int64_t t = 0; t < n && t < static_cast<int64_t>(in.size()); ++t)
            s += in[static_cast<size_t>(t)] *
                 std::polar(1.0, sign * 2 * M_PI * static_cast<double>(k * t % n) /
                                     static_cast<double>(n));
        out[static_cast<size_t>(k)] = inverse ? s / static_cast<double>(n) : s;
    }
    return out;
}

// The full spectrum of length n of a real signal from its first n/2 + 1 bins.
std::vector<cd> hermitian_full(const std::vector<cd>& half, int64_t n) {
    std::vector<cd> full(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) {
        const int64_t src = k <= n / 2 ? k : n - k;
        const cd v =
            src < static_cast<int64_t>(half.size()) ? half[static_cast<size_t>(src)] : cd(0);
        full[static_cast<size_t>(k)] = k <= n / 2 ? v : std::conj(v);
    }
    return full;
}

struct DftSpec {
    int64_t axis;  // signal axis in the input (excluding the trailing complex dim)
    int64_t length;
    bool inverse, onesided;
};

Tensor run_dft(const Tensor& x, const DftSpec& s) {
    const auto& d = x.dims();
    const int64_t comp = d.back(), n_in = d[static_cast<size_t>(s.axis)];
    if (comp != 1 && comp != 2) fail("DFT: the last dimension must be 1 (real) or 2 (complex)");
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < s.axis; ++i) outer *= d[static_cast<size_t>(i)];
    for (size_t i = static_cast<size_t>(s.axis) + 1; i + 1 < d.size(); ++i) inner *= d[i];
    const bool irfft = s.inverse && s.onesided;  // half spectrum in, real signal out
    const int64_t n_out = irfft ? s.length : s.onesided ? s.length / 2 + 1 : s.length;
    const int64_t out_comp = irfft ? 1 : 2;
    std::vector<int64_t> od = d;
    od[static_cast<size_t>(s.axis)] = n_out;
    od.back() = out_comp;
    std::vector<double> out = double_scratch(od, "DFT");
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
            std::vector<cd> sig;
            for (int64_t t = 0; t < n_in; ++t) {
                const uint64_t base = static_cast<uint64_t>(((o * n_in + t) * inner + i) * comp);
                sig.emplace_back(x.element_as_double(base),
                                 comp == 2 ? x.element_as_double(base + 1) : 0.0);
            }
            if (irfft) sig = hermitian_full(sig, s.length);
            auto f = dft_1d(sig, s.length, s.inverse);
            for (int64_t k = 0; k < n_out; ++k) {
                const size_t at = static_cast<size_t>(((o * n_out + k) * inner + i) * out_comp);
                out[at] = f[static_cast<size_t>(k)].real();
                if (!irfft) out[at + 1] = f[static_cast<size_t>(k)].imag();
            }
        }
    return float_tensor(x.dtype(), od, out);
}

KernelFn make_dft(const Attrs& a, int64_t opset) {
    const bool inverse = a.get_flag("inverse", false), onesided = a.get_flag("onesided", false);
    const int64_t attr_axis = opset < 20 ? a.get_int("axis", 1) : 1;  // an input from DFT-20
    return [=](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        int64_t axis = attr_axis;
        if (opset >= 20) axis = ctx.has_input(2) ? scalar_int64(ctx.input(2), "DFT axis") : -2;
        axis = normalize_axis(axis, x.rank(), "DFT");
        if (axis == x.rank() - 1) fail("DFT: axis cannot be the last (complex) dimension");
        int64_t length = x.dims()[static_cast<size_t>(axis)];
        if (inverse && onesided) length = 2 * (length - 1);
        if (ctx.has_input(1) && ctx.input(1).numel() > 0)
            length = scalar_int64(ctx.input(1), "DFT dft_length");
        if (length <= 0) fail("DFT: dft_length must be positive");
        ctx.set_output(0, run_dft(x, {axis, length, inverse, onesided}));
    };
}

KernelFn make_stft(const Attrs& a, int64_t) {
    const bool onesided = a.get_flag("onesided", true);
    return [onesided](KernelContext& ctx) {
        const Tensor& sig = ctx.input(0);  // [batch, length, 1|2]
        if (sig.rank() != 3 || (sig.dims()[2] != 1 && sig.dims()[2] != 2))
            fail("STFT: signal must be (batch, length, 1 or 2), got " + dims_text(sig.dims()));
        const int64_t step = scalar_int64(ctx.input(1), "STFT frame_step");
        const Tensor* window = ctx.has_input(2) ? &ctx.input(2) : nullptr;
        if (window && window->rank() != 1)
            fail("STFT: window must be 1-D, got " + dims_text(window->dims()));
        int64_t flen = window ? window->dims()[0] : 0;
        if (ctx.has_input(3)) flen = scalar_int64(ctx.input(3), "STFT frame_length");
        if (window && window->dims()[0] != flen)
            fail("STFT: window has " + std::to_string(window->dims()[0]) +
                 " values, frame_length is " + std::to_string(flen));
        const int64_t B = sig.dims()[0], L = sig.dims()[1], comp = sig.dims()[2];
        if (flen <= 0 || step <= 0 || flen > L) fail("STFT: invalid frame_length or frame_step");
        const int64_t frames = (L - flen) / step + 1, bins = onesided ? flen / 2 + 1 : flen;
        std::vector<double> out(static_cast<size_t>(B * frames * bins * 2));
        for (int64_t b = 0; b < B; ++b)
            for (int64_t f = 0; f < frames; ++f) {
                std::vector<cd> s;
                for (int64_t t = 0; t < flen; ++t) {
                    const uint64_t at = static_cast<uint64_t>((b * L + f * step + t) * comp);
                    const double w =
                        window ? window->element_as_double(static_cast<uint64_t>(t)) : 1.0;
                    s.emplace_back(w * sig.element_as_double(at),
                                   comp == 2 ? w * sig.element_as_double(at + 1) : 0.0);
                }
                auto y = dft_1d(s, flen, false);
                for (int64_t k = 0; k < bins; ++k) {
                    const size_t at = static_cast<size_t>(((b * frames + f) * bins + k) * 2);
                    out[at] = y[static_cast<size_t>(k)].real();
                    out[at + 1] = y[static_cast<size_t>(k)].imag();
                }
            }
        ctx.set_output(0, float_tensor(sig.dtype(), {B, frames, bins, 2}, out));
    };
}

// A window of `size` values: w(n, N) with N = size (periodic) or size - 1 (symmetric).
MakeKernel window(std::function<double(double, double)> w) {
    return [w](const Attrs& a, int64_t) {
        const bool periodic = a.get_flag("periodic", true);
        const DataType out = static_cast<DataType>(a.get_int("output_datatype", 1));
        return KernelFn([=](KernelContext& ctx) {
            const int64_t size = scalar_int64(ctx.input(0), "window size");
            if (size < 0) fail("window size must not be negative");
            const double N = periodic ? static_cast<double>(size) : static_cast<double>(size - 1);
            std::vector<double> v = double_scratch({size}, "window");
            for (int64_t n = 0; n < size; ++n)
                v[static_cast<size_t>(n)] = w(static_cast<double>(n), N);
            if (dtype_is_float(out))
                ctx.set_output(0, float_tensor(out, {size}, v));
            else {
                QuantWriter q(out, {size}, true);
                for (int64_t n = 0; n < size; ++n)
                    q.set(static_cast<uint64_t>(n), std::trunc(v[static_cast<size_t>(n)]), 0);
                ctx.set_output(0, q.take());
            }
        });
    };
}

// MelWeightMatrix as ONNX's reference computes it (including its mel_step over num_mel_bins + 2).
// The FFT bins of the num_mel_bins + 2 edges, equally spaced in mel between lo and hi Hz.
std::vector<int64_t> mel_edges(int64_t bins, int64_t dft, double rate, double lo, double hi) {
    if (!std::isfinite(rate) || !std::isfinite(lo) || !std::isfinite(hi))
        fail("MelWeightMatrix: sample_rate and the edge frequencies must be finite");
    const double mlo = 2595 * std::log10(1 + lo / 700), mhi = 2595 * std::log10(1 + hi / 700);
    const double step = (mhi - mlo) / static_cast<double>(bins + 2);
    std::vector<int64_t> f(static_cast<size_t>(bins + 2));
    for (int64_t i = 0; i < bins + 2; ++i) {
        const double hz = 700 * (std::pow(10.0, (static_cast<double>(i) * step + mlo) / 2595) - 1);
        const double bin = std::floor(static_cast<double>(dft + 1) * hz / rate);
        if (!(std::fabs(bin) < 9e18))  // NaN below -700 Hz, or past int64
            fail("MelWeightMatrix: edge frequencies " + std::to_string(lo) + " to " +
                 std::to_string(hi) + " Hz fall outside the spectrum");
        f[static_cast<size_t>(i)] = static_cast<int64_t>(bin);
    }
    return f;
}

KernelFn make_mel(const Attrs& a, int64_t) {
    const DataType out = static_cast<DataType>(a.get_int("output_datatype", 1));
    return [out](KernelContext& ctx) {
        const int64_t bins = scalar_int64(ctx.input(0), "num_mel_bins");
        const int64_t dft = scalar_int64(ctx.input(1), "dft_length");
        const double rate = scalar_value(ctx.input(2), "sample_rate");
        const double lo = scalar_value(ctx.input(3), "lower_edge_hertz"),
                     hi = scalar_value(ctx.input(4), "upper_edge_hertz");
        if (bins <= 0 || dft <= 0 || rate <= 0)
            fail("MelWeightMatrix: sizes and sample_rate must be positive");
        const int64_t spec = dft / 2 + 1;
        // The output first: its check bounds bins (and dft) before the edges take bins + 2 values.
        std::vector<double> w = double_scratch({spec, bins}, "MelWeightMatrix");
        const std::vector<int64_t> f = mel_edges(bins, dft, rate, lo, hi);
        auto at = [&](int64_t j, int64_t i) -> double& {
            if (j < 0 || j >= spec) fail("MelWeightMatrix: frequency bin out of range");
            return w[static_cast<size_t>(j * bins + i)];
        };
        for (int64_t i = 0; i < bins; ++i) {
            const int64_t l = f[static_cast<size_t>(i)], c = f[static_cast<size_t>(i + 1)],
                          r = f[static_cast<size_t>(i + 2)];
            if (c == l)
                at(c, i) = 1;
            else
                for (int64_t j = l; j <= c; ++j)
                    at(j, i) = static_cast<double>(j - l) / static_cast<double>(c - l);
            for (int64_t j = c; j < r; ++j)
                at(j, i) = static_cast<double>(r - j) / static_cast<double>(r - c);
        }
        ctx.set_output(0, float_tensor(out, {spec, bins}, w));
    };
}

}  // namespace

void register_signal_ops(OpTable& t) {
    t.add("MelWeightMatrix", 17, NumericContract::kApproximate, make_mel);
    register_tfidf_ops(t);
    using C = NumericContract;
    t.add("DFT", 17, C::kApproximate, make_dft);
    t.add("STFT", 17, C::kApproximate, make_stft);
    t.add("HannWindow", 17, C::kApproximate,
          window([](double n, double N) { return 0.5 - 0.5 * std::cos(2 * M_PI * n / N); }));
    t.add("HammingWindow", 17, C::kApproximate, window([](double n, double N) {
              const double alpha = 25.0 / 46.0;
              return alpha - (1 - alpha) * std::cos(2 * M_PI * n / N);
          }));
    t.add("BlackmanWindow", 17, C::kApproximate, window([](double n, double N) {
              return 0.42 - 0.5 * std::cos(2 * M_PI * n / N) + 0.08 * std::cos(4 * M_PI * n / N);
          }));
}

}  // namespace pg::ops
