// Pools and Convs whose window attributes are huge (kernels of 2^40 taps, int64's extremes as
// dilations or strides), as the attribute sweep (tests/conformance/attribute_sweep_test.cc) sets
// them: the window arithmetic must not overflow, and a pool must visit only the taps inside its
// input, so that such a model runs in the time of a small one or is refused with kInvalidInput.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "base/error.h"
#include "support/expect_error.h"
#include "support/op_runner.h"

namespace pg {
namespace {

using ir::Attribute;
using test::f32;
using test::run_op;
using test::values_f32;

constexpr int64_t kHuge = int64_t{1} << 40;
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

void expect_refused(const std::string& op, const std::vector<Tensor>& inputs,
                    std::vector<Attribute> attrs, const std::string& text) {
    test::expect_error([&] { run_op(op, inputs, std::move(attrs), 22); }, ErrorKind::kInvalidInput,
                       text);
}

// A 1-D pool over three values with SAME_UPPER pads and a kernel of 2^40: each window covers the
// whole input (before: 2^40 taps visited per output, a hang).
std::vector<Attribute> same_huge(std::vector<Attribute> more = {}) {
    std::vector<Attribute> a = ir::attrs(Attribute::make_ints("kernel_shape", {kHuge}),
                                         Attribute::make_string("auto_pad", "SAME_UPPER"));
    for (Attribute& m : more) a.push_back(std::move(m));
    return a;
}

TEST(OpsHugeWindows, PoolsVisitOnlyTheTapsInsideTheInput) {
    const Tensor x = f32({1, 1, 3}, {1.0f, 2.0f, 6.0f});
    EXPECT_EQ(values_f32(run_op("AveragePool", {x}, same_huge(), 22)[0]),
              (std::vector<float>{3.0f, 3.0f, 3.0f}));
    EXPECT_EQ(values_f32(run_op("MaxPool", {x}, same_huge(), 22)[0]),
              (std::vector<float>{6.0f, 6.0f, 6.0f}));
    const std::vector<float> lp =
        values_f32(run_op("LpPool", {x}, same_huge(ir::attrs(Attribute::make_int("p", 1))), 22)[0]);
    EXPECT_EQ(lp, (std::vector<float>{9.0f, 9.0f, 9.0f}));
    // Counting the padding: every window has all 2^40 taps before the padded input's end.
    const std::vector<float> padded = values_f32(
        run_op("AveragePool", {x},
               same_huge(ir::attrs(Attribute::make_int("count_include_pad", 1))), 22)[0]);
    for (const float v : padded) EXPECT_FLOAT_EQ(v, 9.0f / static_cast<float>(kHuge));
}

TEST(OpsHugeWindows, BlockedAndTwoDimensionalPoolsToo) {
    std::vector<float> v(2 * 16 * 9);
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 7);
    const Tensor x = f32({2, 16, 3, 3}, v);
    const auto attrs = [] {
        return ir::attrs(Attribute::make_ints("kernel_shape", {kHuge, 2}),
                         Attribute::make_string("auto_pad", "SAME_LOWER"));
    };
    const std::vector<float> y = values_f32(run_op("MaxPool", {x}, attrs(), 22, 1, 2)[0]);
    ASSERT_EQ(y.size(), v.size());
    // Output (c, h, w) sees every row and columns w - 1 and w of its plane (SAME_LOWER, kernel 2).
    for (int64_t p = 0; p < 32; ++p)
        for (int64_t w = 0; w < 3; ++w) {
            float best = -INFINITY;
            for (int64_t h = 0; h < 3; ++h)
                for (int64_t c = std::max<int64_t>(0, w - 1); c <= w; ++c)
                    best = std::max(best, v[static_cast<size_t>(p * 9 + h * 3 + c)]);
            for (int64_t h = 0; h < 3; ++h)
                EXPECT_EQ(y[static_cast<size_t>(p * 9 + h * 3 + w)], best) << p << " " << w;
        }
}

TEST(OpsHugeWindows, WindowArithmeticThatOverflowsIsRefused) {
    const Tensor x = f32({1, 1, 3, 3}, std::vector<float>(9, 1.0f));
    // 2^40 x 2^40 taps: the count a padded average divides by does not fit in int64.
    expect_refused("AveragePool", {x},
                   ir::attrs(Attribute::make_ints("kernel_shape", {kHuge, kHuge}),
                             Attribute::make_string("auto_pad", "SAME_UPPER")),
                   "overflow int64");
    // (kernel - 1) * dilation wrapped to a small extent.
    expect_refused("MaxPool", {x},
                   ir::attrs(Attribute::make_ints("kernel_shape", {3, 3}),
                             Attribute::make_ints("dilations", {kMax, 1})),
                   "overflow int64");
    // Pads, strides and extents past 2^60 (sums of a few of them overflowed in the kernels'
    // index arithmetic: the sanitizer build's attribute sweep).
    expect_refused("AveragePool", {x},
                   ir::attrs(Attribute::make_ints("kernel_shape", {1, 1}),
                             Attribute::make_ints("pads", {kMax, 0, kMax, 0})),
                   "beyond 2^60");
    expect_refused("MaxPool", {x},
                   ir::attrs(Attribute::make_ints("kernel_shape", {1, 1}),
                             Attribute::make_ints("strides", {kMax, 1})),
                   "beyond 2^60");
    const Tensor w = f32({1, 1, 1, 1}, {1.0f});
    expect_refused("ConvTranspose", {x, w},
                   ir::attrs(Attribute::make_ints("strides", {int64_t{1} << 59, 1}),
                             Attribute::make_ints("output_padding", {0, 0})),
                   "beyond 2^60");
    expect_refused("ConvTranspose", {x, w},
                   ir::attrs(Attribute::make_ints("output_shape", {kMax, 3})), "beyond 2^60");
    // pads one shorter than two per axis: read past the list (AddressSanitizer).
    expect_refused("ConvTranspose", {x, w}, ir::attrs(Attribute::make_ints("pads", {0, 0, 0})),
                   "'pads' has the wrong length");
    expect_refused("MaxUnpool", {x, test::i64({1, 1, 3, 3}, std::vector<int64_t>(9, 0))},
                   ir::attrs(Attribute::make_ints("kernel_shape", {kMax, 2}),
                             Attribute::make_ints("strides", {2, 2})),
                   "overflows int64");
}

TEST(OpsHugeWindows, AHugeStrideTakesOneWindow) {
    const Tensor x = f32({1, 1, 4}, {1.0f, 5.0f, 2.0f, 3.0f});
    constexpr int64_t kLargest = int64_t{1} << 60;  // kWindowBound
    for (const int64_t ceil : {0, 1}) {
        const std::vector<float> y =
            values_f32(run_op("MaxPool", {x},
                              ir::attrs(Attribute::make_ints("kernel_shape", {2}),
                                        Attribute::make_ints("strides", {kLargest}),
                                        Attribute::make_int("ceil_mode", ceil)),
                              22)[0]);
        EXPECT_EQ(y, (std::vector<float>{5.0f})) << "ceil_mode " << ceil;
    }
}

// An empty batch with pads of 2^40: the output has no elements but spatial sizes of 2^41 + 3,
// whose plane size (their product) overflowed in the kernels (the sanitizer build's sweep).
TEST(OpsHugeWindows, AnEmptyOutputWithHugeSpatialSizesIsDone) {
    const Tensor x = Tensor::zeros(DataType::kFloat32, {0, 1, 3, 3});
    const auto pads = [] {
        return ir::attrs(Attribute::make_ints("pads", {kHuge, kHuge, kHuge, kHuge}));
    };
    const Tensor y = run_op("Conv", {x, f32({1, 1, 1, 1}, {1.0f})}, pads(), 22)[0];
    EXPECT_EQ(y.dims(), (std::vector<int64_t>{0, 1, 2 * kHuge + 3, 2 * kHuge + 3}));
    const Tensor xi = Tensor::zeros(DataType::kInt8, {0, 1, 3, 3});
    const Tensor wi = Tensor::from_values<int8_t>(DataType::kInt8, {1, 1, 1, 1}, {1});
    EXPECT_EQ(run_op("ConvInteger", {xi, wi}, pads(), 10)[0].numel(), 0u);
}

}  // namespace
}  // namespace pg
