// The fused Conv epilogue (BatchNormalization, Relu, Clip applied to each finished output tile)
// diffed against the plain kernels run one after another, on random geometries covering every
// conv path (im2col GEMM split by rows or columns, pointwise, depthwise, groups, no bias): the
// results must be bit-identical.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "base/thread_pool.h"
#include "ops/conv_kernels.h"
#include "ops/gemm_kernels.h"
#include "ops/normalization_kernels.h"
#include "support/gemm_isa.h"

namespace pg {
namespace {

struct Geometry {
    int64_t n, c, m, group, h, w, k, stride, pad;
};

TEST(OpsConvFused, EpilogueMatchesPlainKernelsBitForBit) {
    test::for_each_gemm_isa([&] {
        const Geometry cases[] = {{1, 16, 24, 1, 12, 13, 3, 1, 1},
                                  {2, 8, 40, 1, 7, 7, 3, 1, 1},  // GEMM, rows split
                                  {1, 32, 20, 1, 30, 30, 3, 2, 1},
                                  {1, 48, 64, 1, 9, 9, 1, 1, 0},  // columns; pointwise
                                  {2, 12, 12, 12, 17, 19, 3, 1, 1},
                                  {1, 8, 8, 8, 20, 20, 3, 2, 1},  // depthwise
                                  {1, 12, 18, 3, 11, 10, 3, 1, 1},
                                  {1, 300, 8, 1, 5, 5, 2, 1, 1},  // groups; k slices
                                  {2, 16, 24, 1, 20, 20, 3, 1, 1},
                                  {1, 40, 32, 2, 16, 18, 3, 1, 0},  // padded width
                                  {1, 3, 20, 1, 30, 33, 7, 2, 3},
                                  {1, 24, 100, 1, 11, 9, 3, 1, 1},  // direct: phases, rows
                                  // depthwise on maps wider than 16 columns (depthwise_fast's
                                  // padded planes, the epilogue before the stores; row tails)
                                  {1, 6, 6, 6, 13, 37, 3, 1, 1},
                                  {2, 5, 5, 5, 17, 42, 3, 2, 1}};
        std::mt19937 rng(5);
        std::uniform_real_distribution<float> val(-1.0f, 1.0f), pos(0.1f, 2.0f);
        ThreadPool pool(2);
        for (size_t t = 0; t < std::size(cases); ++t) {
            const Geometry& q = cases[t];
            ops::WindowAttrs wa;
            wa.strides = {q.stride, q.stride}, wa.pads = {q.pad, q.pad, q.pad, q.pad};
            ops::ConvShape s;
            s.n = q.n, s.c = q.c, s.m = q.m, s.group = q.group;
            s.w = ops::make_window(wa, {q.h, q.w}, {q.k, q.k}, "Conv");
            std::vector<float> x(size_t(s.n * s.c * s.w.in_size())),
                w(size_t(s.m * (s.c / s.group) * s.w.kernel_size())), b(size_t(s.m));
            std::vector<float> scale(size_t(s.m)), shift(size_t(s.m)), mean(size_t(s.m)),
                var(size_t(s.m));
            for (auto* v : {&x, &w, &b, &scale, &shift, &mean})
                for (float& e : *v) e = val(rng);
            for (float& e : var) e = pos(rng);
            const double eps = 1e-5;
            std::vector<float> k(size_t(s.m));
            for (size_t i = 0; i < k.size(); ++i)
                k[i] = static_cast<float>(scale[i] / std::sqrt(static_cast<double>(var[i]) + eps));
            const int64_t ny = s.n * s.m * s.w.out_size();
            const float* bias = t % 3 == 2 ? nullptr : b.data();
            ThreadPool* p = t % 4 == 3 ? nullptr : &pool;
            std::vector<float> res(static_cast<size_t>(ny));
            for (float& e : res) e = val(rng);
            std::vector<float> mulc(size_t(s.m)), addc(size_t(s.m));
            for (auto* v : {&mulc, &addc})
                for (float& e : *v) e = val(rng);
            // BN, BN + Relu, Clip, BN + res + Relu, res, BN + per-channel Mul and Add + Relu
            for (int act = 0; act < 6; ++act) {
                ops::GemmEpilogue ep;
                if (act < 2 || act == 3 || act == 5)
                    ep.sub = mean.data(), ep.mul = k.data(), ep.add = shift.data();
                if (act == 5) ep.scale = mulc.data(), ep.shift = addc.data();
                if (act == 1 || act == 3 || act == 5)
                    ep.clamp = true, ep.lo = 0, ep.hi = std::numeric_limits<float>::infinity();
                if (act == 2) ep.clamp = true, ep.lo = -0.25f, ep.hi = 0.5f;
                std::vector<float> fused(size_t(ny), NAN), conv(size_t(ny), NAN);
                if (act == 3 || act == 4) ep.res = res.data(), ep.res_origin = fused.data();
                ops::conv_fast(s, x.data(), w.data(), bias, fused.data(), p, &ep);
                ops::conv_fast(s, x.data(), w.data(), bias, conv.data(), p);
                std::vector<float> plain = conv;
                if (act < 2 || act == 3 || act == 5) {  // the plain BatchNormalization kernel
                    Tensor ct = Tensor::zeros(DataType::kFloat32, ops::conv_output_dims(s));
                    std::memcpy(ct.mutable_bytes(), conv.data(), conv.size() * sizeof(float));
                    ops::batch_norm_fast(ct, scale.data(), shift.data(), mean.data(), var.data(),
                                         eps, plain.data(), nullptr);
                }
                if (act == 5)  // the plain Mul and Add by [m, 1, 1]
                    for (size_t i = 0; i < plain.size(); ++i) {
                        const size_t c = (i / size_t(s.w.out_size())) % size_t(s.m);
                        plain[i] = plain[i] * mulc[c];
                        plain[i] = plain[i] + addc[c];
                    }
                if (act == 3 || act == 4)  // the plain Add
                    for (size_t i = 0; i < plain.size(); ++i) plain[i] = plain[i] + res[i];
                for (float& v : plain) {  // Relu / Clip as the activation kernels compute them
                    if (act == 1 || act == 3 || act == 5) v = v < 0.0f ? 0.0f : v;
                    if (act == 2) {
                        const float r = v < -0.25f ? -0.25f : v;
                        v = r > 0.5f ? 0.5f : r;
                    }
                }
                ASSERT_EQ(std::memcmp(fused.data(), plain.data(), plain.size() * sizeof(float)), 0)
                    << "case " << t << " act " << act;
            }
        }
    });
}

}  // namespace
}  // namespace pg
