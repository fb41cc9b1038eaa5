// Tensor::element_as_double on the small storage types: float8 and float4 formats decoded
// exactly, packed 4- and 2-bit integers (low bits first, signed ones sign-extended), E8M0 powers
// of two. They read as NaN before, so comparisons and statistics of FP8 outputs were all NaN.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "tensor/tensor.h"

namespace pg {
namespace {

Tensor bytes_tensor(DataType dt, std::vector<int64_t> dims, std::string bytes) {
    return Tensor::from_bytes(dt, std::move(dims), std::move(bytes));
}

TEST(TensorElements, Float8FormatsDecode) {
    // E4M3FN: 0x38 = 1.0, 0xC0 = -2.0, 0x7F = NaN. E5M2: 0x3C = 1.0, 0x7C = inf.
    const Tensor e4 = bytes_tensor(DataType::kFloat8E4M3FN, {3}, std::string("\x38\xC0\x7F", 3));
    EXPECT_EQ(e4.element_as_double(0), 1.0);
    EXPECT_EQ(e4.element_as_double(1), -2.0);
    EXPECT_TRUE(std::isnan(e4.element_as_double(2)));
    const Tensor e5 = bytes_tensor(DataType::kFloat8E5M2, {2}, std::string("\x3C\x7C", 2));
    EXPECT_EQ(e5.element_as_double(0), 1.0);
    EXPECT_TRUE(std::isinf(e5.element_as_double(1)));
    const Tensor uz = bytes_tensor(DataType::kFloat8E4M3FNUZ, {1}, std::string("\x40", 1));
    EXPECT_EQ(uz.element_as_double(0), 1.0);  // bias 8
    const Tensor m0 = bytes_tensor(DataType::kFloat8E8M0, {2}, std::string("\x7F\x80", 2));
    EXPECT_EQ(m0.element_as_double(0), 1.0);
    EXPECT_EQ(m0.element_as_double(1), 2.0);
}

TEST(TensorElements, PackedFourAndTwoBitTypesDecode) {
    // Nibbles low first: 0x2F holds 15 then 2; as INT4, -1 then 2.
    const Tensor u4 = bytes_tensor(DataType::kUInt4, {3}, std::string("\x2F\x07", 2));
    EXPECT_EQ(u4.element_as_double(0), 15.0);
    EXPECT_EQ(u4.element_as_double(1), 2.0);
    EXPECT_EQ(u4.element_as_double(2), 7.0);
    const Tensor i4 = bytes_tensor(DataType::kInt4, {2}, std::string("\x8F", 1));
    EXPECT_EQ(i4.element_as_double(0), -1.0);
    EXPECT_EQ(i4.element_as_double(1), -8.0);
    // FLOAT4E2M1: 0x2 = 1.0, 0xF = -6.0.
    const Tensor f4 = bytes_tensor(DataType::kFloat4E2M1, {2}, std::string("\xF2", 1));
    EXPECT_EQ(f4.element_as_double(0), 1.0);
    EXPECT_EQ(f4.element_as_double(1), -6.0);
    // Two-bit fields low first: 0b11'10'01'00 = 0, 1, 2, 3 (INT2: 0, 1, -2, -1).
    const Tensor u2 = bytes_tensor(DataType::kUInt2, {4}, std::string("\xE4", 1));
    const Tensor i2 = bytes_tensor(DataType::kInt2, {4}, std::string("\xE4", 1));
    for (int k = 0; k < 4; ++k) {
        EXPECT_EQ(u2.element_as_double(static_cast<uint64_t>(k)), k);
        EXPECT_EQ(i2.element_as_double(static_cast<uint64_t>(k)), k < 2 ? k : k - 4);
    }
}

TEST(TensorElements, StringsAndOutOfRangeAreNaN) {
    const Tensor s = Tensor::from_strings({1}, {"a"});
    EXPECT_TRUE(std::isnan(s.element_as_double(0)));
    const Tensor e4 = bytes_tensor(DataType::kFloat8E4M3FN, {1}, std::string("\x38", 1));
    EXPECT_TRUE(std::isnan(e4.element_as_double(1)));
}

}  // namespace
}  // namespace pg
