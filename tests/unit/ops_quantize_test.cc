// QuantizeLinear's zero point: added for integer outputs, not for float8 ones (ONNX's reference
// implementation and ONNX Runtime ignore it there; the reference added it, so a nonzero float8
// zero point gave other values than both).
#include <gtest/gtest.h>

#include <string>

#include "base/error.h"
#include "base/float16.h"
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

// QuantizeLinear-23's precision: x and the scale are rounded to it, and so is their quotient.
TEST(OpsQuantize, PrecisionIsTheDivisionsType) {
    const Tensor zp = Tensor::from_values<uint16_t>(DataType::kUInt16, {}, {0});
    const auto quantize = [&](int64_t opset, std::vector<ir::Attribute> attrs) {
        return run_op("QuantizeLinear", {f32({1}, {2049.0f}), f32({}, {1.0f}), zp},
                      std::move(attrs), opset)
            .at(0)
            .data<uint16_t>()[0];
    };
    EXPECT_EQ(quantize(23, {}), 2049);
    // float16 holds 2048 and 2050; 2049 ties to the even 2048.
    EXPECT_EQ(quantize(23, ir::attrs(ir::Attribute::make_int("precision", 10))), 2048);
    // Opset 21 has no precision: ignored.
    EXPECT_EQ(quantize(21, ir::attrs(ir::Attribute::make_int("precision", 10))), 2049);
    EXPECT_THROW(quantize(23, ir::attrs(ir::Attribute::make_int("precision", 6))), Error);
}

// DequantizeLinear-23's output_dtype: the output's type and the multiplication's (the float32
// scale is rounded to float16 before it multiplies).
TEST(OpsQuantize, OutputDtypeIsTheProductsType) {
    const Tensor x = Tensor::from_values<int8_t>(DataType::kInt8, {1}, {3});
    // 1 + 2^-11 + 2^-20 rounds up to float16's 1 + 2^-10.
    const Tensor scale = f32({}, {1.0f + 0x1p-11f + 0x1p-20f});
    const Tensor y = run_op("DequantizeLinear", {x, scale},
                            ir::attrs(ir::Attribute::make_int("output_dtype", 10)), 23)
                         .at(0);
    ASSERT_EQ(y.dtype(), DataType::kFloat16);
    // 3 x (1 + 2^-10) = 3.0029296875 ties to 3.00390625; 3 x the float32 scale would give
    // 3.001953125.
    EXPECT_EQ(half_bits_to_float(y.data<uint16_t>()[0]), 3.00390625f);
    const Tensor plain = run_op("DequantizeLinear", {x, scale}, {}, 23).at(0);
    ASSERT_EQ(plain.dtype(), DataType::kFloat32);
    EXPECT_EQ(plain.data<float>()[0], 3.0f * (1.0f + 0x1p-11f + 0x1p-20f));
}

}  // namespace
}  // namespace pg
