// QLinearMatMul and MatMulInteger with per-row (a) and per-column (b) zero points and scales,
// in the spec's 1-D and N-D forms, and the shapes that are neither.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/error.h"
#include "support/expect_error.h"
#include "support/op_runner.h"

namespace pg {
namespace {

using test::f32;
using test::run_op;

Tensor u8(std::vector<int64_t> dims, std::vector<uint8_t> v) {
    return Tensor::from_values(DataType::kUInt8, std::move(dims), v);
}

std::vector<double> values(const Tensor& t) {
    std::vector<double> v;
    for (uint64_t i = 0; i < t.numel(); ++i) v.push_back(t.element_as_double(i));
    return v;
}

// a' = a - zp_row = [[0, 10], [10, 20]], b' = b - zp_col = [[1, 1, 1], [4, 4, 4]]; a'b' =
// [[40 x3], [90 x3]]; times a_scale[m] * b_scale[n] / 1: [[20, 40, 80], [22.5 -> 22, 45, 90]].
const std::vector<double> kPerRowColumn = {20, 40, 80, 22, 45, 90};

std::vector<Tensor> qlinear_inputs(std::vector<int64_t> a_param, std::vector<int64_t> b_param) {
    return {u8({2, 2}, {10, 20, 30, 40}),
            f32(a_param, {0.5f, 0.25f}),
            u8(a_param, {10, 20}),
            u8({2, 3}, {1, 2, 3, 4, 5, 6}),
            f32(b_param, {1, 2, 4}),
            u8(b_param, {0, 1, 2}),
            f32({}, {1}),
            u8({}, {0})};
}

TEST(OpsQuantMatmul, QLinearMatMulTakesPerRowAndPerColumnParameters) {
    EXPECT_EQ(values(run_op("QLinearMatMul", qlinear_inputs({2}, {3}), {}, 21)[0]), kPerRowColumn);
    // The N-D forms [M, 1] and [1, N] mean the same.
    EXPECT_EQ(values(run_op("QLinearMatMul", qlinear_inputs({2, 1}, {1, 3}), {}, 21)[0]),
              kPerRowColumn);
}

TEST(OpsQuantMatmul, BatchedParametersFollowTheirBatch) {
    // Two batches of a = [[1]], b = [[1]]: a_scale [2, 1, 1] scales each batch's row.
    const std::vector<Tensor> in = {u8({2, 1, 1}, {4, 4}), f32({2, 1, 1}, {1, 2}),
                                    u8({2, 1, 1}, {0, 0}), u8({1, 1}, {3}),
                                    f32({}, {1}),          u8({}, {0}),
                                    f32({}, {1}),          u8({}, {0})};
    EXPECT_EQ(values(run_op("QLinearMatMul", in, {}, 21)[0]), (std::vector<double>{12, 24}));
}

TEST(OpsQuantMatmul, MatMulIntegerShiftsRowsAndColumns) {
    const Tensor a = u8({2, 2}, {10, 20, 30, 40}), b = u8({2, 3}, {1, 2, 3, 4, 5, 6});
    const auto out = run_op("MatMulInteger", {a, b, u8({2}, {10, 20}), u8({3}, {0, 1, 2})}, {}, 10);
    EXPECT_EQ(values(out[0]), (std::vector<double>{40, 40, 40, 90, 90, 90}));
}

TEST(OpsQuantMatmul, ParametersOfOtherShapesAreRefused) {
    const auto refused = [](std::vector<Tensor> in, const std::string& text) {
        test::expect_error([&] { run_op("QLinearMatMul", in, {}, 21); }, ErrorKind::kInvalidInput,
                           text);
    };
    std::vector<Tensor> in = qlinear_inputs({2}, {3});
    in[1] = f32({3}, {1, 1, 1});  // three row scales for two rows
    refused(in, "QLinearMatMul: a scale of shape [3] for input A of shape [2, 2]");
    in = qlinear_inputs({2}, {3});
    in[2] = u8({1, 2}, {0, 0});  // varies along K
    refused(in,
            "a zero point of shape [1, 2] for input A of shape [2, 2] (a scalar, or one value "
            "per row");
    in = qlinear_inputs({2}, {3});
    in[4] = f32({3, 1}, {1, 1, 1});  // per row of b
    refused(in, "a scale of shape [3, 1] for input B of shape [2, 3]");
    in = qlinear_inputs({2}, {3});
    in[6] = f32({2}, {1, 1});
    refused(in, "y_scale: expected a single value, got 2");
}

}  // namespace
}  // namespace pg
