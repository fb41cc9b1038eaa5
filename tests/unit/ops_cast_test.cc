// Cast / CastLike (numeric semantics, strings, float8 saturation, 4-bit packing, single rounding),
// Where and the variadic Sum / Mean / Max / Min.
#include <gtest/gtest.h>

#include <cmath>

#include "base/float16.h"
#include "base/float8.h"
#include "support/op_runner.h"

namespace pg {
namespace {

using test::f32;
using test::run_op;
using test::values_f32;

Tensor cast(const Tensor& x, DataType to, int64_t opset = 21, int saturate = -1) {
    auto a = ir::attrs(ir::Attribute::make_int("to", static_cast<int64_t>(to)));
    if (saturate >= 0) a.push_back(ir::Attribute::make_int("saturate", saturate));
    return run_op("Cast", {x}, std::move(a), opset)[0];
}

template <typename T>
std::vector<T> vals(const Tensor& t) {
    return {t.data<T>(), t.data<T>() + t.numel()};
}

TEST(OpsCast, FloatToIntegerTruncatesAndWraps) {
    Tensor x = f32({5}, {2.9f, -2.9f, -1.0f, 300.0f, 0.0f});
    EXPECT_EQ(vals<int32_t>(cast(x, DataType::kInt32)), (std::vector<int32_t>{2, -2, -1, 300, 0}));
    EXPECT_EQ(vals<uint8_t>(cast(x, DataType::kUInt8)), (std::vector<uint8_t>{2, 254, 255, 44, 0}));
    Tensor big = test::i64({2}, {300, -129});
    EXPECT_EQ(vals<int8_t>(cast(big, DataType::kInt8)), (std::vector<int8_t>{44, 127}));
}

TEST(OpsCast, ToBoolAndBack) {
    Tensor x = f32({3}, {0.0f, -0.5f, NAN});
    Tensor b = cast(x, DataType::kBool);
    EXPECT_EQ(vals<uint8_t>(b), (std::vector<uint8_t>{0, 1, 1}));
    EXPECT_EQ(values_f32(cast(b, DataType::kFloat32)), (std::vector<float>{0, 1, 1}));
}

TEST(OpsCast, StringsParseSpecialValues) {
    Tensor s = Tensor::from_strings({6}, {"1.5", "-INF", "+inf", "NaN", "1e-5", " 7 "});
    auto v = values_f32(cast(s, DataType::kFloat32));
    EXPECT_EQ(v[0], 1.5f);
    EXPECT_EQ(v[1], -INFINITY);
    EXPECT_EQ(v[2], INFINITY);
    EXPECT_TRUE(std::isnan(v[3]));
    EXPECT_EQ(v[4], 1e-5f);
    EXPECT_EQ(v[5], 7.0f);
    Tensor i = Tensor::from_strings({2}, {"9007199254740993", "100.5"});
    EXPECT_EQ(vals<int64_t>(cast(i, DataType::kInt64)),
              (std::vector<int64_t>{9007199254740993, 100}));
}

TEST(OpsCast, NumbersFormatLikeNumpy) {
    Tensor x = f32({9}, {1.0f, 0.1f, 1e-5f, 1e16f, -0.0f, 123456.7f, NAN, -INFINITY, 0.001f});
    EXPECT_EQ(cast(x, DataType::kString).strings(),
              (std::vector<std::string>{"1.0", "0.1", "1e-05", "1e+16", "-0.0", "123456.7", "nan",
                                        "-inf", "0.001"}));
    Tensor d = Tensor::from_values<double>(DataType::kFloat64, {1}, {0.1});
    EXPECT_EQ(cast(d, DataType::kString).strings()[0], "0.1");
    Tensor h = Tensor::from_values<uint16_t>(DataType::kFloat16, {1}, {float_to_half_bits(0.1f)});
    EXPECT_EQ(cast(h, DataType::kString).strings()[0], "0.1");  // shortest digits for float16
    EXPECT_EQ(cast(test::i64({1}, {-42}), DataType::kString).strings()[0], "-42");
    Tensor b = Tensor::from_values<uint8_t>(DataType::kBool, {2}, {1, 0});
    EXPECT_EQ(cast(b, DataType::kString).strings(), (std::vector<std::string>{"True", "False"}));
}

TEST(OpsCast, Float8SaturateAttribute) {
    Tensor x = f32({4}, {1000.0f, -INFINITY, 0.3f, NAN});
    EXPECT_EQ(vals<uint8_t>(cast(x, DataType::kFloat8E4M3FN, 19)),
              (std::vector<uint8_t>{0x7E, 0xFE, 0x2A, 0x7F}));
    EXPECT_EQ(vals<uint8_t>(cast(x, DataType::kFloat8E4M3FN, 19, 0)),
              (std::vector<uint8_t>{0x7F, 0xFF, 0x2A, 0x7F}));
    EXPECT_EQ(vals<uint8_t>(cast(x, DataType::kFloat8E5M2, 19, 0))[0], 0x64);  // 1000 -> 1024
    EXPECT_EQ(vals<uint8_t>(cast(f32({1}, {1e6f}), DataType::kFloat8E5M2, 19, 0))[0], 0x7C);  // inf
    Tensor f8 = Tensor::from_values<uint8_t>(DataType::kFloat8E5M2FNUZ, {2}, {0x80, 0x7F});
    auto back = values_f32(cast(f8, DataType::kFloat32, 19));
    EXPECT_TRUE(std::isnan(back[0]));
    EXPECT_EQ(back[1], 57344.0f);
}

// Floats round half to even before the low bits are kept (ONNX Runtime does; this build
// truncated, 2.6 -> 2, until the ONNX Runtime differential suite's random inputs showed it).
// Out-of-range values wrap, as ONNX 1.22's test_cast_FLOAT_to_INT4 expects.
TEST(OpsCast, Int4RoundsToEvenAndWraps) {
    Tensor x = f32({3}, {-9, 7, 8});
    Tensor i4 = cast(x, DataType::kInt4);
    ASSERT_EQ(i4.nbytes(), 2u);
    EXPECT_EQ(i4.bytes()[0], 0x77);  // -9 wraps to 7; 7
    EXPECT_EQ(i4.bytes()[1], 0x08);  // 8 wraps to -8
    EXPECT_EQ(vals<int8_t>(cast(i4, DataType::kInt8)), (std::vector<int8_t>{7, 7, -8}));
    Tensor u4 = cast(test::i64({2}, {15, 16}), DataType::kUInt4);
    EXPECT_EQ(vals<uint8_t>(cast(u4, DataType::kUInt8)), (std::vector<uint8_t>{15, 0}));
    Tensor r = f32({6}, {2.5f, 3.5f, -2.6f, 0.4f, NAN, -0.5f});
    EXPECT_EQ(vals<int8_t>(cast(cast(r, DataType::kInt4), DataType::kInt8)),
              (std::vector<int8_t>{2, 4, -3, 0, 0, 0}));
    EXPECT_EQ(vals<uint8_t>(cast(cast(r, DataType::kUInt4), DataType::kUInt8)),
              (std::vector<uint8_t>{2, 4, 13, 0, 0, 0}));
    EXPECT_EQ(vals<int8_t>(cast(cast(r, DataType::kInt2), DataType::kInt8)),
              (std::vector<int8_t>{-2, 0, 1, 0, 0, 0}));
    // Integers keep their low bits exactly: 2^53 + 1 would round to 2^53 through double.
    Tensor big = test::i64({1}, {(int64_t{1} << 53) + 1});
    EXPECT_EQ(vals<uint8_t>(cast(cast(big, DataType::kUInt4), DataType::kUInt8)),
              (std::vector<uint8_t>{1}));
}

TEST(OpsCast, DoubleToHalfRoundsOnce) {
    // 1 + 2^-11 + 2^-40: just above the midpoint between 1 and 1 + 2^-10. Through float it would
    // land exactly on the midpoint and round to 1.
    Tensor d = Tensor::from_values<double>(DataType::kFloat64, {1},
                                           {1 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)});
    EXPECT_EQ(cast(d, DataType::kFloat16).data<uint16_t>()[0], 0x3C01);
    Tensor h = Tensor::from_values<uint16_t>(DataType::kFloat16, {2}, {0x7C00, 0x0001});
    auto f = values_f32(cast(h, DataType::kFloat32));
    EXPECT_EQ(f[0], INFINITY);
    EXPECT_EQ(f[1], std::ldexp(1.0f, -24));
}

TEST(OpsCast, CastOpset1TakesTypeName) {
    auto out =
        run_op("Cast", {f32({1}, {2.5f})}, ir::attrs(ir::Attribute::make_string("to", "INT32")), 1);
    ASSERT_EQ(out[0].dtype(), DataType::kInt32);
    EXPECT_EQ(out[0].data<int32_t>()[0], 2);
}

TEST(OpsCast, CastLikeTakesTheSecondInputsType) {
    Tensor like = Tensor::from_values<double>(DataType::kFloat64, {0}, {});
    auto out = run_op("CastLike", {f32({1}, {0.5f}), like}, {}, 15);
    ASSERT_EQ(out[0].dtype(), DataType::kFloat64);
    EXPECT_EQ(out[0].data<double>()[0], 0.5);
}

TEST(OpsSelect, WhereBroadcastsThreeInputs) {
    Tensor c = Tensor::from_values<uint8_t>(DataType::kBool, {2, 1}, {1, 0});
    auto out = run_op("Where", {c, f32({3}, {1, 2, 3}), f32({}, {-1})}, {}, 16);
    EXPECT_EQ(out[0].dims(), (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(values_f32(out[0]), (std::vector<float>{1, 2, 3, -1, -1, -1}));
    Tensor s =
        run_op("Where", {c, Tensor::from_strings({1}, {"a"}), Tensor::from_strings({1}, {"b"})}, {},
               16)[0];
    EXPECT_EQ(s.strings(), (std::vector<std::string>{"a", "b"}));
}

TEST(OpsSelect, VariadicOpsBroadcastAllInputs) {
    Tensor a = f32({2, 1}, {1, 2}), b = f32({3}, {10, 20, 30}), c = f32({}, {100});
    EXPECT_EQ(values_f32(run_op("Sum", {a, b, c}, {}, 13)[0]),
              (std::vector<float>{111, 121, 131, 112, 122, 132}));
    EXPECT_EQ(values_f32(run_op("Mean", {f32({2}, {1, 2}), f32({2}, {3, 6})}, {}, 13)[0]),
              (std::vector<float>{2, 4}));
    EXPECT_EQ(values_f32(run_op("Max", {a, b}, {}, 13)[0]),
              (std::vector<float>{10, 20, 30, 10, 20, 30}));
    EXPECT_EQ(values_f32(run_op("Min", {f32({1}, {5})}, {}, 13)[0]), (std::vector<float>{5}));
}

TEST(OpsSelect, MaxMinPropagateNaN) {
    auto mx = values_f32(run_op("Max", {f32({2}, {NAN, 1}), f32({2}, {1, NAN})}, {}, 13)[0]);
    EXPECT_TRUE(std::isnan(mx[0]) && std::isnan(mx[1]));
    auto mn = values_f32(run_op("Min", {f32({2}, {NAN, 1}), f32({2}, {1, NAN})}, {}, 13)[0]);
    EXPECT_TRUE(std::isnan(mn[0]) && std::isnan(mn[1]));
}

TEST(OpsSelect, Float16SumRoundsToHalf) {
    auto h = [](float v) { return float_to_half_bits(v); };
    Tensor a = Tensor::from_values<uint16_t>(DataType::kFloat16, {1}, {h(60000)});
    auto out = run_op("Sum", {a, a}, {}, 13);
    ASSERT_EQ(out[0].dtype(), DataType::kFloat16);
    EXPECT_EQ(out[0].data<uint16_t>()[0], 0x7C00);
}

}  // namespace
}  // namespace pg
