// QuantizeLinear's zero point: added for integer outputs, not for float8 ones (ONNX's reference
// implementation and ONNX Runtime ignore it there; the reference added it, so a nonzero float8
// zero point gave other values than both).
#include <gtest/gtest.h>

#include <string>

#include "support/op_runner.h"
#include "tensor/tensor.h"

namespace pg {
namespace {

using test::f32;
using test::run_op;

TEST(OpsQuantize, AFloat8ZeroPointIsNotAdded) {
    // E4M3FN: 1.0 = 0x38, 2.5 = 0x42, -3.0 = 0xC4; the zero point 1.0 must change none of them.
    const Tensor zp = Tensor::from_bytes(DataType::kFloat8E4M3FN, {}, std::string("\x38", 1));
    const Tensor y =
        run_op("QuantizeLinear", {f32({3}, {1.0f, 2.5f, -3.0f}), f32({}, {1.0f}), zp}, {}, 19)
            .at(0);
    ASSERT_EQ(y.dtype(), DataType::kFloat8E4M3FN);
    EXPECT_EQ(y.bytes()[0], 0x38);
    EXPECT_EQ(y.bytes()[1], 0x42);
    EXPECT_EQ(y.bytes()[2], 0xC4);
}

TEST(OpsQuantize, AnIntegerZeroPointIsAdded) {
    const Tensor zp = Tensor::from_values<int8_t>(DataType::kInt8, {}, {5});
    const Tensor y =
        run_op("QuantizeLinear", {f32({2}, {1.0f, -2.0f}), f32({}, {1.0f}), zp}, {}, 19).at(0);
    ASSERT_EQ(y.dtype(), DataType::kInt8);
    EXPECT_EQ(y.data<int8_t>()[0], 6);
    EXPECT_EQ(y.data<int8_t>()[1], 3);
}

}  // namespace
}  // namespace pg
