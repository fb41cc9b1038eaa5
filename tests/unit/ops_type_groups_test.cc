// ops/type_groups.h: inputs that ONNX ties to one type must have it. Kernels computing float16 in
// float32 (ops/half.h) saw Add(float16, float32) as float32 + float32 and ran it (the input
// sweep's fp64 pass showed it: promoted to float64 the same model was refused).
#include <gtest/gtest.h>

#include <vector>

#include "base/error.h"
#include "support/expect_error.h"
#include "support/op_runner.h"

namespace pg {
namespace {

using test::f32;
using test::run_op;

Tensor f16(std::vector<int64_t> dims, std::vector<uint16_t> bits) {
    return Tensor::from_values<uint16_t>(DataType::kFloat16, std::move(dims), std::move(bits));
}

constexpr uint16_t kOne = 0x3c00, kTwo = 0x4000;

void expect_refused(const std::string& op, const std::vector<Tensor>& inputs, int64_t opset,
                    const std::string& text) {
    test::expect_error([&] { run_op(op, inputs, {}, opset); }, ErrorKind::kInvalidInput, text);
}

TEST(OpsTypeGroups, HalfAndFloatInputsOfOneTypeAreRefused) {
    expect_refused("Add", {f16({2}, {kOne, kTwo}), f32({2}, {1, 2})}, 14,
                   "Add: inputs 0 and 1 have different types (float16 and float32)");
    expect_refused("MatMul", {f32({1, 1}, {1}), f16({1, 1}, {kOne})}, 13,
                   "inputs 0 and 1 have different types (float32 and float16)");
    const Tensor cond = Tensor::from_values<uint8_t>(DataType::kBool, {2}, {1, 0});
    expect_refused("Where", {cond, f16({2}, {kOne, kTwo}), f32({2}, {3, 4})}, 16,
                   "Where: inputs 1 and 2 have different types");
    expect_refused("Sum", {f32({1}, {1}), f32({1}, {2}), f16({1}, {kOne})}, 13,
                   "Sum: inputs 0 and 2 have different types");
}

TEST(OpsTypeGroups, InputsOfOneTypeStillRun) {
    const std::vector<Tensor> out =
        run_op("Add", {f16({2}, {kOne, kTwo}), f16({2}, {kOne, kOne})}, {}, 14);
    ASSERT_EQ(out[0].dtype(), DataType::kFloat16);
    EXPECT_EQ(out[0].data<uint16_t>()[0], kTwo);
    // Clip's min and max omitted: nothing to tie.
    EXPECT_EQ(run_op("Clip", {f32({2}, {-1, 5}), Tensor(), f32({}, {2})}, {}, 13)[0].numel(), 2u);
}

TEST(OpsTypeGroups, BatchNormalizationStatisticsMayDifferFromOpset15) {
    const Tensor x = f16({1, 1, 1, 2}, {kOne, kTwo});
    const Tensor one = f32({1}, {1}), zero = f32({1}, {0});
    // opset 15: X is T, scale and B T1, mean and var T2.
    EXPECT_EQ(run_op("BatchNormalization", {x, one, zero, zero, one}, {}, 15)[0].dtype(),
              DataType::kFloat16);
    // before: one T for all five.
    expect_refused("BatchNormalization", {x, one, zero, zero, one}, 14,
                   "inputs 0 and 1 have different types (float16 and float32)");
    // from 15 on, scale and B still share T1.
    expect_refused("BatchNormalization", {x, one, f16({1}, {0}), zero, one}, 15,
                   "inputs 1 and 2 have different types");
}

}  // namespace
}  // namespace pg
